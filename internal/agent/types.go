package agent

import (
	"cmp"

	"k8s.io/apimachinery/pkg/types"
)

// Key identifies one data plane: the Gateway (namespace/name) it serves.
type Key = types.NamespacedName

// ApplyState is where a pod is with the desired version of its Gateway's
// configuration.
type ApplyState string

const (
	// Pending: the desired version is not applied yet (not pushed, in flight,
	// or the pod is not connected), or there is no desired version.
	Pending ApplyState = "Pending"
	// Applied: NGINX on the pod runs the desired version.
	Applied ApplyState = "Applied"
	// Failed: the agent did not apply the desired version (NGINX refused it,
	// or the files could not be fetched or written); PodStatus.Failure says
	// what NGINX runs instead.
	Failed ApplyState = "Failed"
)

// Status is the state of one Gateway's data plane.
type Status struct {
	// Version is the desired version ("" if none).
	Version string
	// Pods are the pods serving the Gateway that connected recently, sorted by
	// pod (namespace, then name).
	Pods []PodStatus
}

// PodStatus is the state of one pod of a data plane.
type PodStatus struct {
	Pod types.NamespacedName
	// Connected: the pod's agent has a Subscribe stream open.
	Connected bool
	// AppliedVersion is the last version NGINX on this pod runs after an OK
	// apply ("" when unknown, e.g. after NGINX restarted).
	AppliedVersion string
	// State is for the desired version.
	State ApplyState
	// Message is NGINX's own error text when State is Failed.
	Message string
	// Failure says, when State is Failed, what the pod runs now.
	Failure Failure
}

// Failure says what a failed apply left NGINX running.
type Failure string

const (
	// FailureRejected: NGINX refused the version (its verdict is in
	// Message); the agent restored the previous files and NGINX keeps
	// running its last good configuration. The version is not pushed again.
	FailureRejected Failure = "Rejected"
	// FailureRetrying: the apply failed for a reason that is not NGINX's
	// verdict (e.g. a file could not be fetched); NGINX keeps its last good
	// configuration and the version is pushed again after a backoff.
	FailureRetrying Failure = "Retrying"
	// FailureRollbackFailed: the apply failed and the agent could not
	// restore the previous configuration either: what NGINX runs is not
	// known (AppliedVersion is cleared).
	FailureRollbackFailed Failure = "RollbackFailed"
)

// EventType names a protocol event reported to Options.Observe.
type EventType string

const (
	// EventPushSent: a ConfigApplyRequest for Version was sent to Pod.
	EventPushSent EventType = "PushSent"
	// EventApplyResult: Pod's agent reported the final result for Version;
	// Message is "OK" or the error text.
	EventApplyResult EventType = "ApplyResult"
	// EventPushTimedOut: Pod's agent did not answer the push of Version
	// within the push timeout; it is sent again.
	EventPushTimedOut EventType = "PushTimedOut"
	// EventFileServed: Pod fetched Path.
	EventFileServed EventType = "FileServed"
	// EventFileNotFound: Pod asked for Path, which no retained version holds.
	EventFileNotFound EventType = "FileNotFound"
	// EventRefused: an RPC was refused; Reason classifies it and Message
	// says why. Key and Pod are set when the refusal is of a known pod
	// (RefusedPod, RefusedLabels).
	EventRefused EventType = "Refused"
	// EventFilesReported: a pod's agent reported its files after connecting;
	// Version is the desired version when they already matched it (no push
	// needed), else "".
	EventFilesReported EventType = "FilesReported"
)

// Event is one protocol event, for metrics and tests.
type Event struct {
	Type    EventType
	Key     Key
	Pod     types.NamespacedName
	Version string
	Path    string
	Message string
	// Reason is set on EventRefused.
	Reason RefusalReason
}

// compareKeys orders Gateways by namespace, then name.
func compareKeys(a, b Key) int {
	return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
}
