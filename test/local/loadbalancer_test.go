package local

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gatewall/gatewall/internal/local/loadbalancer"
)

func TestLoadBalancerServicesGetDistinctAddressesAndProxy(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, "lb")
	if _, err := env.client.AppsV1().Deployments(ns).Create(ctx, echoDeployment(ns, "echo", 2), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pods := waitReadyPods(t, ns, "app=echo", 2, 60*time.Second)
	for _, name := range []string{"gw-a", "gw-b"} {
		if _, err := env.client.CoreV1().Services(ns).Create(ctx, service(ns, name, "echo", corev1.ServiceTypeLoadBalancer), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	lbRange := netip.MustParsePrefix("127.0.1.0/24")
	addrs := map[string]string{}
	for _, name := range []string{"gw-a", "gw-b"} {
		eventually(t, 20*time.Second, name+" gets a load balancer address", func() (bool, string) {
			svc, err := env.client.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			ing := svc.Status.LoadBalancer.Ingress
			if len(ing) != 1 {
				return false, fmt.Sprint(ing)
			}
			a, err := netip.ParseAddr(ing[0].IP)
			addrs[name] = ing[0].IP
			return err == nil && lbRange.Contains(a), ing[0].IP
		})
	}
	if addrs["gw-a"] == addrs["gw-b"] {
		t.Fatalf("both Services got %s", addrs["gw-a"])
	}

	// Both Services listen on port 80, each on its own address, and spread
	// requests over both pods.
	for name, addr := range addrs {
		seen := map[string]int{}
		eventually(t, 20*time.Second, name+" proxies to both pods", func() (bool, string) {
			r, err := getEcho("http://" + addr + ":80/")
			if err != nil {
				return false, err.Error()
			}
			seen[r.Pod]++
			return len(seen) == 2, fmt.Sprint(seen)
		})
		for _, p := range pods {
			if seen[p.Name] == 0 {
				t.Errorf("%s never reached pod %s: %v", name, p.Name, seen)
			}
		}
	}

	// Scaling to zero empties the endpoints: connections are then closed.
	scale, err := env.client.AppsV1().Deployments(ns).GetScale(ctx, "echo", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	scale.Spec.Replicas = 0
	if _, err := env.client.AppsV1().Deployments(ns).UpdateScale(ctx, "echo", scale, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "no backend after scaling to zero", func() (bool, string) {
		_, err := getEcho("http://" + addrs["gw-a"] + ":80/")
		return err != nil, "still answering"
	})

	if err := env.client.CoreV1().Services(ns).Delete(ctx, "gw-a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "listener removed with the Service", func() (bool, string) {
		_, ok := env.node.LoadBalancerAddress(ns, "gw-a")
		if ok {
			return false, "address still assigned"
		}
		_, err := httpGet("http://" + addrs["gw-a"] + ":80/")
		return err != nil, "still listening"
	})
}

// A Service's spec.loadBalancerIP is honoured when the load balancer can give
// it; otherwise the Service gets no address and a LoadBalancerIPAssigned=False
// condition saying why, until the address is changed to a usable one.
func TestLoadBalancerHonoursRequestedAddress(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, "lbip")
	svc := service(ns, "gw", "echo", corev1.ServiceTypeLoadBalancer)
	svc.Spec.LoadBalancerIP = "10.99.99.99"
	if _, err := env.client.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "an address outside the range is refused in status", func() (bool, string) {
		s, err := env.client.CoreV1().Services(ns).Get(ctx, "gw", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		c := meta.FindStatusCondition(s.Status.Conditions, loadbalancer.ConditionLoadBalancerIP)
		if c == nil || c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, "outside the load balancer's range") {
			return false, fmt.Sprintf("conditions %v", s.Status.Conditions)
		}
		return len(s.Status.LoadBalancer.Ingress) == 0, fmt.Sprint(s.Status.LoadBalancer.Ingress)
	})
	s, err := env.client.CoreV1().Services(ns).Get(ctx, "gw", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s.Spec.LoadBalancerIP = "127.0.1.200"
	if _, err := env.client.CoreV1().Services(ns).Update(ctx, s, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "the requested address is given", func() (bool, string) {
		s, err := env.client.CoreV1().Services(ns).Get(ctx, "gw", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		ing := s.Status.LoadBalancer.Ingress
		ok := len(ing) == 1 && ing[0].IP == "127.0.1.200" && meta.FindStatusCondition(s.Status.Conditions, loadbalancer.ConditionLoadBalancerIP) == nil
		return ok, fmt.Sprintf("ingress %v, conditions %v", ing, s.Status.Conditions)
	})
	if a, ok := env.node.LoadBalancerAddress(ns, "gw"); !ok || a.String() != "127.0.1.200" {
		t.Errorf("load balancer address = %v, %v; want 127.0.1.200", a, ok)
	}
}
