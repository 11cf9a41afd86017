package statuswrite

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/coalesce"
	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/policy"
	"github.com/gatewall/gatewall/internal/status"
	"github.com/gatewall/gatewall/internal/translate"
	"github.com/gatewall/gatewall/internal/userevents"
)

// PolicyEntry is what one owner decided of a policy's status: a Gateway's
// ancestor entry (with the kind's attachment to the Gateway, which a kind
// of policy.OwnStatus reads), or the entries no Gateway decides (targets
// of a kind the policy cannot have, or not found: TargetsOwner's), with
// the snapshot a kind of policy.OwnStatus reads.
type PolicyEntry struct {
	Ancestors  []status.Ancestor
	Attachment policy.Attachment
	In         *graph.Input
	// Version is the version of the policy (graph.PolicyVersion) the
	// entry was decided from: the rest of a kind of policy.OwnStatus's
	// status is set only from entries of the policy as it is (what a
	// translation decided reads the status, WAF's records of the bundles
	// in force, it is about to replace).
	Version string
	// Gateways are, in TargetsOwner's entry of a kind of
	// policy.OwnStatus, the existing Gateways that may be the policy's
	// ancestors: the rest of its status is set only once each has handed
	// its entry or said it has none (the bundles in force on a Gateway
	// not heard from would otherwise be taken as none, and their records
	// replaced).
	Gateways []types.NamespacedName
}

// TargetsOwner owns a policy's entries that no Gateway decides: its
// kind's reconciler hands them.
const TargetsOwner = "targets"

// GatewayOwner is the owner of the entry a Gateway's reconciler hands.
func GatewayOwner(gw types.NamespacedName) string { return "Gateway/" + gw.String() }

// PolicyWriter writes policies' statuses from the entries their owners
// hand it: each Gateway reconciler's translation decides the policy's
// entry for that Gateway, as it decides route parents, and the kind's
// reconciler the entries for targets; none of them waits for another. It
// keeps every owner's newest entry per policy (nil: the owner has none,
// its entry is removed), and a policy's status is set from all of them at
// once, on a fresh copy, so that a kind whose status holds more than
// ancestors (the bundles in force of WAFGatewayBindingPolicy) sees every
// Gateway's attachment. Writes run on jobs of their own (one newest-wins
// job per object, keyed by graph.ObjectRef; not the route writer's: a WAF
// policy's records of the bundles in force, which the next translation
// reads, must not wait behind thousands of route writes), on the leader.
type PolicyWriter struct {
	jobs           *coalesce.Jobs[graph.ObjectRef]
	client         client.Client
	controllerName string
	recorder       events.EventRecorder

	mu sync.Mutex
	// decided are, per policy, each owner's newest entry.
	decided map[graph.ObjectRef]map[string]*PolicyEntry
}

// NewPolicyWriter makes a writer that runs its writes on jobs. rec emits
// events on policies whose conditions change (nil: none).
func NewPolicyWriter(jobs *coalesce.Jobs[graph.ObjectRef], c client.Client, controllerName string, rec events.EventRecorder) *PolicyWriter {
	return &PolicyWriter{jobs: jobs, client: c, controllerName: controllerName, recorder: rec,
		decided: map[graph.ObjectRef]map[string]*PolicyEntry{}}
}

// Set records owner's entry for the policy (nil: none) and has the
// policy's status written in the background when the entry changed.
func (w *PolicyWriter) Set(ref graph.ObjectRef, owner string, e *PolicyEntry) {
	if w.record(ref, owner, e) {
		w.jobs.Hand(ref, func(ctx context.Context) error { return w.write(ctx, ref) })
	}
}

// SetNow is Set, writing the policy's status before it returns (a write
// that fails is retried in the background): for a WAF policy's records of
// the bundles in force, which its Gateways' next translation reads.
// Written in the background instead, a translation made meanwhile would
// read the records this one replaces, take an older bundle for the one in
// force, and hand that as its entry.
func (w *PolicyWriter) SetNow(ctx context.Context, ref graph.ObjectRef, owner string, e *PolicyEntry) {
	if !w.record(ref, owner, e) {
		return
	}
	if err := w.write(ctx, ref); err != nil {
		w.jobs.Hand(ref, func(ctx context.Context) error { return w.write(ctx, ref) })
	}
}

// record keeps owner's entry for the policy; false when it is the one
// kept already (nothing to write).
func (w *PolicyWriter) record(ref graph.ObjectRef, owner string, e *PolicyEntry) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	byOwner := w.decided[ref]
	if byOwner == nil {
		byOwner = map[string]*PolicyEntry{}
		w.decided[ref] = byOwner
	}
	old, had := byOwner[owner]
	byOwner[owner] = e
	return !had || !sameEntry(old, e)
}

// Owned returns the policies for which owner has an entry.
func (w *PolicyWriter) Owned(owner string) []graph.ObjectRef {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []graph.ObjectRef
	for ref, byOwner := range w.decided {
		if e := byOwner[owner]; e != nil {
			out = append(out, ref)
		}
	}
	return out
}

// sameEntry says whether two entries write the same status.
func sameEntry(a, b *PolicyEntry) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Attachment == b.Attachment && a.In == b.In && a.Version == b.Version && slices.Equal(a.Gateways, b.Gateways) && slices.EqualFunc(a.Ancestors, b.Ancestors, func(x, y status.Ancestor) bool {
		return reflect.DeepEqual(x.Ref, y.Ref) && x.DataPlane == y.DataPlane && (x.Outcome == y.Outcome || reflect.DeepEqual(x.Outcome, y.Outcome))
	})
}

// entries returns a copy of the policy's entries, by owner.
func (w *PolicyWriter) entries(ref graph.ObjectRef) map[string]*PolicyEntry {
	w.mu.Lock()
	defer w.mu.Unlock()
	return maps.Clone(w.decided[ref])
}

// forget drops what is kept of a policy that is gone.
func (w *PolicyWriter) forget(ref graph.ObjectRef) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.decided, ref)
}

// write sets the policy's status from its entries, on a fresh copy,
// retried on conflicts; nothing is written when it shows them already.
func (w *PolicyWriter) write(ctx context.Context, ref graph.ObjectRef) error {
	kind := policy.KindNamed(ref.Kind)
	if kind == nil {
		return fmt.Errorf("%s is not a policy kind", ref.Kind)
	}
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur := kind.NewObject()
		if err := w.client.Get(ctx, ref.Key, cur); err != nil {
			if apierrors.IsNotFound(err) {
				w.forget(ref)
				return nil
			}
			return fmt.Errorf("reading %s: %w", ref, err)
		}
		entries := w.entries(ref)
		of := translate.PolicyStatusOf{ControllerName: w.controllerName}
		for _, owner := range slices.Sorted(maps.Keys(entries)) {
			e := entries[owner]
			if e == nil {
				continue
			}
			of.Ancestors = append(of.Ancestors, e.Ancestors...)
			if e.Attachment != nil {
				of.Attachments = append(of.Attachments, e.Attachment)
			}
		}
		if ownStatusReady(entries, graph.PolicyVersion(ref.Kind, cur)) {
			of.In = entries[TargetsOwner].In
		}
		of.Keep = w.keep(ctx, entries)
		want := cur.DeepCopyObject().(client.Object)
		translate.SetPolicyStatus(kind, kind.View(want), of, metav1.Now())
		if equality.Semantic.DeepEqual(cur, want) {
			return nil
		}
		evs := userevents.OfPolicy(kind.View(cur).PolicyStatus().Ancestors, kind.View(want).PolicyStatus().Ancestors)
		if err := update(ctx, w.client, want); err != nil {
			return fmt.Errorf("updating status of %s: %w", ref, err)
		}
		userevents.Emit(w.recorder, want, evs)
		return nil
	})
}

// ownStatusReady says whether the rest of a policy's status (a kind of
// policy.OwnStatus's) can be set from its entries: its targets' entry is
// there, every Gateway it names has handed its own or said it has none,
// and every entry was decided from the policy at version, as it is now.
// Otherwise it waits: the entries of the policy as it is come (a change
// of the policy, its status's records included, has the Gateways
// translate again and its kind's reconciler hand its entry again).
func ownStatusReady(entries map[string]*PolicyEntry, version string) bool {
	targets := entries[TargetsOwner]
	if targets == nil || targets.In == nil || targets.Version != version {
		return false
	}
	for _, gw := range targets.Gateways {
		if _, decided := entries[GatewayOwner(gw)]; !decided {
			return false
		}
	}
	for _, e := range entries {
		if e != nil && e.Attachment != nil && e.Version != version {
			return false
		}
	}
	return true
}

// keep says which of Gatewall's entries in a policy's status that no
// owner has decided stay: after a restart, a Gateway's entry stays until
// its reconciler hands its own (or removes it), unless the Gateway is
// gone; the entries for targets (a target not found, or of a kind the
// policy cannot have) stay until the kind's reconciler hands its.
func (w *PolicyWriter) keep(ctx context.Context, entries map[string]*PolicyEntry) func(gatewayv1.PolicyAncestorStatus) bool {
	return func(a gatewayv1.PolicyAncestorStatus) bool {
		ref := a.AncestorRef
		isGateway := ref.Kind != nil && *ref.Kind == "Gateway" && (ref.Group == nil || *ref.Group == gatewayv1.GroupName)
		if !isGateway || status.IsTargetEntry(a) {
			_, decided := entries[TargetsOwner]
			return !decided
		}
		ns := ""
		if ref.Namespace != nil {
			ns = string(*ref.Namespace)
		}
		gw := types.NamespacedName{Namespace: ns, Name: string(ref.Name)}
		if _, decided := entries[GatewayOwner(gw)]; decided {
			return false
		}
		err := w.client.Get(ctx, gw, &gatewayv1.Gateway{})
		return !apierrors.IsNotFound(err)
	}
}
