package provisioner

import (
	"context"
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// FieldOwner is Gatewall's server-side apply field manager.
const FieldOwner = "gatewall"

func intstrFromInt(p int32) intstr.IntOrString { return intstr.FromInt32(p) }

// NotOwnedError is an object that stands where a Gateway's data plane
// would go and that Gatewall did not create for that Gateway.
type NotOwnedError struct {
	Kind, Namespace, Name string
	// Controller describes the object's controller ("no controller" when none).
	Controller string
}

func (e *NotOwnedError) Error() string {
	return fmt.Sprintf("%s %s/%s exists and is not this Gateway's data plane (its controller: %s); Gatewall neither takes it over nor deletes it: delete or rename it",
		e.Kind, e.Namespace, e.Name, e.Controller)
}

// RefusedError is data-plane objects the API server refused (their
// validation, or an admission policy such as config/rbac's manager-placement,
// which refuses node selectors, tolerations, host ports and volumes until
// the installation allows them). The other objects were applied.
type RefusedError struct {
	// Refusals are "Kind namespace/name: why", in the order applied.
	Refusals []string
}

func (e *RefusedError) Error() string {
	return "the API server refused " + strings.Join(e.Refusals, "; ")
}

// refused says whether err is the API server's refusal of an object as it
// is (invalid, or forbidden by an admission policy or RBAC): applying it
// again unchanged fails again.
func refused(err error) bool {
	return apierrors.IsInvalid(err) || apierrors.IsForbidden(err) || apierrors.IsBadRequest(err)
}

// Apply writes a Gateway's data-plane objects with server-side apply,
// taking ownership of every field Gatewall sets, so changes made by others
// (drift) are reverted. It first reads each object: when one exists that is
// not gw's data plane made by owner, nothing is applied and a
// *NotOwnedError says which.
// c reads from the cache; confirm, if set, reads from the API server, so
// that an object a cache has not seen yet is not overwritten. applied, if
// set, skips an object that Apply wrote before exactly so and that nobody
// changed since (the cache has the resourceVersion Apply got back). A
// Deployment whose replicas Gatewall stops setting (autoscaling turned on)
// keeps them (handOverReplicas). An object the API server refuses as it
// is does not stop the others: they are applied, and a *RefusedError
// names the refused ones.
func Apply(ctx context.Context, c client.Client, confirm client.Reader, owner Owner, gw *gatewayv1.Gateway, objs []client.Object, applied *Applied) error {
	have := make([]client.Object, len(objs))
	for i, o := range objs {
		h, err := checkOwner(ctx, c, confirm, owner, gw, o)
		if err != nil {
			return err
		}
		have[i] = h
	}
	var refusals []string
	for i, o := range objs {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
		if err != nil {
			return err
		}
		u := &unstructured.Unstructured{Object: m}
		delete(u.Object, "status")
		unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
		unstructured.RemoveNestedField(u.Object, "spec", "template", "metadata", "creationTimestamp")
		key := appliedKey{kind: kind(o), name: client.ObjectKeyFromObject(o)}
		digest, err := digestOf(u)
		if err != nil {
			return err
		}
		if applied.unchanged(key, digest, have[i]) {
			continue
		}
		if err := handOverReplicas(ctx, c, confirm, u, have[i]); err != nil {
			applied.forget(key)
			return err
		}
		if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(FieldOwner), client.ForceOwnership); err != nil {
			applied.forget(key)
			if refused(err) {
				refusals = append(refusals, fmt.Sprintf("%s %s/%s: %s", kind(o), o.GetNamespace(), o.GetName(), apiMessage(err)))
				continue
			}
			return fmt.Errorf("applying %s %s/%s: %w", kind(o), o.GetNamespace(), o.GetName(), err)
		}
		applied.record(key, digest, u.GetResourceVersion())
	}
	if len(refusals) > 0 {
		return &RefusedError{Refusals: refusals}
	}
	return nil
}

// maxRefusalLen bounds what a refusal quotes of the API server's message
// (an admission policy's message and the object's name), so that a
// Gateway's condition stays readable.
const maxRefusalLen = 1024

// apiMessage is the API server's message of err, bounded.
func apiMessage(err error) string {
	msg := err.Error()
	var status apierrors.APIStatus
	if errors.As(err, &status) && status.Status().Message != "" {
		msg = status.Status().Message
	}
	if len(msg) > maxRefusalLen {
		msg = msg[:maxRefusalLen] + "…"
	}
	return msg
}

// checkOwner returns the object that stands where o goes (nil when none),
// or a *NotOwnedError when it is not gw's data plane made by owner.
func checkOwner(ctx context.Context, c client.Client, confirm client.Reader, owner Owner, gw *gatewayv1.Gateway, o client.Object) (client.Object, error) {
	k, ok := kindOf(o)
	if !ok {
		return nil, fmt.Errorf("%T %s is not of a data-plane kind", o, o.GetName())
	}
	have := k.Object()
	key := client.ObjectKeyFromObject(o)
	err := c.Get(ctx, key, have)
	if apierrors.IsNotFound(err) && confirm != nil {
		err = confirm.Get(ctx, key, have)
	}
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("reading %s %s: %w", kind(o), key, err)
	case owner.Owns(gw, have):
		return have, nil
	}
	return nil, &NotOwnedError{Kind: kind(o), Namespace: key.Namespace, Name: key.Name, Controller: describeController(have)}
}

func kind(o client.Object) string { return o.GetObjectKind().GroupVersionKind().Kind }
