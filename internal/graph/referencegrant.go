package graph

import (
	"fmt"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/conditions"
)

// refGrantFrom describes the referencing side of a cross-namespace reference.
type refGrantFrom struct {
	group, kind, namespace string
}

// refGrantTo describes the referenced object.
type refGrantTo struct {
	group, kind, namespace, name string
}

// referenceAllowed says whether a reference from one namespace to an object in
// another is permitted: always within a namespace, else only when a
// ReferenceGrant in the target's namespace allows it.
func referenceAllowed(in *Input, from refGrantFrom, to refGrantTo) bool {
	if from.namespace == to.namespace {
		return true
	}
	for k, rg := range in.ReferenceGrants {
		if k.Namespace != to.namespace || grantOverLimit(len(rg.Spec.From), len(rg.Spec.To)) != nil {
			// A grant over the Gateway API's limits grants nothing, as
			// the API server would not have stored it.
			continue
		}
		fromOK := false
		for _, f := range rg.Spec.From {
			if string(f.Group) == from.group && string(f.Kind) == from.kind && string(f.Namespace) == from.namespace {
				fromOK = true
				break
			}
		}
		if !fromOK {
			continue
		}
		for _, t := range rg.Spec.To {
			if string(t.Group) == to.group && string(t.Kind) == to.kind &&
				(t.Name == nil || *t.Name == "" || string(*t.Name) == to.name) {
				return true
			}
		}
	}
	return false
}

// coreGroup is the core API group as references spell it.
const coreGroup = ""

var gatewayGroup = gatewayv1.GroupName

// ReferenceAllowed says whether an object of group/kind in fromNamespace may
// refer to toGroup/toKind toNamespace/toName: always within a namespace, else
// when a ReferenceGrant in the target's namespace allows it.
func (in *Input) ReferenceAllowed(fromGroup, fromKind, fromNamespace, toGroup, toKind, toNamespace, toName string) bool {
	return referenceAllowed(in, refGrantFrom{fromGroup, fromKind, fromNamespace}, refGrantTo{toGroup, toKind, toNamespace, toName})
}

// describeRef names a reference of an unsupported group or kind in a
// message: its values are whatever the user wrote, so they are quoted.
func describeRef(group, kind, name string) string {
	return fmt.Sprintf("group %s kind %s name %s", conditions.Quote(group), conditions.Quote(kind), conditions.Quote(name))
}
