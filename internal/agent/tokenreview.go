package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The extra information the API server adds to a token bound to a pod.
const (
	extraPodName = "authentication.kubernetes.io/pod-name"
	extraPodUID  = "authentication.kubernetes.io/pod-uid"
)

// NewTokenReviewAuthenticator authenticates agents by their projected
// ServiceAccount token, which must be bound to their pod and issued for
// audience: a TokenReview must find it authenticated for audience, the pod it
// is bound to must exist with the bound UID, run as that ServiceAccount, be
// Running and not terminating, have its addresses (status.podIPs) reported,
// and carry the Gateway's name in its label
// gateway.networking.k8s.io/gateway-name; the Gateway is in the pod's
// namespace. With RequirePod, the pod must also pass the check it is
// given: be the Gateway's data plane. The identity carries the pod's
// addresses, which the Server holds the connection to. The Server caches
// the verdicts; a token that is no JWT issued for audience and still valid
// is refused before any review (ScreenToken).
//
// c needs permission to create TokenReviews and get Pods; it should read
// Pods from the API server (a manager's APIReader-backed client), not from
// a cache watching every Pod of the cluster.
func NewTokenReviewAuthenticator(c client.Client, audience string, opts ...TokenReviewOption) Authenticator {
	a := &tokenReviewAuthenticator{c: c, audience: audience, now: time.Now}
	for _, o := range opts {
		o(a)
	}
	return a
}

// TokenReviewOption configures NewTokenReviewAuthenticator.
type TokenReviewOption func(*tokenReviewAuthenticator)

// PodCheck says whether pod, whose label names the Gateway gw (in the
// pod's namespace), is that Gateway's data plane: nil if it is, a
// *RetryLater when it cannot tell now (the Gateway could not be read), or
// why it is not.
type PodCheck func(ctx context.Context, gw Key, pod *corev1.Pod) error

// RequirePod refuses pods that check does not find to be their Gateway's
// data plane: a pod that merely carries the Gateway's label and runs as
// its ServiceAccount, created by anyone who may create pods in the
// namespace, must not get that Gateway's files (which can hold certificate
// keys other namespaces lent it).
func RequirePod(check PodCheck) TokenReviewOption {
	return func(a *tokenReviewAuthenticator) { a.checkPod = check }
}

type tokenReviewAuthenticator struct {
	c        client.Client
	audience string
	checkPod PodCheck
	now      func() time.Time
}

func (a *tokenReviewAuthenticator) Authenticate(ctx context.Context, token string) (Identity, error) {
	tr := &authnv1.TokenReview{Spec: authnv1.TokenReviewSpec{Token: token, Audiences: []string{a.audience}}}
	if err := a.c.Create(ctx, tr); err != nil {
		return Identity{}, &RetryLater{fmt.Errorf("reviewing the token: %w", err)}
	}
	st := tr.Status
	switch {
	case st.Error != "":
		return Identity{}, fmt.Errorf("token not authenticated: %s", st.Error)
	case !st.Authenticated:
		return Identity{}, errors.New("token not authenticated")
	case !slices.Contains(st.Audiences, a.audience):
		return Identity{}, fmt.Errorf("token not issued for the audience %q", a.audience)
	}
	ns, sa, ok := serviceAccount(st.User.Username)
	if !ok {
		return Identity{}, fmt.Errorf("user %q is not a ServiceAccount", st.User.Username)
	}
	podName, podUID := one(st.User.Extra[extraPodName]), one(st.User.Extra[extraPodUID])
	if podName == "" || podUID == "" {
		return Identity{}, fmt.Errorf("the token of %s/%s is not bound to a pod", ns, sa)
	}
	key := types.NamespacedName{Namespace: ns, Name: podName}
	pod := &corev1.Pod{}
	if err := a.c.Get(ctx, key, pod); err != nil {
		return Identity{}, retryUnlessNotFound(fmt.Errorf("getting the token's pod %s: %w", key, err))
	}
	if string(pod.UID) != podUID {
		return Identity{}, fmt.Errorf("pod %s is not the one the token is bound to (UID %s, bound %s)", key, pod.UID, podUID)
	}
	gw := pod.Labels[PodLabelGatewayName]
	id := Identity{Pod: key}
	if gw != "" {
		id.Gateway = Key{Namespace: ns, Name: gw}
	}
	refused := func(format string, args ...any) (Identity, error) {
		return Identity{}, &PodRefused{Pod: key, Gateway: id.Gateway, Err: fmt.Errorf(format, args...)}
	}
	switch {
	case pod.Spec.ServiceAccountName != sa:
		return refused("pod %s runs as ServiceAccount %q, the token is of %q", key, pod.Spec.ServiceAccountName, sa)
	// A pod's agent starts with its container, often before the kubelet
	// reports the pod Running (it waits for every container): Pending is
	// accepted, a finished pod is not.
	case pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed:
		return refused("pod %s has finished (%s)", key, pod.Status.Phase)
	case pod.DeletionTimestamp != nil:
		return refused("pod %s is terminating", key)
	case gw == "":
		return refused("pod %s has no label %s naming its Gateway", key, PodLabelGatewayName)
	}
	var ips []string
	for _, ip := range pod.Status.PodIPs {
		ips = append(ips, ip.IP)
	}
	addrs, err := ParsePodAddresses(ips...)
	switch {
	case err != nil:
		return refused("pod %s: %w", key, err)
	// The kubelet reports the pod's addresses once its sandbox runs, and
	// its containers start then too: an agent may be a moment ahead.
	case addrs.IsZero():
		return Identity{}, &RetryLater{fmt.Errorf("pod %s has no address reported yet", key)}
	}
	id.Addresses = addrs
	if a.checkPod != nil {
		if err := a.checkPod(ctx, id.Gateway, pod); err != nil {
			if later := (*RetryLater)(nil); errors.As(err, &later) {
				return Identity{}, &RetryLater{fmt.Errorf("pod %s: %w", key, err)}
			}
			return refused("pod %s is not the data plane of Gateway %s: %w", key, id.Gateway, err)
		}
	}
	return id, nil
}

// serviceAccount splits system:serviceaccount:<namespace>:<name>.
func serviceAccount(user string) (ns, name string, ok bool) {
	parts := strings.Split(user, ":")
	if len(parts) != 4 || parts[0] != "system" || parts[1] != "serviceaccount" || parts[2] == "" || parts[3] == "" {
		return "", "", false
	}
	return parts[2], parts[3], true
}

// one is the single value of an extra, "" unless there is exactly one.
func one(vals authnv1.ExtraValue) string {
	if len(vals) != 1 {
		return ""
	}
	return vals[0]
}

// retryUnlessNotFound makes err a RetryLater unless it says the object does
// not exist: a deleted pod or Gateway will not come back for this token.
func retryUnlessNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return err
	}
	return &RetryLater{err}
}
