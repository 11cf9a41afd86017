package endpoints

// What one Gateway's data plane holds of endpoints. The data plane keeps
// every endpoint of every upstream in one shared dict of fixed size (32 MB,
// nginx/config/lua.go), and the state of each endpoint of each upstream
// (failures, requests in flight) in another (16 MB): a Gateway's tenants
// share them. The manager spends these bounds before it sends anything
// (graph/endpointbudget.go), oldest route first; the data plane refuses
// what crosses them, upstream by upstream.
//
// The bounds are what the dicts were measured to hold with room to spare,
// at the worst: every address the longest IPv6 one, every list a size the
// dict's allocator rounds up the most, after many updates of lists of
// every size (BenchmarkEndpointsDict, test/balancer; docs/budgets.md).
const (
	// MaxEndpointsPerUpstream bounds one upstream's endpoints (a Service
	// port's): one list is also one allocation the dict needs in one piece,
	// and twice while it is replaced.
	MaxEndpointsPerUpstream = 1000
	// MaxEndpoints bounds the endpoints of a Gateway's upstreams together.
	MaxEndpoints = 100000
	// MaxUpstreams bounds a Gateway's upstreams (Service ports, and
	// protocols) that have endpoints: each is an entry of the dict,
	// whatever its endpoints.
	MaxUpstreams = 10000
)

// MaxEndpointLength is the longest endpoint: a bracketed IPv6 address of
// eight groups of four digits, and a port of five.
const MaxEndpointLength = len("[ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]:65535")

// MaxUpdateBytes bounds one update as the data plane reads it (its JSON,
// without upstreams' names, which NGINX does not need: Update.ForNGINX):
// the bounds' worth of upstreams and endpoints, and as many upstreams
// deleted, each at its longest. NGINX refuses a larger body on the control
// socket, so that a request never holds a worker for long.
const MaxUpdateBytes = len(`{"version":18446744073709551615,"full":true,"set":{},"deleted":[]}`) +
	MaxUpstreams*(len(`"":{"endpoints":[]},`)+IDLength) +
	MaxUpstreams*(len(`"",`)+IDLength) +
	MaxEndpoints*(len(`"",`)+MaxEndpointLength)
