package config

import "github.com/gatewall/gatewall/internal/graph"

// BuildWithCollidingDigests is Build with a names registry whose short
// digests all collide, as crafted inputs make them: every generated name
// with a digest body but the first of its kind gets the whole digest, the
// longest name the naming function gives.
func BuildWithCollidingDigests(g *graph.Gateway, inc Includes) *Config {
	return build(g, inc, collidingNames())
}
