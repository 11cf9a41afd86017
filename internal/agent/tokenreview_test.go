package agent

import (
	"cmp"
	"context"
	"errors"
	"strings"
	"testing"

	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// reviewingClient answers every TokenReview of token "token-<pod>" as a
// token of ServiceAccount sa bound to that pod (UID "uid-<pod>"), and
// holds pods. (test/agent runs the authenticator against a real API server.)
func reviewingClient(t *testing.T, sa string, pods ...*corev1.Pod) client.Client {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := authnv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	objs := make([]client.Object, 0, len(pods))
	for _, p := range pods {
		objs = append(objs, p)
	}
	return interceptor.NewClient(fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).Build(), interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			tr, ok := obj.(*authnv1.TokenReview)
			if !ok {
				return c.Create(ctx, obj, opts...)
			}
			pod := strings.TrimPrefix(tr.Spec.Token, "token-")
			tr.Status = authnv1.TokenReviewStatus{
				Authenticated: true, Audiences: tr.Spec.Audiences,
				User: authnv1.UserInfo{Username: "system:serviceaccount:ns:" + sa, Extra: map[string]authnv1.ExtraValue{
					extraPodName: {pod}, extraPodUID: {"uid-" + pod},
				}},
			}
			return nil
		},
	})
}

func dataPlanePod(name, sa string, deleting bool, phase corev1.PodPhase) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name),
			Labels: map[string]string{PodLabelGatewayName: "gw"}},
		Spec:   corev1.PodSpec{ServiceAccountName: sa},
		Status: corev1.PodStatus{Phase: cmp.Or(phase, corev1.PodRunning)},
	}
	if deleting {
		now := metav1.Now()
		p.DeletionTimestamp, p.Finalizers = &now, []string{"example.com/hold"}
	}
	return p
}

func TestTokenReviewBindsPodsToTheirDataPlane(t *testing.T) {
	saOf := func(_ context.Context, gw Key) (string, error) {
		if gw != (Key{Namespace: "ns", Name: "gw"}) {
			return "", errors.New("no such Gateway")
		}
		return "gw-nginx", nil
	}
	for name, tc := range map[string]struct {
		sa       string
		deleting bool
		phase    corev1.PodPhase
		opts     []TokenReviewOption
		refusal  string
		retry    bool // the refusal is a RetryLater
	}{
		"the Gateway's data plane": {sa: "gw-nginx", opts: []TokenReviewOption{RequireServiceAccount(saOf)}},
		// The agent starts with its container; the kubelet reports the pod
		// Running only once every container has started.
		"a pod the kubelet has not reported Running yet": {sa: "gw-nginx", phase: corev1.PodPending, opts: []TokenReviewOption{RequireServiceAccount(saOf)}},
		"a pod that has failed":                          {sa: "gw-nginx", phase: corev1.PodFailed, refusal: "has finished (Failed)"},
		"a pod that has succeeded":                       {sa: "gw-nginx", phase: corev1.PodSucceeded, refusal: "has finished (Succeeded)"},
		"another ServiceAccount":                         {sa: "intruder", opts: []TokenReviewOption{RequireServiceAccount(saOf)}, refusal: `runs as ServiceAccount "intruder", not "gw-nginx"`},
		"a terminating pod":                              {sa: "gw-nginx", deleting: true, opts: []TokenReviewOption{RequireServiceAccount(saOf)}, refusal: "is terminating"},
		"a terminating pod, no ServiceAccount set":       {sa: "gw-nginx", deleting: true, refusal: "is terminating"},
		// A Gateway that is gone will not come back for this token; one that
		// could not be read might, on the agent's next try.
		"no Gateway to ask about": {sa: "gw-nginx", opts: []TokenReviewOption{RequireServiceAccount(func(context.Context, Key) (string, error) {
			return "", apierrors.NewNotFound(schema.GroupResource{Group: "gateway.networking.k8s.io", Resource: "gateways"}, "gw")
		})}, refusal: `gateways.gateway.networking.k8s.io "gw" not found`},
		"the Gateway could not be read": {sa: "gw-nginx", opts: []TokenReviewOption{RequireServiceAccount(func(context.Context, Key) (string, error) {
			return "", errors.New("the API server is unavailable")
		})}, refusal: "the API server is unavailable", retry: true},
	} {
		t.Run(name, func(t *testing.T) {
			c := reviewingClient(t, tc.sa, dataPlanePod("gw-nginx-0", tc.sa, tc.deleting, tc.phase))
			id, err := NewTokenReviewAuthenticator(c, "gatewall", tc.opts...).Authenticate(context.Background(), "token-gw-nginx-0")
			switch {
			case tc.refusal == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.refusal == "" && id.Gateway != (Key{Namespace: "ns", Name: "gw"}):
				t.Fatalf("identity %+v", id)
			case tc.refusal != "" && (err == nil || !strings.Contains(err.Error(), tc.refusal)):
				t.Fatalf("got %v, want a refusal saying %q", err, tc.refusal)
			}
			if later := (*RetryLater)(nil); errors.As(err, &later) != tc.retry {
				t.Fatalf("refusal %v: RetryLater %v, want %v", err, !tc.retry, tc.retry)
			}
		})
	}
}
