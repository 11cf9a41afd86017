package endpoints

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"slices"
)

// Upstream is one dynamic upstream's endpoints.
type Upstream struct {
	// Name is the upstream's name in the configuration, for people
	// reading logs; the data plane goes by the ID.
	Name string `json:"name,omitempty"`
	// Endpoints are "address:port" (IPv6 addresses in brackets), sorted.
	Endpoints []string `json:"endpoints"`
	// Names are DNS names with a port ("name:port", JoinName), sorted,
	// which the data plane resolves: their answers are endpoints of the
	// upstream too (names.go). NGINX is never sent them.
	Names []string `json:"names,omitempty"`
}

// MarshalJSON writes the endpoints as a list, also when there are none
// (the data plane reads null as no list).
func (u Upstream) MarshalJSON() ([]byte, error) {
	type plain Upstream
	if u.Endpoints == nil {
		u.Endpoints = []string{}
	}
	return json.Marshal(plain(u))
}

func (u Upstream) equal(o Upstream) bool {
	return u.Name == o.Name && slices.Equal(u.Endpoints, o.Endpoints) && slices.Equal(u.Names, o.Names)
}

// Set is the dynamic upstreams of one Gateway's configuration, by ID.
type Set map[string]Upstream

// IDs returns the set's IDs, sorted.
func (s Set) IDs() []string { return slices.Sorted(maps.Keys(s)) }

// Hash is a digest of the set's content: equal sets have equal hashes,
// and different ones different hashes (it hashes the JSON encoding, which
// sorts the IDs and quotes every string).
func (s Set) Hash() string {
	data, err := json.Marshal(s)
	if err != nil {
		panic("endpoints: a set of strings does not encode: " + err.Error())
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:8])
}

// NameCount is the number of names of every upstream together.
func (s Set) NameCount() int {
	n := 0
	for _, u := range s {
		n += len(u.Names)
	}
	return n
}

// Count is the number of endpoints of every upstream together.
func (s Set) Count() int {
	n := 0
	for _, u := range s {
		n += len(u.Endpoints)
	}
	return n
}
