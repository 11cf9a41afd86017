package manager

// What the package's external tests (on a real API server, whose helpers
// import this package) call of its internals.
var (
	EnsureAgentTLS = ensureAgentTLS
	EnsureSealKey  = ensureSealKey
	NewSealKey     = newSealKey
)

const AgentTLSSealKey = agentTLSSealKey
