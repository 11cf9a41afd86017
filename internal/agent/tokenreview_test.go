package agent

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/netip"
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

func dataPlanePod(name, sa string, deleting bool, phase corev1.PodPhase, ips ...string) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name),
			Labels: map[string]string{PodLabelGatewayName: "gw"}},
		Spec:   corev1.PodSpec{ServiceAccountName: sa},
		Status: corev1.PodStatus{Phase: cmp.Or(phase, corev1.PodRunning)},
	}
	for _, ip := range ips {
		p.Status.PodIPs = append(p.Status.PodIPs, corev1.PodIP{IP: ip})
	}
	if deleting {
		now := metav1.Now()
		p.DeletionTimestamp, p.Finalizers = &now, []string{"example.com/hold"}
	}
	return p
}

func TestTokenReviewBindsPodsToTheirDataPlane(t *testing.T) {
	// dataPlane is the manager's check, played: the pod must run as the
	// Gateway's ServiceAccount and carry the annotation "sealed".
	dataPlane := func(_ context.Context, gw Key, pod *corev1.Pod) error {
		switch {
		case gw != (Key{Namespace: "ns", Name: "gw"}):
			return errors.New("no such Gateway")
		case pod.Spec.ServiceAccountName != "gw-nginx":
			return fmt.Errorf("it runs as ServiceAccount %q, not %q", pod.Spec.ServiceAccountName, "gw-nginx")
		case pod.Annotations["sealed"] != "yes":
			return errors.New("its spec is not one Gatewall rendered")
		}
		return nil
	}
	dualStack := []string{"10.0.0.7", "fd00::7"}
	for name, tc := range map[string]struct {
		sa       string
		deleting bool
		phase    corev1.PodPhase
		ips      []string
		sealed   bool
		check    PodCheck
		refusal  string
		retry    bool // the refusal is a RetryLater
		pod      bool // the refusal is a PodRefused
	}{
		"the Gateway's data plane": {sa: "gw-nginx", ips: dualStack, sealed: true, check: dataPlane},
		"no check":                 {sa: "gw-nginx", ips: dualStack[:1]},
		// The agent starts with its container; the kubelet reports the pod
		// Running only once every container has started, and its addresses
		// a moment after its sandbox runs.
		"a pod the kubelet has not reported Running yet": {sa: "gw-nginx", phase: corev1.PodPending, ips: dualStack, sealed: true, check: dataPlane},
		"a pod without its addresses yet":                {sa: "gw-nginx", phase: corev1.PodPending, sealed: true, check: dataPlane, refusal: "has no address reported yet", retry: true},
		"a pod that has failed":                          {sa: "gw-nginx", phase: corev1.PodFailed, ips: dualStack, refusal: "has finished (Failed)", pod: true},
		"a pod that has succeeded":                       {sa: "gw-nginx", phase: corev1.PodSucceeded, ips: dualStack, refusal: "has finished (Succeeded)", pod: true},
		"another ServiceAccount":                         {sa: "intruder", ips: dualStack, sealed: true, check: dataPlane, refusal: `runs as ServiceAccount "intruder", not "gw-nginx"`, pod: true},
		"the same ServiceAccount and label, not sealed":  {sa: "gw-nginx", ips: dualStack, check: dataPlane, refusal: "is not the data plane of Gateway ns/gw: its spec is not one Gatewall rendered", pod: true},
		"a terminating pod":                              {sa: "gw-nginx", deleting: true, ips: dualStack, sealed: true, check: dataPlane, refusal: "is terminating", pod: true},
		"a terminating pod, no check":                    {sa: "gw-nginx", deleting: true, ips: dualStack, refusal: "is terminating", pod: true},
		"two addresses of one family":                    {sa: "gw-nginx", ips: []string{"10.0.0.7", "10.0.0.8"}, refusal: "two of one family", pod: true},
		// A Gateway that is gone will not come back for this token; one that
		// could not be read might, on the agent's next try.
		"no Gateway to ask about": {sa: "gw-nginx", ips: dualStack, check: func(context.Context, Key, *corev1.Pod) error {
			return apierrors.NewNotFound(schema.GroupResource{Group: "gateway.networking.k8s.io", Resource: "gateways"}, "gw")
		}, refusal: `gateways.gateway.networking.k8s.io "gw" not found`, pod: true},
		"the Gateway could not be read": {sa: "gw-nginx", ips: dualStack, check: func(context.Context, Key, *corev1.Pod) error {
			return &RetryLater{Err: errors.New("the API server is unavailable")}
		}, refusal: "the API server is unavailable", retry: true},
	} {
		t.Run(name, func(t *testing.T) {
			p := dataPlanePod("gw-nginx-0", tc.sa, tc.deleting, tc.phase, tc.ips...)
			if tc.sealed {
				p.Annotations = map[string]string{"sealed": "yes"}
			}
			var opts []TokenReviewOption
			if tc.check != nil {
				opts = append(opts, RequirePod(tc.check))
			}
			id, err := NewTokenReviewAuthenticator(reviewingClient(t, tc.sa, p), "gatewall", opts...).Authenticate(context.Background(), "token-gw-nginx-0")
			switch {
			case tc.refusal == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.refusal == "" && id.Gateway != (Key{Namespace: "ns", Name: "gw"}):
				t.Fatalf("identity %+v", id)
			case tc.refusal == "":
				want, _ := ParsePodAddresses(tc.ips...)
				if id.Addresses != want {
					t.Fatalf("addresses %s, want the pod's, %s", id.Addresses, want)
				}
			case err == nil || !strings.Contains(err.Error(), tc.refusal):
				t.Fatalf("got %v, want a refusal saying %q", err, tc.refusal)
			}
			if later := (*RetryLater)(nil); errors.As(err, &later) != tc.retry {
				t.Fatalf("refusal %v: RetryLater %v, want %v", err, !tc.retry, tc.retry)
			}
			if pod := (*PodRefused)(nil); errors.As(err, &pod) != tc.pod {
				t.Fatalf("refusal %v: PodRefused %v, want %v", err, !tc.pod, tc.pod)
			} else if tc.pod && pod.Pod.Name != "gw-nginx-0" {
				t.Fatalf("the refusal names pod %s", pod.Pod)
			}
		})
	}
}

// TestPodAddresses: a pod's addresses, one of each family, compared as
// the peer's address reaches the server (an IPv4 peer of a dual-stack
// socket is IPv4-mapped).
func TestPodAddresses(t *testing.T) {
	a, err := ParsePodAddresses("10.0.0.7", "fd00::7")
	if err != nil {
		t.Fatal(err)
	}
	for addr, want := range map[string]bool{
		"10.0.0.7": true, "::ffff:10.0.0.7": true, "fd00::7": true,
		"10.0.0.8": false, "fd00::8": false, "": false,
	} {
		ip, _ := netip.ParseAddr(addr)
		if got := a.Has(ip); got != want {
			t.Errorf("Has(%q) = %v, want %v", addr, got, want)
		}
	}
	if _, err := ParsePodAddresses("10.0.0.x"); err == nil {
		t.Error("an address that does not parse was taken")
	}
	if z, _ := ParsePodAddresses(); !z.IsZero() || z.Has(netip.Addr{}) {
		t.Error("no addresses hold an address")
	}
}
