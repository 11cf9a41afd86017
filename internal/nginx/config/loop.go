package config

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"

	"github.com/gatewall/gatewall/internal/graph"
)

// Loops. A route's backend can be the Gateway itself: a Service that
// selects the data plane's pods, an EndpointSlice naming their addresses,
// or another Gateway that passes back. NGINX would then proxy a request to
// itself, which proxies it again, until every worker's connections are
// taken and every tenant's traffic fails: one client request, no limit.
// So every request NGINX proxies carries graph.LoopHeader, the IDs of the
// Gateways it passed through (this one's appended), and a request arriving
// with this Gateway's ID in it, or after more than maxLoopHops Gateways,
// is answered 508 (Loop Detected) before anything else runs. A client that
// sends the header itself only refuses its own request.

// maxLoopHops bounds the Gateways a request may pass through: the header
// holds a 16-digit ID and a comma per Gateway.
const maxLoopHops = 16

// loopStatus answers a request that went round.
const loopStatus = 508

// LoopID is a Gateway's ID in the loop header: from its UID, so that
// Gateways of the same name in other clusters (or installations) differ,
// or from its namespace and name when it has none (offline rendering).
func LoopID(g *graph.Gateway) string {
	id := string(g.Source.UID)
	if id == "" {
		id = g.Key.String()
	}
	sum := sha256.Sum256([]byte("gatewall-loop|" + id))
	return hex.EncodeToString(sum[:8])
}

// loopID is the configuration's loop ID: a Config made without Build (a
// test's) still renders.
func (m Main) loopID() string {
	if m.LoopID == "" {
		return "0000000000000000"
	}
	return m.LoopID
}

// loopMaps are the maps of the loop header: $gw_loop_in says a request
// arrived after passing through this Gateway, or too many; $gw_loop_out is
// the header the request goes on with.
func loopMaps(id string) []*Map {
	const header = "$http_x_gatewall_loop" // graph.LoopHeader's
	return []*Map{
		{Source: header, Variable: "$gw_loop_in", Default: "0", Entries: []MapEntry{
			// Most requests carry no header: NGINX finds an exact key in
			// a hash before it tries any regular expression, so they cost
			// no regex match.
			{Key: `""`, Value: "0"},
			{Key: Quote("~(^|,)" + id + "(,|$)"), Value: "1"},
			{Key: Quote("~^.{" + strconv.Itoa(maxLoopHops*17) + "}"), Value: "1"},
		}},
		{Source: header, Variable: "$gw_loop_out", Default: Quote(header + "," + id), Entries: []MapEntry{
			{Key: `""`, Value: id},
		}},
	}
}

// loopCheck answers a request that went round, at the start of every
// server's rewrite phase.
func loopCheck() Directive {
	return Directive{Name: "if", Args: []string{"($gw_loop_in)"}, Block: []Directive{D("return", strconv.Itoa(loopStatus))}}
}
