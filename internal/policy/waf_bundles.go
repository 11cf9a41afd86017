package policy

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/internal/conditions"
	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/nginx/config"
)

// BundlesDir is where bundles are delivered on the data plane.
const BundlesDir = "/etc/app_protect/bundles/"

// BundlePath is a bundle's path on the data plane.
func BundlePath(sha256 string) string { return BundlesDir + sha256 + ".tgz" }

// bundlePlan is which bundles a policy renders with, and why not others.
type bundlePlan struct {
	resolved  *metav1.Condition
	blocked   *metav1.Condition
	policy    *BundleRef
	logs      []BundleRef
	dests     []string
	data      map[string][]byte
	fetchedAt map[string]metav1.Time
	// held says why the Gateway's configuration must wait: a bundle in
	// force on its data plane that Gatewall does not have (see holdFor);
	// heldPolicy is the APPolicy bundle among them, if it is one.
	held       []string
	heldPolicy *BundleRef
}

// problem is why the wanted bundle is not the one rendered.
type problem struct {
	reason string
	msg    string
}

var problemRank = map[string]int{v1alpha1.PolicyReasonPending: 1, string(gatewayv1.PolicyReasonInvalid): 2, v1alpha1.WAFReasonFetchError: 3, v1alpha1.WAFReasonIntegrityError: 4}

// planBundles picks the bundles of a policy: the ones PLM reports when
// fetched and verified; else, the ones in force (in the policy's status) when
// they still are available — a failed or pending update never drops the
// protection in force; else none (that scope gets no WAF configuration of
// its own: unrendered says what it has instead, for status).
func planBundles(in *graph.Input, p *v1alpha1.WAFGatewayBindingPolicy, unrendered string) bundlePlan {
	plan := bundlePlan{data: map[string][]byte{}, fetchedAt: map[string]metav1.Time{}}
	var refErrs []*refError
	var problems []problem
	choose := func(kind string, src v1alpha1.PLMObjectReference, inForce *v1alpha1.BundleReferenceStatus) *BundleRef {
		cur, rerr := resolvePLM(in, p, kind, src)
		var prob *problem
		if rerr != nil {
			refErrs = append(refErrs, rerr)
			if rerr.problem == refGone {
				return nil // not permitted, or gone: nothing may stay in force
			}
			prob = &problem{rerr.problem.programmedReason(), rerr.msg}
		} else {
			b := in.Bundles[cur.Sha256]
			if b.State == graph.BundleFetched {
				plan.use(cur, b)
				return &cur
			}
			prob = bundleProblem(cur, b)
		}
		if old := keptInForce(in, p, kind, cur, inForce); old != nil {
			plan.use(*old, in.Bundles[old.Sha256])
			if old.Object == cur.Object {
				prob.msg += fmt.Sprintf("; bundle %s stays in force", short(old.Sha256))
			} else {
				prob.msg += fmt.Sprintf("; bundle %s of %s %s, which the policy referred to before, stays in force", short(old.Sha256), kind, old.Object)
			}
			problems = append(problems, *prob)
			return old
		}
		if missing := holdFor(in, p, kind, cur, inForce); missing != nil {
			b := in.Bundles[missing.Sha256]
			why := b.Message
			if why == "" {
				why = "not fetched yet"
			}
			held := fmt.Sprintf("bundle %s of %s %s is in force on the data plane and Gatewall does not have it (%s)", short(missing.Sha256), kind, missing.Object, why)
			plan.held = append(plan.held, held)
			if kind == KindAPPolicy {
				plan.heldPolicy = missing
			}
			if missing.Sha256 != cur.Sha256 {
				prob.msg += "; " + held
			}
			prob.msg += "; the Gateway's configuration is held, and its data plane keeps the one it runs, until Gatewall has it"
		}
		problems = append(problems, *prob)
		return nil
	}
	plan.policy = choose(KindAPPolicy, p.Spec.APPolicySource, p.Status.APPolicyStatus)
	for _, l := range p.Spec.SecurityLogs {
		var inForce *v1alpha1.BundleReferenceStatus
		for i := range p.Status.APLogConfStatus {
			s := &p.Status.APLogConfStatus[i]
			if s.Name == l.APLogConfSource.Name && s.Namespace == namespaceOr(l.APLogConfSource.Namespace, p.Namespace) {
				inForce = s
			}
		}
		if r := choose(KindAPLogConf, l.APLogConfSource, inForce); r != nil {
			plan.logs = append(plan.logs, *r)
			plan.dests = append(plan.dests, destination(l.Destination))
		}
	}
	plan.resolved = resolvedCondition(refErrs)
	if len(plan.held) > 0 {
		unrendered = "" // nothing reaches the data plane: it keeps what it enforces
	}
	plan.blocked = blockedCondition(plan.policy != nil, refErrs, problems, unrendered)
	return plan
}

// keptInForce returns the bundle in force (recorded in the policy's status)
// that stays while the wanted one cur is not available; nil when none can.
// The bundle must still be fetched. It keeps the name of the object it came
// from: when the reference changed to another object, the bundle of the one
// referred to before stays in force, named as such, as long as that object
// still exists and may still be referred to (a deleted or no longer
// permitted object leaves nothing in force, like the current reference).
func keptInForce(in *graph.Input, p *v1alpha1.WAFGatewayBindingPolicy, kind string, cur BundleRef, inForce *v1alpha1.BundleReferenceStatus) *BundleRef {
	old := recordInForce(in, p, kind, cur, inForce)
	if old == nil || old.Sha256 == cur.Sha256 || in.Bundles[old.Sha256].State != graph.BundleFetched {
		return nil
	}
	return old
}

// holdFor returns the bundle in force when neither it nor the wanted one
// cur is available: the control plane lacks what the data plane enforces (a
// manager restart, a new leader, a cache wiped, storage down at start), and
// rendering the policy without it would drop the protection. Only a record
// with lastFetched counts: one without it mirrors what PLM reported, nothing
// of it having been in force.
func holdFor(in *graph.Input, p *v1alpha1.WAFGatewayBindingPolicy, kind string, cur BundleRef, inForce *v1alpha1.BundleReferenceStatus) *BundleRef {
	old := recordInForce(in, p, kind, cur, inForce)
	if old == nil || inForce.LastFetched == nil || in.Bundles[old.Sha256].State == graph.BundleFetched {
		return nil
	}
	return old
}

// recordInForce is the bundle the policy's status records for a reference,
// when it may stay in force: nil when the record is malformed (anyone who
// can write the status can write one) or its object, if another than cur's,
// is gone or no longer permitted (the user removed it: nothing of it stays).
func recordInForce(in *graph.Input, p *v1alpha1.WAFGatewayBindingPolicy, kind string, cur BundleRef, inForce *v1alpha1.BundleReferenceStatus) *BundleRef {
	if inForce == nil || checkBundle(in, inForce.Bundle.Location, inForce.Bundle.Sha256) != nil {
		return nil
	}
	old := BundleRef{Kind: kind, Object: types.NamespacedName{Namespace: inForce.Namespace, Name: inForce.Name},
		Location: inForce.Bundle.Location, Sha256: inForce.Bundle.Sha256}
	if old.Object.Namespace == "" {
		old.Object.Namespace = p.Namespace
	}
	if old.Object != cur.Object {
		ns := old.Object.Namespace
		if _, rerr := resolvePLM(in, p, kind, v1alpha1.PLMObjectReference{Name: old.Object.Name, Namespace: &ns}); rerr != nil && rerr.problem == refGone {
			return nil
		}
	}
	return &old
}

func (plan *bundlePlan) use(r BundleRef, b graph.Bundle) {
	plan.data[r.Sha256] = b.Data
	plan.fetchedAt[r.Sha256] = b.FetchedAt
}

func bundleProblem(r BundleRef, b graph.Bundle) *problem {
	what := fmt.Sprintf("%s %s bundle %s", r.Kind, r.Object, short(r.Sha256))
	switch {
	case b.State == graph.BundleFailed && b.Reason == v1alpha1.WAFReasonIntegrityError:
		return &problem{v1alpha1.WAFReasonIntegrityError, what + ": " + b.Message}
	case b.State == graph.BundleFailed:
		return &problem{v1alpha1.WAFReasonFetchError, what + ": " + b.Message}
	}
	msg := b.Message
	if msg == "" {
		msg = "being fetched"
	}
	return &problem{v1alpha1.PolicyReasonPending, what + ": " + msg}
}

func resolvedCondition(errs []*refError) *metav1.Condition {
	if len(errs) == 0 {
		c := conditions.True(v1alpha1.PolicyConditionResolvedRefs, "ResolvedRefs", "All references are resolved")
		return &c
	}
	msgs := make([]string, 0, len(errs))
	for _, e := range errs {
		msgs = append(msgs, e.msg)
	}
	c := conditions.False(v1alpha1.PolicyConditionResolvedRefs, errs[0].reason, strings.Join(msgs, "; "))
	return &c
}

// blockedCondition is Programmed=False for reasons before the data plane:
// the most severe bundle problem, or references that leave nothing to render;
// unrendered says what the policy's targets have meanwhile ("" when what
// they had stays).
func blockedCondition(rendered bool, refErrs []*refError, problems []problem, unrendered string) *metav1.Condition {
	if len(problems) == 0 {
		if rendered {
			return nil
		}
		c := conditions.False(v1alpha1.PolicyConditionProgrammed, string(gatewayv1.PolicyReasonInvalid), "the policy's references do not resolve, so nothing of it is configured: "+unrendered)
		return &c
	}
	worst := problems[0]
	msgs := make([]string, 0, len(problems))
	for _, p := range problems {
		if problemRank[p.reason] > problemRank[worst.reason] {
			worst = p
		}
		msgs = append(msgs, p.msg)
	}
	msg := strings.Join(msgs, "; ")
	if !rendered && unrendered != "" {
		msg += "; until it is available, " + unrendered
	}
	c := conditions.False(v1alpha1.PolicyConditionProgrammed, worst.reason, msg)
	return &c
}

func namespaceOr(ns *string, def string) string {
	if ns != nil {
		return *ns
	}
	return def
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

// destination renders a security log destination (validated by package
// validation: paths and servers match strict allow-lists).
func destination(d v1alpha1.SecurityLogDestination) string {
	switch d.Type {
	case v1alpha1.SecurityLogDestinationFile:
		return config.Quote(d.File.Path)
	case v1alpha1.SecurityLogDestinationSyslog:
		return config.Quote("syslog:server=" + d.Syslog.Server)
	}
	return "stderr"
}

// wafDirectives renders a policy: protection on, its policy bundle, and its
// security logs (explicitly off without logs, so a route policy replaces the
// Gateway's entirely).
func wafDirectives(plan bundlePlan) []config.Directive {
	out := []config.Directive{
		config.D("app_protect_enable", "on"),
		config.D("app_protect_policy_file", config.Quote(BundlePath(plan.policy.Sha256))),
	}
	if len(plan.logs) == 0 {
		return append(out, config.D("app_protect_security_log_enable", "off"))
	}
	out = append(out, config.D("app_protect_security_log_enable", "on"))
	for i, l := range plan.logs {
		out = append(out, config.D("app_protect_security_log", config.Quote(BundlePath(l.Sha256)), plan.dests[i]))
	}
	return out
}

// AddIncludes adds the WAF configuration to a Gateway's configuration: the
// module and enforcer address when WAF is enabled, the policies, the bundles.
func (w *WAF) AddIncludes(inc *config.Includes) {
	if !w.Enabled {
		return
	}
	inc.Modules = append(inc.Modules, w.Module)
	enforcer := config.D("app_protect_enforcer_address", WAFEnforcerAddress)
	inc.AddHTTP(config.IncludesDir+IncludeKindWAF+".conf", append([]config.Directive{enforcer}, w.HTTP...))
	for ref, dirs := range w.Routes {
		rk := ref
		inc.AddRoute(rk, config.RouteIncludePath(IncludeKindWAF, rk), dirs)
	}
	for sha, data := range w.Bundles {
		inc.Extra = append(inc.Extra, config.File{Path: BundlePath(sha), Data: data, Mode: 0o644})
	}
}
