package validation

import (
	"regexp"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
)

// Messages of the topology spread rules, identical to the CRD's CEL
// messages.
const (
	MsgSpreadPairTwice   = "each topologyKey and whenUnsatisfiable pair can appear once"
	MsgSpreadMinDomains  = "minDomains can only be set when whenUnsatisfiable is DoNotSchedule"
	maxSpreadConstraints = 8
	maxTopologyKeyLen    = 253
)

// TopologyKeyPattern is the CRD's pattern of a topologyKey: a label key.
const TopologyKeyPattern = `^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$`

var topologyKeyRE = regexp.MustCompile(TopologyKeyPattern)

// topologySpread checks pod.topologySpreadConstraints against the CRD's
// rules, which hold the API server's own for a pod's, so that a Deployment
// or DaemonSet that carries them is never refused.
func topologySpread(path *field.Path, cs []v1alpha2.TopologySpreadConstraint) field.ErrorList {
	var errs field.ErrorList
	if len(cs) > maxSpreadConstraints {
		errs = append(errs, field.TooMany(path, len(cs), maxSpreadConstraints))
	}
	type pair struct{ key, when string }
	seen := map[pair]bool{}
	twice := false
	for i, c := range cs {
		at := path.Index(i)
		errs = append(errs, intRange(at.Child("maxSkew"), int64(c.MaxSkew), 1, 1<<31-1)...)
		errs = append(errs, stringField(at.Child("topologyKey"), c.TopologyKey, 1, maxTopologyKeyLen, topologyKeyRE)...)
		errs = append(errs, enum(at.Child("whenUnsatisfiable"), string(c.WhenUnsatisfiable), "DoNotSchedule", "ScheduleAnyway")...)
		if c.MinDomains != nil {
			errs = append(errs, intRange(at.Child("minDomains"), int64(*c.MinDomains), 1, 1<<31-1)...)
			if c.WhenUnsatisfiable != "DoNotSchedule" {
				errs = append(errs, field.Invalid(at, "object", MsgSpreadMinDomains))
			}
		}
		if p := c.NodeAffinityPolicy; p != nil {
			errs = append(errs, enum(at.Child("nodeAffinityPolicy"), string(*p), "Honor", "Ignore")...)
		}
		if p := c.NodeTaintsPolicy; p != nil {
			errs = append(errs, enum(at.Child("nodeTaintsPolicy"), string(*p), "Honor", "Ignore")...)
		}
		k := pair{c.TopologyKey, string(c.WhenUnsatisfiable)}
		twice = twice || seen[k]
		seen[k] = true
	}
	if twice {
		errs = append(errs, field.Invalid(path, "array", MsgSpreadPairTwice))
	}
	return errs
}
