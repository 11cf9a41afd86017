package agente2e

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/gatewall/gatewall/internal/agent"
	"github.com/gatewall/gatewall/test/testenv"
)

const audience = "gatewall-agents"

// TestTokenReviewAuthenticator checks the TokenReview authenticator against a
// real API server (envtest), with bound tokens from the TokenRequest API;
// then a real agent authenticates with such a token end to end.
func TestTokenReviewAuthenticator(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, counted, reviews := startAPIServer(t)
	auth := agent.NewTokenReviewAuthenticator(counted, audience)

	ns := "team-a"
	mustCreate(t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	mustCreate(t, c, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gw-nginx"}})
	running := newPod(t, c, ns, "gw-nginx-0", map[string]string{agent.PodLabelGatewayName: "gw"}, corev1.PodRunning)
	token := requestToken(t, c, running, audience)

	t.Run("accepts a bound token of a running pod", func(t *testing.T) {
		id, err := auth.Authenticate(ctx, token)
		if err != nil {
			t.Fatal(err)
		}
		want := agent.Identity{Pod: types.NamespacedName{Namespace: ns, Name: "gw-nginx-0"}, Gateway: agent.Key{Namespace: ns, Name: "gw"}, Addresses: podAddress}
		if id != want {
			t.Fatalf("identity %+v, want %+v", id, want)
		}
	})
	// The screen refuses, without a review, what the API server would not
	// authenticate: it must read real tokens as the API server does.
	t.Run("screens out tokens of another audience, and only those", func(t *testing.T) {
		screen, ok := auth.(agent.TokenScreener)
		if !ok {
			t.Fatal("the TokenReview authenticator does not screen tokens")
		}
		if err := screen.ScreenToken(token); err != nil {
			t.Fatalf("a bound token of the audience was screened out: %v", err)
		}
		before := reviews.Load()
		err := screen.ScreenToken(requestToken(t, c, running, "someone-else"))
		if err == nil || !strings.Contains(err.Error(), `issued for the audiences ["someone-else"], not "`+audience+`"`) {
			t.Fatalf("a token of another audience: %v", err)
		}
		if reviews.Load() != before {
			t.Fatal("screening reviewed a token")
		}
	})

	refused := func(t *testing.T, a agent.Authenticator, token, why string) {
		t.Helper()
		_, err := a.Authenticate(ctx, token)
		if err == nil || !strings.Contains(err.Error(), why) {
			t.Fatalf("got %v, want a refusal saying %q", err, why)
		}
	}
	t.Run("refuses another audience", func(t *testing.T) {
		refused(t, agent.NewTokenReviewAuthenticator(c, "someone-else"), token, "not authenticated")
	})
	t.Run("refuses garbage", func(t *testing.T) {
		refused(t, auth, "not-a-token", "not authenticated")
	})
	// The agent starts with its container; the kubelet reports the pod
	// Running only once all its containers have started.
	t.Run("accepts a pod the kubelet has not reported Running yet", func(t *testing.T) {
		p := newPod(t, c, ns, "gw-nginx-pending", map[string]string{agent.PodLabelGatewayName: "gw"}, corev1.PodPending)
		if _, err := auth.Authenticate(ctx, requestToken(t, c, p, audience)); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("refuses a pod that has finished", func(t *testing.T) {
		p := newPod(t, c, ns, "gw-nginx-failed", map[string]string{agent.PodLabelGatewayName: "gw"}, corev1.PodFailed)
		refused(t, auth, requestToken(t, c, p, audience), "has finished (Failed)")
	})
	t.Run("refuses a pod without the Gateway label", func(t *testing.T) {
		p := newPod(t, c, ns, "unlabelled", nil, corev1.PodRunning)
		refused(t, auth, requestToken(t, c, p, audience), "has no label "+agent.PodLabelGatewayName)
	})
	t.Run("refuses the token of a deleted pod", func(t *testing.T) {
		p := newPod(t, c, ns, "gone", map[string]string{agent.PodLabelGatewayName: "gw"}, corev1.PodRunning)
		tok := requestToken(t, c, p, audience)
		if err := c.Delete(ctx, p, client.GracePeriodSeconds(0)); err != nil {
			t.Fatal(err)
		}
		waitFor(t, 10*time.Second, "the pod to be gone", func() (bool, string) {
			err := c.Get(ctx, client.ObjectKeyFromObject(p), &corev1.Pod{})
			return err != nil && strings.Contains(err.Error(), "not found"), ""
		})
		refused(t, auth, tok, "not authenticated")
	})
	t.Run("refuses a token not bound to a pod", func(t *testing.T) {
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gw-nginx"}}
		tr := &authnv1.TokenRequest{Spec: authnv1.TokenRequestSpec{Audiences: []string{audience}, ExpirationSeconds: ptr.To[int64](600)}}
		if err := c.SubResource("token").Create(ctx, sa, tr); err != nil {
			t.Fatal(err)
		}
		refused(t, auth, tr.Status.Token, "not bound to a pod")
	})

	t.Run("real agent", func(t *testing.T) {
		requireTools(t)
		cp := startControlPlane(t, controlPlaneOptions{auth: auth})
		key := agent.Key{Namespace: ns, Name: "gw"}
		pod := types.NamespacedName{Namespace: ns, Name: "gw-nginx-0"}
		dp := newDataPlane(t, cp, dataPlaneOptions{pod: pod, gateway: key, token: token})
		port := freePort(t, dp.ip)
		dp.start()
		v := cp.srv.SetConfig(key, mainConf(site(dp.ip, port, "reviewed")))
		if st := cp.waitPod(key, pod, agent.Applied, applyTimeout); st.AppliedVersion != v {
			t.Fatalf("applied %s, want %s", st.AppliedVersion, v)
		}
		waitBody(t, nil, url(dp.ip, port, "http"), "reviewed", 5*time.Second)
	})
}

// startAPIServer starts a real API server (envtest) for the test and returns
// a client of it, and one that also counts the TokenReviews it creates.
func startAPIServer(t *testing.T) (c, counted client.Client, reviews *atomic.Int64) {
	t.Helper()
	env, err := testenv.Start()
	if err != nil {
		t.Fatalf("%v (the API server comes from `make envtest-tools`)", err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("stopping the API server: %v", err)
		}
	})
	counting, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Client.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	reviews = new(atomic.Int64)
	counted = interceptor.NewClient(counting, interceptor.Funcs{
		Create: func(ctx context.Context, cl client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if _, ok := obj.(*authnv1.TokenReview); ok {
				reviews.Add(1)
			}
			return cl.Create(ctx, obj, opts...)
		},
	})
	return env.Client, counted, reviews
}

func mustCreate(t *testing.T, c client.Client, obj client.Object) {
	t.Helper()
	if err := c.Create(context.Background(), obj); err != nil {
		t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
	}
}

// newPod creates a pod of the ServiceAccount gw-nginx in phase, at
// podAddress (where the tests' data planes connect from).
func newPod(t *testing.T, c client.Client, ns, name string, labels map[string]string, phase corev1.PodPhase) *corev1.Pod {
	t.Helper()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec: corev1.PodSpec{
			ServiceAccountName: "gw-nginx",
			Containers:         []corev1.Container{{Name: "nginx", Image: "gatewall/dataplane:test"}},
		},
	}
	mustCreate(t, c, p)
	p.Status.Phase = phase
	p.Status.PodIP = podAddress.IPv4.String()
	p.Status.PodIPs = []corev1.PodIP{{IP: p.Status.PodIP}}
	if err := c.Status().Update(context.Background(), p); err != nil {
		t.Fatalf("setting pod %s %s: %v", name, phase, err)
	}
	return p
}

// requestToken returns a token of the pod's ServiceAccount bound to the pod.
func requestToken(t *testing.T, c client.Client, p *corev1.Pod, aud string) string {
	t.Helper()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: p.Spec.ServiceAccountName}}
	tr := &authnv1.TokenRequest{Spec: authnv1.TokenRequestSpec{
		Audiences:         []string{aud},
		ExpirationSeconds: ptr.To[int64](600),
		BoundObjectRef:    &authnv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: p.Name, UID: p.UID},
	}}
	if err := c.SubResource("token").Create(context.Background(), sa, tr); err != nil {
		t.Fatalf("requesting a token bound to pod %s: %v", p.Name, err)
	}
	return tr.Status.Token
}
