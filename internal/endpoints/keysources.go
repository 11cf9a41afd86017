package endpoints

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"time"
)

// Remote key sets. An AuthenticationFilter of type JWT with source Remote
// names a JSON Web Key Set's https URL: the manager sends it (a
// KeySource) with a Gateway's endpoints, and each data-plane pod's
// endpoints client fetches the set in the background, checks it as the
// manager checks a Secret's (package jwks) and hands it to NGINX's shared
// dict, where gatewall/jwt.lua verifies tokens with it. No request ever
// fetches a key set; until a pod has one, the filter's requests are
// answered 503.
const (
	// MaxKeySources bounds the remote key sets of a Gateway: each is
	// fetched by every pod, and held in NGINX's dict (jwks.MaxSetBytes
	// each).
	MaxKeySources = 64
	// DefaultKeyRefresh is how often a set is fetched again when its
	// filter sets no keyCache: NGINX Plus without a key cache fetches the
	// set for every request, which Gatewall never does.
	DefaultKeyRefresh = time.Minute
	// A filter's keyCache is taken within these bounds: a set is not
	// fetched many times a second, nor kept a day unchecked.
	MinKeyRefresh = 5 * time.Second
	MaxKeyRefresh = 24 * time.Hour
	// MaxKeySourceCA bounds the CA bundle of a source.
	MaxKeySourceCA = 64 << 10
	// KeyFetchTimeout bounds one fetch: connecting, TLS, the answer.
	KeyFetchTimeout = 10 * time.Second
)

// KeySource is a remote key set the data plane fetches.
type KeySource struct {
	// URI is the set's https URL.
	URI string `json:"uri"`
	// CA is the PEM bundle of the CAs that verify the set's server (the
	// filter's caCertificateRefs, checked); "" trusts the pod's system
	// store.
	CA string `json:"ca,omitempty"`
	// RefreshMillis is how often the set is fetched again.
	RefreshMillis int64 `json:"refreshMillis"`
}

// ID names the source in NGINX's dict and in the configuration: the SHA-256
// of its URI and CA, 32 hex digits. Two filters asking for the same set
// through the same CAs share it; an ID means one source in every
// configuration, so that a reload keeps a set NGINX holds.
func (k KeySource) ID() string {
	sum := sha256.Sum256([]byte(fmt.Sprintf("%d:%s|%d:%s", len(k.URI), k.URI, len(k.CA), k.CA)))
	return hex.EncodeToString(sum[:])[:IDLength]
}

// Refresh is how often the set is fetched again, within the bounds.
func (k KeySource) Refresh() time.Duration {
	d := time.Duration(k.RefreshMillis) * time.Millisecond
	if k.RefreshMillis <= 0 {
		d = DefaultKeyRefresh
	}
	return min(max(d, MinKeyRefresh), MaxKeyRefresh)
}

// Check says why a source cannot be fetched: its URL must be https, with a
// host, and no user information; its CA bounded.
func (k KeySource) Check() error {
	u, err := url.Parse(k.URI)
	switch {
	case err != nil:
		return fmt.Errorf("key set URL: %w", err)
	case u.Scheme != "https" || u.Host == "" || u.User != nil || u.Opaque != "":
		return fmt.Errorf("key set URL %q is not an https URL of a host", k.URI)
	case len(k.CA) > MaxKeySourceCA:
		return fmt.Errorf("the CA bundle of %s is %d bytes, over %d", k.URI, len(k.CA), MaxKeySourceCA)
	}
	return nil
}

// KeySources are a Gateway's remote key sets, by ID.
type KeySources map[string]KeySource

// Check says why a Gateway's sources cannot be used: too many, an ID that
// is not its source's, a source that cannot be fetched.
func (s KeySources) Check() error {
	if len(s) > MaxKeySources {
		return fmt.Errorf("%d key sets, over the %d a Gateway may have", len(s), MaxKeySources)
	}
	for _, id := range slices.Sorted(maps.Keys(s)) {
		if s[id].ID() != id {
			return fmt.Errorf("key set %q is not named by its ID", id)
		}
		if err := s[id].Check(); err != nil {
			return err
		}
	}
	return nil
}

// Hash tells sources apart ("" for none).
func (s KeySources) Hash() string {
	if len(s) == 0 {
		return ""
	}
	data, err := json.Marshal(s)
	if err != nil {
		panic("endpoints: key sources do not encode: " + err.Error())
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:8])
}
