package apicases

import (
	"fmt"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
	"github.com/gatewall/gatewall/internal/validation"
)

// overrideCases are NginxProxy allowGatewayOverrides: what a class lets its
// Gateways choose (docs/security.md).
func overrideCases() []Case {
	const path = "spec.allowGatewayOverrides"
	with := func(o v1alpha2.GatewayOverrides) Case {
		return Case{Object: np(func(s *v1alpha2.NginxProxySpec) { s.AllowGatewayOverrides = &o })}
	}
	named := func(name string, c Case, field, msg string) Case {
		c.Name, c.Field, c.Message = "NginxProxy: allowGatewayOverrides "+name, field, msg
		return c
	}
	var many []string
	for i := range 65 {
		many = append(many, fmt.Sprintf("team%d.example.com/", i))
	}
	return []Case{
		named("images and service", with(v1alpha2.GatewayOverrides{Fields: []v1alpha2.GatewayOverrideField{v1alpha2.OverrideImages, v1alpha2.OverrideService}}), "", ""),
		named("keys and prefixes", with(v1alpha2.GatewayOverrides{InfrastructureKeys: []string{"example.com/team", "prometheus.io/", "a.b.example.com/x_y.z"}}), "", ""),
		named("every field", with(v1alpha2.GatewayOverrides{Fields: []v1alpha2.GatewayOverrideField{v1alpha2.OverrideImages, v1alpha2.OverrideService,
			v1alpha2.OverrideRewriteClientIP, v1alpha2.OverrideDisableBaseHeaders, v1alpha2.OverrideScheduling, v1alpha2.OverrideVolumes,
			v1alpha2.OverrideHostPorts, v1alpha2.OverrideLifecycle, v1alpha2.OverridePatches}}), "", ""),
		named("unknown field", with(v1alpha2.GatewayOverrides{Fields: []v1alpha2.GatewayOverrideField{"Replicas"}}),
			path+".fields[0]", `Unsupported value: "Replicas"`),
		named("field twice", with(v1alpha2.GatewayOverrides{Fields: []v1alpha2.GatewayOverrideField{v1alpha2.OverrideImages, v1alpha2.OverrideImages}}),
			path+".fields[1]", `Duplicate value: "Images"`),
		named("unprefixed key", with(v1alpha2.GatewayOverrides{InfrastructureKeys: []string{"team"}}),
			path+".infrastructureKeys[0]", "should match '"+validation.InfrastructureKeyPattern+"'"),
		named("key with a space", with(v1alpha2.GatewayOverrides{InfrastructureKeys: []string{"example.com/my team"}}),
			path+".infrastructureKeys[0]", "should match '"+validation.InfrastructureKeyPattern+"'"),
		named("65 keys", with(v1alpha2.GatewayOverrides{InfrastructureKeys: many}),
			path+".infrastructureKeys", "must have at most 64 items"),
	}
}
