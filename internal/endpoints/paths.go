package endpoints

// Where the data plane takes endpoints: NGINX's control socket and
// location (served by Gatewall's Lua, nginx/config/lua), and the state
// file the endpoints client keeps for a starting NGINX. Both are in the
// pod's /var/run/nginx, shared by its containers; nothing listens on a port.
const (
	Socket      = "/var/run/nginx/gatewall-endpoints.sock"
	ControlPath = "/endpoints"
	StateFile   = "/var/run/nginx/gatewall-endpoints.json"
	// KeySetsPath is the control location of remote JWT key sets (on
	// Socket); KeySetsStateFile where the client keeps them.
	KeySetsPath      = "/jwks"
	KeySetsStateFile = "/var/run/nginx/gatewall-jwks.json"
)
