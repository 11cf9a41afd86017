package endpoints

import (
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"slices"
)

// Update takes a data plane from one set of endpoints to another. It is the
// JSON the manager streams to a pod and the pod's client hands to NGINX's
// Lua (nginx/config/lua/gatewall/endpoints.lua reads these field names).
type Update struct {
	// Version orders a Gateway's sets within one manager's life.
	Version uint64 `json:"version"`
	// Full replaces every upstream: upstreams not in Set are removed.
	Full bool `json:"full,omitempty"`
	// Set are the upstreams that are new or changed (all of them when Full).
	Set Set `json:"set,omitempty"`
	// Deleted are the IDs of the upstreams that are gone (never when Full).
	Deleted []string `json:"deleted,omitempty"`
	// Resolver is how the data plane resolves the upstreams' names: the
	// manager sends it with every update (a client of a manager that
	// sends none asks the pod's own resolver). NGINX is never sent it.
	Resolver *Resolver `json:"resolver,omitempty"`
	// KeySources, when set, are all the Gateway's remote key sets, which
	// the data plane fetches (keysources.go): the manager sends them with
	// the first update of a stream and when they change; unset, they are
	// as before. NGINX is never sent them (it gets the sets fetched).
	KeySources *KeySources `json:"keySources,omitempty"`
}

// Diff returns the update that takes a data plane holding from to to: only
// what differs, in the order of IDs.
func Diff(from, to Set, version uint64) Update {
	u := Update{Version: version, Set: Set{}}
	for id, up := range to {
		if have, ok := from[id]; !ok || !have.equal(up) {
			u.Set[id] = up
		}
	}
	for _, id := range from.IDs() {
		if _, ok := to[id]; !ok {
			u.Deleted = append(u.Deleted, id)
		}
	}
	return u
}

// Snapshot returns the full update that replaces whatever a data plane
// holds with set.
func Snapshot(set Set, version uint64) Update {
	return Update{Version: version, Full: true, Set: set}
}

// Empty says whether an update changes nothing.
func (u Update) Empty() bool { return !u.Full && len(u.Set) == 0 && len(u.Deleted) == 0 }

// Apply returns the set a data plane holds after applying u to s; s is not
// modified.
func (s Set) Apply(u Update) Set {
	out := Set{}
	if !u.Full {
		for id, up := range s {
			out[id] = up
		}
	}
	for id, up := range u.Set {
		out[id] = up
	}
	for _, id := range u.Deleted {
		delete(out, id)
	}
	return out
}

// ForNGINX is the update as NGINX takes it: without the upstreams' names,
// which NGINX does not use, so that its size is bounded by the endpoints
// (MaxUpdateBytes) and not by how long the names are; without DNS names
// and the resolver, which the endpoints client resolves: NGINX gets
// addresses only; and without the key sources, whose sets the client
// hands NGINX apart.
func (u Update) ForNGINX() Update {
	out := u
	out.Resolver, out.KeySources = nil, nil
	out.Set = make(Set, len(u.Set))
	for id, up := range u.Set {
		out.Set[id] = Upstream{Endpoints: up.Endpoints}
	}
	return out
}

// Without is the update without the upstreams refused: they are neither
// set nor deleted.
func (u Update) Without(refused map[string]string) Update {
	if len(refused) == 0 {
		return u
	}
	out := u
	out.Set = Set{}
	for id, up := range u.Set {
		if _, ok := refused[id]; !ok {
			out.Set[id] = up
		}
	}
	return out
}

// Ack is a pod's answer to an update: applied, or why not.
type Ack struct {
	Version uint64 `json:"version"`
	// Error says why the pod could not apply the update ("" when it did).
	Error string `json:"error,omitempty"`
	// Refused are the upstreams of an update the pod applied that it could
	// not apply, by ID, with why: they keep the endpoints they had.
	Refused map[string]string `json:"refused,omitempty"`
	// Unresolved are the upstreams some of whose names the pod cannot
	// resolve (or resolve only to addresses Address refuses), by ID, with
	// why: the names' answers are missing from their endpoints (kept a
	// while when they had some: StaleFor). Every Ack of a client that
	// resolves names carries the whole map; as resolution changes, the
	// client sends the version it last acknowledged again (a report)
	// with the new map. A manager that knows nothing of names ignores the
	// field, and logs a report as an acknowledgement of a version it did
	// not send.
	Unresolved map[string]string `json:"unresolved,omitempty"`
	// KeySets are the remote key sets (KeySources) whose last fetch
	// failed, by ID, with why: carried as Unresolved is (every Ack, and a
	// report when it changes).
	KeySets map[string]string `json:"keySets,omitempty"`
}

// Validate checks what NGINX's Lua checks again (endpoints.lua), and
// refuses what it would refuse of any upstream (Check).
func (u Update) Validate() error {
	refused, err := u.Check()
	if err != nil {
		return err
	}
	if ids := sortedKeys(refused); len(ids) > 0 {
		return fmt.Errorf("upstream %s (%s): %s", ids[0], u.Set[ids[0]].Name, refused[ids[0]])
	}
	return nil
}

// Check checks an update as NGINX's Lua does (endpoints.lua): an error
// when its form is wrong (IDs of other than 32 hex digits, a full update
// that deletes, a resolver that is not one, key sources that cannot be
// fetched), which refuses it whole; and
// the upstreams refused alone, by ID, with why: more than
// MaxEndpointsPerUpstream endpoints (each name counting as
// MaxAnswersPerName), an endpoint that is not an IPv4 address or a
// bracketed IPv6 one (not IPv4-mapped) with a port, or whose address
// Address refuses, or a name that is not a DNS name with a port.
func (u Update) Check() (map[string]string, error) {
	if u.Full && len(u.Deleted) > 0 {
		return nil, errors.New("a full update deletes nothing")
	}
	if u.Resolver != nil {
		if err := u.Resolver.Check(); err != nil {
			return nil, err
		}
	}
	if u.KeySources != nil {
		if err := u.KeySources.Check(); err != nil {
			return nil, err
		}
	}
	for _, id := range u.Deleted {
		if !validID(id) {
			return nil, fmt.Errorf("invalid deleted upstream ID %q", id)
		}
	}
	refused := map[string]string{}
	for _, id := range u.Set.IDs() {
		if !validID(id) {
			return nil, fmt.Errorf("invalid upstream ID %q", id)
		}
		eps, names := u.Set[id].Endpoints, u.Set[id].Names
		if n := len(eps) + len(names)*MaxAnswersPerName; n > MaxEndpointsPerUpstream {
			refused[id] = fmt.Sprintf("%d endpoints (each of its %d names counting %d), over the %d an upstream may have",
				n, len(names), MaxAnswersPerName, MaxEndpointsPerUpstream)
			continue
		}
		for _, ep := range eps {
			if err := validEndpoint(ep); err != nil {
				refused[id] = err.Error()
				break
			}
		}
		for _, n := range names {
			if _, _, err := SplitName(n); err != nil && refused[id] == "" {
				refused[id] = fmt.Sprintf("name endpoint %q: %v", n, err)
			}
		}
	}
	return refused, nil
}

func sortedKeys(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }

// IDLength is the length of an upstream's ID: 32 hex digits, 128 bits.
const IDLength = 32

func validID(id string) bool {
	if len(id) != IDLength {
		return false
	}
	for _, c := range id {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// validEndpoint accepts "a.b.c.d:port" and "[ipv6]:port".
func validEndpoint(ep string) error {
	ap, err := netip.ParseAddrPort(ep)
	switch {
	case err != nil:
		return fmt.Errorf("endpoint %q: %w", ep, err)
	case ap.Port() == 0:
		return fmt.Errorf("endpoint %q: no port", ep)
	case ap.Addr().Zone() != "":
		return fmt.Errorf("endpoint %q: not a plain IPv4 or IPv6 address", ep)
	case ap.Addr().Is4In6():
		// The manager writes them unmapped, as the IPv4 address they are,
		// so that no check reads one as another address.
		return fmt.Errorf("endpoint %q: an IPv4-mapped IPv6 address; write it as IPv4", ep)
	case ap.String() != ep:
		return fmt.Errorf("endpoint %q: not in canonical form (%s)", ep, ap)
	}
	if _, err := Address(ap.Addr()); err != nil {
		return fmt.Errorf("endpoint %q: %w", ep, err)
	}
	return nil
}
