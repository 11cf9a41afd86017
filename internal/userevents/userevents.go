// Package userevents decides the events Gatewall emits on the objects it
// reconciles, through the Events API: each tells the owner of an object
// what changed for it when a status changes to what it reports, never once
// per reconcile (client-go's recorder also folds repeats into series).
package userevents

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/internal/status"
)

// Event is one event to Emit.
type Event struct {
	Type, Reason, Action, Note string
}

// maxEventNote is the Events API's limit on a note, in bytes.
const maxEventNote = 1024

func Emit(rec events.EventRecorder, obj runtime.Object, evs []Event) {
	if rec == nil {
		return
	}
	for _, e := range evs {
		rec.Eventf(obj, nil, e.Type, e.Reason, e.Action, "%s", truncate(e.Note, maxEventNote))
	}
}

// truncate shortens s to at most n bytes, on a rune boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n-3]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + "..."
}

// policyEventReasons are the ancestor conditions (type and reason) a
// policy's owner hears of, with the event's reason. Only one condition
// type per event Reason: client-go's recorder folds events of one object
// with the same reason and action into one series, keeping the first note.
var policyEventReasons = map[[2]string]string{
	{string(gatewayv1.PolicyConditionAccepted), string(gatewayv1.PolicyReasonInvalid)}:    "Invalid",
	{string(gatewayv1.PolicyConditionAccepted), string(gatewayv1.PolicyReasonConflicted)}: "Conflicted",
	{v1alpha1.PolicyConditionProgrammed, v1alpha1.WAFReasonFetchError}:                    "BundleUpdateFailed",
	{v1alpha1.PolicyConditionProgrammed, v1alpha1.WAFReasonIntegrityError}:                "BundleUpdateFailed",
	{v1alpha1.PolicyConditionProgrammed, v1alpha1.WAFReasonDeploymentError}:               "DeploymentFailed",
}

// OfPolicy are the events a policy's new ancestor statuses call for: a
// condition (of any ancestor) that is False with one of policyEventReasons
// and was not with that reason and message before. One event per event
// reason, its note the distinct messages joined, sorted by reason.
func OfPolicy(old, cur []gatewayv1.PolicyAncestorStatus) []Event {
	type slot struct{ ancestor, condition string }
	before := map[slot]metav1.Condition{}
	for _, a := range old {
		for _, c := range a.Conditions {
			before[slot{status.RefString(a.AncestorRef), c.Type}] = c
		}
	}
	notes := map[string][]string{}
	for _, a := range cur {
		for _, c := range a.Conditions {
			reason, ok := policyEventReasons[[2]string{c.Type, c.Reason}]
			if !ok || c.Status != metav1.ConditionFalse {
				continue
			}
			if b, had := before[slot{status.RefString(a.AncestorRef), c.Type}]; had && b.Status == c.Status && b.Reason == c.Reason && b.Message == c.Message {
				continue
			}
			if !slices.Contains(notes[reason], c.Message) {
				notes[reason] = append(notes[reason], c.Message)
			}
		}
	}
	var out []Event
	for reason, ns := range notes {
		sort.Strings(ns)
		out = append(out, Event{Type: corev1.EventTypeWarning, Reason: reason, Action: "Reconcile", Note: strings.Join(ns, "; ")})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Reason < out[j].Reason })
	return out
}

// DataPlane remembers, per Gateway, what the last reconcile saw of
// its data plane, so that a Gateway's events mark changes: an apply NGINX
// refused (ApplyFailed), the first apply after (ApplyRecovered), a data
// plane that cannot be made ready (DataPlaneNotReady). A new leader starts
// with nothing remembered and reports a failing state once.
type DataPlane struct {
	mu   sync.Mutex
	last map[types.NamespacedName]dataPlaneSeen
}

type dataPlaneSeen struct {
	// failed: NGINX refused an apply and has applied none since; message
	// is what it said.
	failed  bool
	message string
	problem string
	// stalled is why the data plane's Deployment cannot bring its pods up.
	stalled string
	// held is why the configuration is held back (translate.HeldMessage).
	held string
}

// Observe records what a reconcile saw and returns the events it calls for;
// stalled is why the data plane's pods cannot be brought up, held why its
// configuration is held back ("" if it is not).
func (d *DataPlane) Observe(gw types.NamespacedName, dp status.DataPlane, problem *metav1.Condition, stalled, held string) []Event {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.last == nil {
		d.last = map[types.NamespacedName]dataPlaneSeen{}
	}
	prev := d.last[gw]
	now := dataPlaneSeen{failed: prev.failed, message: prev.message, stalled: stalled, held: held} // pending or unknown: no news
	if problem != nil {
		now.problem = problem.Reason + ": " + problem.Message
	}
	var out []Event
	switch dp.State {
	case status.Failed:
		now.failed, now.message = true, dp.Message
		if !prev.failed || prev.message != dp.Message {
			out = append(out, Event{corev1.EventTypeWarning, "ApplyFailed", "Apply",
				"NGINX did not apply the configuration: " + dp.Message})
		}
	case status.Applied:
		now.failed, now.message = false, ""
		if prev.failed {
			out = append(out, Event{corev1.EventTypeNormal, "ApplyRecovered", "Apply",
				"the data plane applied the configuration again"})
		}
	}
	d.last[gw] = now
	if now.problem != "" && now.problem != prev.problem {
		out = append(out, Event{corev1.EventTypeWarning, "DataPlaneNotReady", "Provision", fmt.Sprintf("%s (%s)", problem.Message, problem.Reason)})
	}
	if stalled != "" && stalled != prev.stalled {
		out = append(out, Event{corev1.EventTypeWarning, "DataPlaneNotReady", "Provision", stalled})
	}
	switch {
	case held != "" && held != prev.held:
		out = append(out, Event{corev1.EventTypeWarning, "ConfigurationHeld", "Publish", held})
	case held == "" && prev.held != "":
		out = append(out, Event{corev1.EventTypeNormal, "ConfigurationReleased", "Publish",
			"Gatewall has what the data plane enforces again: the configuration is published"})
	}
	return out
}

// Forget drops a Gateway that is gone.
func (d *DataPlane) Forget(gw types.NamespacedName) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.last, gw)
}
