package config

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/types"
)

// Every name Gatewall generates in a configuration — upstreams, shared
// memory zones, variables, unix sockets, files — comes from one function,
// nameOf, called through a configuration's registry (names.of), so that two
// different things never share a name: a shared name sends one team's
// traffic to another team's backend, or fails the configuration of every
// team ("duplicate upstream").
//
// A name is a kind's prefix, a body, and the kind's suffix. Two rules make
// names collision-free:
//
//   - Between kinds, by construction: no kind's prefix, and none of
//     Gatewall's own fixed names (ownNames), is a prefix of another, so a
//     name of one kind can never be written as a name of another kind
//     (TestNamePrefixesAreDisjoint). Gatewall's own names (the sinks'
//     upstreams, its fixed variables) are therefore out of reach of any
//     Service, namespace or route name.
//   - Within a kind: the body is an injective encoding of the parts when
//     they allow one (readable: each part a non-empty run of the letters of
//     DNS names, joined by "_", which no part contains), short enough for
//     where the name goes (file names have 255 bytes). Otherwise the body is
//     a digest of the parts: 12 hex digits of SHA-256, checked against
//     every name the configuration has issued; when taken by other parts
//     (the birthday bound of 48 bits is within anyone's reach: the FNV
//     names this replaced were found to collide in a minute's search), the
//     whole digest, and past that a counter. Digest bodies of kinds that
//     also have readable ones start with "_", which readable bodies never
//     do.
//
// The registry makes the check; names that must be known outside one
// configuration (the route include files policies write, their rate-limit
// zones) use nameOf alone, with the whole digest when they cannot be
// readable.

// nameKind is one kind of generated name.
type nameKind struct {
	prefix, suffix string
	// readable is the longest body written as its parts; 0: the body is
	// always a digest.
	readable int
}

// File names (the last element of a path) have at most this many bytes.
const maxFileName = 255

// The kinds of generated names.
var (
	// Upstreams of Service ports, and their shared memory zones.
	kindUpstream = nameKind{prefix: "svc_", readable: 1 << 10}
	// Upstreams of Service ports in the stream context (TLSRoutes).
	kindStreamUpstream = nameKind{prefix: "tls_", readable: 1 << 10}
	// Upstreams of Service ports of TCPRoutes and UDPRoutes.
	kindL4Upstream = nameKind{prefix: "l4_", readable: 1 << 10}
	// Zones of RateLimitPolicies' rules.
	kindRateLimitZone = nameKind{prefix: "rl_", readable: 1 << 10}
	// Listeners' certificate files, by Secret.
	kindCertFile = nameKind{prefix: SecretsDir + "cert_", suffix: ".pem", readable: maxFileName - len("cert_.pem")}
	// CA bundles, by content: clients' and backends'.
	kindClientCAFile  = nameKind{prefix: SecretsDir + "client_ca_", suffix: ".pem"}
	kindBackendCAFile = nameKind{prefix: SecretsDir + "backend_ca_", suffix: ".pem"}
	// Sockets of the stream servers passing TLS connections to TLSRoutes' backends.
	kindTLSPassSocket = nameKind{prefix: "unix:" + RunDir + "tlspass-", suffix: ".sock"}
	// Variables of maps and splits, by content.
	kindConditionVar  = nameKind{prefix: "$gw_c_"}
	kindDispatchVar   = nameKind{prefix: "$gw_l_"}
	kindSplitVar      = nameKind{prefix: "$gw_split_"}
	kindMirrorVar     = nameKind{prefix: "$gw_mirror_"}
	kindRewriteVar    = nameKind{prefix: "$gw_rp_"}
	kindAddHeaderVar  = nameKind{prefix: "$gw_add_"}
	kindBackendIdxVar = nameKind{prefix: "$gw_bidx_"}
	kindBackendUpVar  = nameKind{prefix: "$gw_bsplit_"}
	kindBackendHdrVar = nameKind{prefix: "$gw_bh_"}
	kindCORSOrigin    = nameKind{prefix: "$gw_cors_o_"}
	kindCORSPreflight = nameKind{prefix: "$gw_cors_pf_"}
	kindCORSCreds     = nameKind{prefix: "$gw_cors_c_"}
	kindCORSExpose    = nameKind{prefix: "$gw_cors_e_"}
	kindTLSSplitVar   = nameKind{prefix: "$gw_tls_split_"}
	kindL4SplitVar    = nameKind{prefix: "$gw_l4_split_"}
	// Files of users of Basic authentication, by Secret.
	kindUsersFile = nameKind{prefix: SecretsDir + "htpasswd_", readable: maxFileName - len("htpasswd_")}
	// Include files of snippets, by object and context (snippets.go).
	kindSnippetFile = nameKind{prefix: IncludesDir + "snippets/", suffix: ".conf", readable: maxFileName - len(".conf")}
	// Shared memory zones snippets declare, by object and the snippet's name.
	kindSnippetZone = nameKind{prefix: "sn_", readable: 1 << 10}
	// Internal locations of authorization subrequests, by what they send.
	kindExternalAuthPath = nameKind{prefix: InternalPrefix + "auth/"}
	// Variables of the headers an authorization service's answer gives, by header.
	kindAuthHeaderVar = nameKind{prefix: "$gw_ea_"}
	// Variables of the checks of a listener's TLS protocols and groups
	// after the handshake (handshake.go), by content.
	kindTLSVersionVar = nameKind{prefix: "$gw_tlsver_"}
	kindTLSGroupVar   = nameKind{prefix: "$gw_tlsgroup_"}
	// Shared memory zones of TLS session caches: a port's, or a TLS
	// listener's in mode Terminate.
	kindSessionZone = nameKind{prefix: "sslsess_", readable: 1 << 10}
	// Variables of the claims a JWT filter forwards, by filter and claim.
	kindJWTClaimVar = nameKind{prefix: "$gw_jwt_"}
	// Variables of a port's maps, by port.
	kindSNIListenerVar = nameKind{prefix: "$gw_sni_listener_", readable: 5}
	kindTLSPortVar     = nameKind{prefix: "$gw_tlsport_", readable: 5}
)

// UpstreamName is the name of a Service port's upstream, as a
// configuration gives it to the port of a valid Service (readable: a
// registry gives the same).
func UpstreamName(svc types.NamespacedName, port int32) string {
	return nameOf(kindUpstream, svc.Namespace, svc.Name, strconv.Itoa(int(port)))
}

// RateLimitZone names the shared memory zone of a RateLimitPolicy's rule.
func RateLimitZone(policy types.NamespacedName, rule int) string {
	return nameOf(kindRateLimitZone, policy.Namespace, policy.Name, strconv.Itoa(rule))
}

// nameKinds lists every kind, for the test of their prefixes.
var nameKinds = []nameKind{
	kindUpstream, kindStreamUpstream, kindRateLimitZone, kindCertFile, kindClientCAFile, kindBackendCAFile,
	kindTLSPassSocket, kindConditionVar, kindDispatchVar, kindSplitVar, kindMirrorVar, kindRewriteVar,
	kindAddHeaderVar, kindBackendIdxVar, kindBackendUpVar, kindBackendHdrVar, kindCORSOrigin, kindCORSPreflight,
	kindCORSCreds, kindCORSExpose, kindTLSSplitVar, kindSNIListenerVar, kindTLSPortVar,
	kindUsersFile, kindExternalAuthPath, kindAuthHeaderVar, kindSnippetFile, kindSnippetZone,
	kindTLSVersionVar, kindTLSGroupVar, kindSessionZone, kindJWTClaimVar,
}

// ownNames are Gatewall's own fixed names, and the fixed starts of the
// families of them (the sinks', a port's sockets), in every space: no
// kind's prefix starts one of them, nor does one start a kind's prefix.
var ownNames = []string{
	"gatewall_sink_", l4Zone, "unix:" + RunDir + "sink-", "unix:" + RunDir + "port-", tlsRejectSocket(), StatusSocket, EndpointsSocket,
	"$gw_host", "$gw_connection", "$gw_server_port", "$gw_orig_uri", "$gw_request_path", "$gw_path", "$gw_rest",
	"$gw_proto", "$gw_cors_preflight", "$gw_hash_", "$gw_loop_in", "$gw_loop_out", externalAuthBodyVar,
	JWTPoliciesFile,
}

// shortDigest is the length of a digest body, in hex digits.
const shortDigest = 12

// identity encodes a kind and parts injectively (each part's length, then
// the part), for the registry and the digests.
func identity(k nameKind, parts []string) string {
	var b strings.Builder
	b.WriteString(k.prefix)
	for _, p := range parts {
		b.WriteByte('|')
		b.WriteString(strconv.Itoa(len(p)))
		b.WriteByte(':')
		b.WriteString(p)
	}
	return b.String()
}

// digest is the SHA-256 of an identity in hex.
func digest(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:])
}

// nameOf is the name of parts of kind k outside a registry: readable when
// it can be, else with the whole digest (collision-resistant without a
// check).
func nameOf(k nameKind, parts ...string) string {
	if body, ok := k.readableBody(parts); ok {
		return k.prefix + body + k.suffix
	}
	return k.digestName(digest(identity(k, parts)))
}

// readableBody is the parts joined by "_", when each is a non-empty run of
// [a-z0-9.-] and the body fits the kind.
func (k nameKind) readableBody(parts []string) (string, bool) {
	if k.readable == 0 || len(parts) == 0 {
		return "", false
	}
	for _, p := range parts {
		if p == "" || strings.IndexFunc(p, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '.' || r == '-')
		}) >= 0 {
			return "", false
		}
	}
	body := strings.Join(parts, "_")
	return body, len(body) <= k.readable
}

// digestName is a name whose body is a digest (marked with "_" when the
// kind also has readable bodies).
func (k nameKind) digestName(d string) string {
	if k.readable > 0 {
		d = "_" + d
	}
	return k.prefix + d + k.suffix
}

// names is the registry of the names one configuration has issued.
type names struct {
	byIdentity map[string]string
	taken      map[string]bool
	// short is the digest body of an identity before any collision; tests
	// give a weaker one to force collisions.
	short func(identity string) string
}

func newNames() *names {
	return &names{byIdentity: map[string]string{}, taken: map[string]bool{}, short: func(id string) string { return digest(id)[:shortDigest] }}
}

// of returns the name of parts of kind k: the same parts always get the
// same name, and different parts never do.
func (n *names) of(k nameKind, parts ...string) string {
	id := identity(k, parts)
	if name, ok := n.byIdentity[id]; ok {
		return name
	}
	name, readable := "", false
	if body, ok := k.readableBody(parts); ok {
		name, readable = k.prefix+body+k.suffix, true
	} else {
		name = k.digestName(n.short(id))
	}
	if !readable {
		// Readable names are injective; a digest may be another's.
		full := digest(id)
		for i := 0; n.taken[name]; i++ {
			name = k.digestName(full)
			if i > 0 {
				name = k.digestName(full + "_" + strconv.Itoa(i))
			}
		}
	}
	n.byIdentity[id], n.taken[name] = name, true
	return name
}
