package faults

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
	"github.com/gatewall/gatewall/test/testenv"
)

// scene is a Gateway serving route app (app.example.com) with one
// data-plane pod, a steady load on that route, and a watch on the pod's
// NGINX.
type scene struct {
	ns    string
	gw    types.NamespacedName
	addr  string
	pod   corev1.Pod
	nginx *nginxWatch
	load  *testenv.Load
}

// setUp makes a scene in namespace ns. The Gateway's NginxProxy (named after
// the Gateway) asks for one replica.
func setUp(t *testing.T, ns string) *scene {
	t.Helper()
	s := &scene{ns: rt.Namespace(t, ns), gw: types.NamespacedName{Namespace: ns, Name: "gw"}}
	rt.GatewayClass(t)
	gw := testenv.Gateway(ns, "gw")
	gw.Spec.Infrastructure = &gatewayv1.GatewayInfrastructure{ParametersRef: &gatewayv1.LocalParametersReference{Group: "gateway.nginx.org", Kind: "NginxProxy", Name: "gw"}}
	rt.Create(t, nginxProxy(ns, "gw", 1), gw)
	rt.Create(t, testenv.Echo(ns, "echo", 2)...)
	rt.Create(t, testenv.HTTPRoute(ns, "app", "gw", "app.example.com", "/", "echo"))
	s.addr = rt.ProgrammedAddress(t, s.gw, 120*time.Second)
	testenv.Serves(t, s.addr, "app.example.com", "/", 200, `"pod": "echo-`, 60*time.Second)
	pods, err := dataPlanePods(ns, "gw")
	if err != nil || len(pods) != 1 {
		t.Fatalf("data-plane pods of %s: %d (%v), want 1", s.gw, len(pods), err)
	}
	s.pod = pods[0]
	s.nginx = watchNGINX(t, testenv.WaitProcess(t, s.pod, "nginx: master"))
	s.load = testenv.StartLoad(t, s.addr, "app.example.com", "/")
	return s
}

func nginxProxy(ns, name string, replicas int32) *v1alpha2.NginxProxy {
	return &v1alpha2.NginxProxy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha2.NginxProxySpec{Kubernetes: &v1alpha2.KubernetesSpec{
			Deployment: &v1alpha2.DeploymentSpec{Replicas: ptr.To(replicas)},
		}},
	}
}

// Big routes make a configuration large enough for its download to be
// caught in flight: each has two rules of 63 path matches of 1,000
// characters (the API allows 64 matches per rule, 128 per route), some
// 265 kB of NGINX configuration. They attach to the Gateway's listener
// "big", which the Gateway gets only when enableBig adds it: the whole
// configuration (some 1.3 MB) comes in one change, one version, one push.
const (
	bigRoutes   = 5
	bigRules    = 2
	bigMatches  = 63
	bigListener = "big"
)

// bigRoute is big route i, to the echo Service, for host big<i>.big.test.
func bigRoute(ns string, i int) *gatewayv1.HTTPRoute {
	r := testenv.HTTPRoute(ns, fmt.Sprintf("big%d", i), "gw", bigHost(i), "/", "echo")
	r.Spec.ParentRefs[0].SectionName = ptr.To(gatewayv1.SectionName(bigListener))
	proto := r.Spec.Rules[0]
	r.Spec.Rules = nil
	for k := 0; k < bigRules; k++ {
		rule := *proto.DeepCopy()
		rule.Matches = nil
		for m := 0; m < bigMatches; m++ {
			rule.Matches = append(rule.Matches, gatewayv1.HTTPRouteMatch{Path: &gatewayv1.HTTPPathMatch{
				Type: ptr.To(gatewayv1.PathMatchPathPrefix), Value: ptr.To(bigPath(k*bigMatches + m)),
			}})
		}
		r.Spec.Rules = append(r.Spec.Rules, rule)
	}
	return r
}

func bigHost(i int) string { return fmt.Sprintf("big%d.big.test", i) }

func bigPath(m int) string { return fmt.Sprintf("/m%03d/%s", m, strings.Repeat("x", 994)) }

// createBig creates the big routes and waits until the manager has seen
// them (each has a status): they are not part of the configuration yet.
func (s *scene) createBig(t *testing.T) {
	t.Helper()
	for i := 0; i < bigRoutes; i++ {
		rt.Create(t, bigRoute(s.ns, i))
	}
	testenv.Eventually(t, 60*time.Second, func() error {
		for i := 0; i < bigRoutes; i++ {
			r := &gatewayv1.HTTPRoute{}
			if err := rt.Client.Get(context.Background(), types.NamespacedName{Namespace: s.ns, Name: fmt.Sprintf("big%d", i)}, r); err != nil {
				return err
			}
			if len(r.Status.Parents) == 0 {
				return errf("big route %d has no status yet", i)
			}
		}
		return nil
	})
}

// enableBig adds the listener the big routes attach to.
func (s *scene) enableBig(t *testing.T) {
	t.Helper()
	gw := &gatewayv1.Gateway{}
	if err := rt.Client.Get(context.Background(), s.gw, gw); err != nil {
		t.Fatal(err)
	}
	gw.Spec.Listeners = append(gw.Spec.Listeners, gatewayv1.Listener{
		Name: bigListener, Port: 80, Protocol: gatewayv1.HTTPProtocolType, Hostname: ptr.To(gatewayv1.Hostname("*.big.test")),
	})
	if err := rt.Client.Update(context.Background(), gw); err != nil {
		t.Fatal(err)
	}
}

// servesBig waits until every big route answers 200.
func (s *scene) servesBig(t *testing.T, timeout time.Duration) {
	t.Helper()
	for i := 0; i < bigRoutes; i++ {
		testenv.Serves(t, s.addr, bigHost(i), bigPath(bigRules*bigMatches-1), 200, `"pod": "echo-`, timeout)
	}
}

// programmed is the Gateway's Programmed condition now.
func (s *scene) programmed(t *testing.T) *metav1.Condition {
	t.Helper()
	gw := &gatewayv1.Gateway{}
	if err := rt.Client.Get(context.Background(), s.gw, gw); err != nil {
		t.Fatal(err)
	}
	return meta.FindStatusCondition(gw.Status.Conditions, "Programmed")
}

// notProgrammed fails the test unless the Gateway is not Programmed now:
// its data plane does not run its configuration.
func (s *scene) notProgrammed(t *testing.T) {
	t.Helper()
	switch c := s.programmed(t); {
	case c == nil:
		t.Log("during the fault the Gateway has no Programmed condition")
	case c.Status == metav1.ConditionTrue:
		t.Errorf("Gateway %s is Programmed while its data plane cannot have its configuration: %+v", s.gw, c)
	default:
		t.Logf("during the fault the Gateway is not Programmed: %s: %s", c.Reason, c.Message)
	}
}

// converged waits until the Gateway is Programmed again, and returns how
// long after since it was.
func (s *scene) converged(t *testing.T, since time.Time) time.Duration {
	t.Helper()
	rt.ProgrammedAddress(t, s.gw, 120*time.Second)
	return time.Since(since)
}

// finish stops the load and the NGINX watch and checks both: no request
// failed, and NGINX only ever had the last good or the new configuration
// on disk and reloaded only with the new one, at most maxReloads times.
func (s *scene) finish(t *testing.T, old snapshot, maxReloads int) (sent, failed int64, reloads int) {
	t.Helper()
	time.Sleep(time.Second)
	sent, failed = s.load.Stop()
	if failed != 0 {
		t.Errorf("%d of %d requests to the unchanged route failed", failed, sent)
	}
	reloads = s.nginx.check(t, old, s.nginx.current(t), maxReloads)
	return sent, failed, reloads
}
