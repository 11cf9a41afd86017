package provisioner

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
	"github.com/gatewall/gatewall/internal/nginx/config"
)

// TestDataPlaneRunsUnprivilegedOnLowPorts: NGINX runs as uid 101 without
// privilege escalation and any capability, in a read-only root filesystem;
// the pod lets unprivileged processes bind ports below 1024 (a safe,
// per-network-namespace sysctl), so listeners on :80 and :443 work.
func TestDataPlaneRunsUnprivilegedOnLowPorts(t *testing.T) {
	for _, waf := range []v1alpha2.WAFState{v1alpha2.WAFDisabled, v1alpha2.WAFEnabled} {
		pod := find[*appsv1.Deployment](t, params(&v1alpha2.NginxProxySpec{WAF: waf})).Spec.Template.Spec
		ps := pod.SecurityContext
		if ps == nil || !ptr.Deref(ps.RunAsNonRoot, false) || ptr.Deref(ps.RunAsUser, 0) != nginxUID ||
			ps.SeccompProfile == nil || ps.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
			t.Errorf("WAF %s: pod security context %+v", waf, ps)
			continue
		}
		if len(ps.Sysctls) != 1 || ps.Sysctls[0] != (corev1.Sysctl{Name: "net.ipv4.ip_unprivileged_port_start", Value: "0"}) {
			t.Errorf("WAF %s: sysctls %+v: uid 101 cannot bind ports below 1024", waf, ps.Sysctls)
		}
		if pod.HostNetwork {
			t.Errorf("WAF %s: host network (the sysctl would be the node's)", waf)
		}
		for _, c := range pod.Containers {
			sc := c.SecurityContext
			if sc == nil || !ptr.Deref(sc.ReadOnlyRootFilesystem, false) || ptr.Deref(sc.AllowPrivilegeEscalation, true) ||
				ptr.Deref(sc.Privileged, false) || sc.Capabilities == nil || len(sc.Capabilities.Add) != 0 ||
				len(sc.Capabilities.Drop) != 1 || sc.Capabilities.Drop[0] != "ALL" {
				t.Errorf("WAF %s: container %s is not locked down: %+v", waf, c.Name, sc)
			}
		}
	}
}

// TestReadinessWaitsForTheGatewaysListeners: the NGINX container is Ready
// only once NGINX answers on the Gateway's readiness port, which only a
// pushed configuration listens on, never the bootstrap one; the kubelet
// asks over HTTP, running nothing in the container.
func TestReadinessWaitsForTheGatewaysListeners(t *testing.T) {
	withPort := params(&v1alpha2.NginxProxySpec{})
	withPort.ReadinessPort = 8082
	nginx := find[*appsv1.Deployment](t, withPort).Spec.Template.Spec.Containers[0]
	p := nginx.ReadinessProbe
	if p == nil || p.Exec != nil || p.HTTPGet == nil {
		t.Fatalf("readiness probe %+v, want an HTTP GET", p)
	}
	if g := p.HTTPGet; g.Path != config.ReadinessPath || g.Port.IntValue() != 8082 || g.Scheme != corev1.URISchemeHTTP {
		t.Errorf("readiness probe asks %s %s on %s, want HTTP %s on 8082", g.Scheme, g.Path, g.Port.String(), config.ReadinessPath)
	}
	if p.PeriodSeconds == 0 || p.PeriodSeconds > 5 {
		t.Errorf("probe period %ds: a pod becomes Ready that long after its configuration is applied", p.PeriodSeconds)
	}

	// The bootstrap configuration listens on no port: never Ready on it.
	_, file, _, _ := runtime.Caller(0)
	bootstrap, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "..", "build", "dataplane", "nginx-bootstrap.conf"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(bootstrap), "\n") {
		if f := strings.Fields(line); len(f) > 0 && (f[0] == "listen" || f[0] == "server") {
			t.Errorf("the bootstrap configuration has %q: the readiness probe assumes it listens on nothing", strings.TrimSpace(line))
		}
	}

	if p := find[*appsv1.Deployment](t, params(&v1alpha2.NginxProxySpec{})).Spec.Template.Spec.Containers[0].ReadinessProbe; p != nil {
		t.Errorf("a Gateway without a readiness port has a readiness probe %+v: there is nothing to ask", p)
	}
}

func TestOwns(t *testing.T) {
	gw := params(&v1alpha2.NginxProxySpec{}).Gateway
	ours := Objects(params(&v1alpha2.NginxProxySpec{}))[0]
	if !testOwner.Owns(gw, ours) {
		t.Fatal("an object provisioned for the Gateway is not owned by it")
	}
	for name, refs := range map[string][]metav1.OwnerReference{
		"no owner":            nil,
		"not as controller":   {{APIVersion: "gateway.networking.k8s.io/v1", Kind: "Gateway", Name: "gw", UID: gw.UID}},
		"a deleted namesake":  {{APIVersion: "gateway.networking.k8s.io/v1", Kind: "Gateway", Name: "gw", UID: "uid-0", Controller: ptr.To(true)}},
		"another kind":        {{APIVersion: "apps/v1", Kind: "Deployment", Name: "gw", UID: gw.UID, Controller: ptr.To(true)}},
		"another API's group": {{APIVersion: "example.com/v1", Kind: "Gateway", Name: "gw", UID: gw.UID, Controller: ptr.To(true)}},
	} {
		o := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "gw-nginx", OwnerReferences: refs,
			Annotations: map[string]string{ControllerAnnotation: testOwner.ControllerName}}}
		if testOwner.Owns(gw, o) {
			t.Errorf("%s: owned", name)
		}
	}
}

// TestOwnsOnlyItsInstallationsDataPlane: two installations (two
// controllerNames, two classes) may see the same Gateway; each owns only
// the data plane it made, whatever the Gateway's class is now.
func TestOwnsOnlyItsInstallationsDataPlane(t *testing.T) {
	gw := params(&v1alpha2.NginxProxySpec{}).Gateway
	other := Owner{ControllerName: "example.com/other", GatewayClassName: "other"}
	mine := Objects(params(&v1alpha2.NginxProxySpec{}))
	theirsParams := params(&v1alpha2.NginxProxySpec{})
	theirsParams.Owner = other
	theirs := Objects(theirsParams)
	for i := range mine {
		if !testOwner.Owns(gw, mine[i]) || other.Owns(gw, mine[i]) {
			t.Errorf("%s made by %s: owned by it %v, by the other %v", mine[i].GetName(), testOwner.ControllerName,
				testOwner.Owns(gw, mine[i]), other.Owns(gw, mine[i]))
		}
		if testOwner.Owns(gw, theirs[i]) || !other.Owns(gw, theirs[i]) {
			t.Errorf("%s made by %s: owned by the first %v, by it %v", theirs[i].GetName(), other.ControllerName,
				testOwner.Owns(gw, theirs[i]), other.Owns(gw, theirs[i]))
		}
	}
	// Objects made before the annotation belong to the installation of
	// the class they were made for.
	legacy := mine[0].DeepCopyObject().(client.Object)
	legacy.SetAnnotations(nil)
	if !testOwner.Owns(gw, legacy) || other.Owns(gw, legacy) {
		t.Errorf("an object without %s labelled class %q: owned by nginx's installation %v, by the other %v",
			ControllerAnnotation, legacy.GetLabels()[GatewayClassLabel], testOwner.Owns(gw, legacy), other.Owns(gw, legacy))
	}
	// The pods say which installation made them too.
	dep := find[*appsv1.Deployment](t, theirsParams)
	if got := dep.Spec.Template.Annotations[ControllerAnnotation]; got != other.ControllerName {
		t.Errorf("pod template annotation %s = %q, want %q", ControllerAnnotation, got, other.ControllerName)
	}
	// The Service sends traffic only to the data plane of the Gateway's
	// current class (another class's may still run while it changes).
	svc := find[*corev1.Service](t, theirsParams)
	if svc.Spec.Selector[GatewayClassLabel] != "nginx" {
		t.Errorf("Service selector %v does not select the class", svc.Spec.Selector)
	}
}
