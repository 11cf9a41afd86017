package provisioner

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
)

func params(np *v1alpha2.NginxProxySpec) Params {
	return Params{
		Gateway: &gatewayv1.Gateway{
			ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "gw", UID: "uid-1"},
			Spec:       gatewayv1.GatewaySpec{GatewayClassName: "nginx"},
		},
		NginxProxy:  np,
		Ports:       []int32{443, 80, 80},
		AgentConfig: []byte("command: {}\n"),
		AgentCA:     []byte("CA"),
		AgentServer: "gatewall-agent.gatewall-system.svc:8443", AgentServerName: "gatewall-agent.gatewall-system.svc",
		Images: DefaultImages,
		Owner:  testOwner,
	}
}

// testOwner is the installation the tests' objects are made by.
var testOwner = Owner{ControllerName: "gateway.nginx.org/nginx-gateway-controller", GatewayClassName: "nginx"}

func find[T any](t *testing.T, p Params) T {
	t.Helper()
	for _, o := range Objects(p) {
		if v, ok := o.(T); ok {
			return v
		}
	}
	t.Fatalf("no %T among the objects", *new(T))
	return *new(T)
}

func TestObjectsDefaults(t *testing.T) {
	p := params(&v1alpha2.NginxProxySpec{})
	for _, o := range Objects(p) {
		if o.GetNamespace() != "apps" || o.GetName() == "" || o.GetLabels()[GatewayNameLabel] != "gw" {
			t.Errorf("%T %s: wrong namespace, name or labels: %v", o, o.GetName(), o.GetLabels())
		}
		if refs := o.GetOwnerReferences(); len(refs) != 1 || refs[0].UID != "uid-1" || !ptr.Deref(refs[0].Controller, false) {
			t.Errorf("%T %s is not owned by the Gateway: %+v", o, o.GetName(), refs)
		}
	}
	dep := find[*appsv1.Deployment](t, p)
	if dep.Name != "gw-nginx" || *dep.Spec.Replicas != 1 {
		t.Errorf("deployment %s with %d replicas", dep.Name, *dep.Spec.Replicas)
	}
	pod := dep.Spec.Template.Spec
	if len(pod.Containers) != 2 || pod.Containers[0].Image != DefaultImages.NGINX || pod.Containers[1].Name != EndpointsContainer {
		t.Fatalf("containers: %+v; want NGINX's and the endpoints client's", pod.Containers)
	}
	c := pod.Containers[0]
	sc := c.SecurityContext
	if !*pod.SecurityContext.RunAsNonRoot || !*sc.ReadOnlyRootFilesystem || *sc.AllowPrivilegeEscalation ||
		len(sc.Capabilities.Drop) != 1 || sc.Capabilities.Drop[0] != "ALL" {
		t.Errorf("not locked down: pod %+v container %+v", pod.SecurityContext, sc)
	}
	if len(c.Ports) != 1 || c.Ports[0].Name != MetricsPortName || c.Ports[0].ContainerPort != v1alpha2.DefaultMetricsPort {
		t.Errorf("container ports: %+v; want the metrics port alone", c.Ports)
	}
	if a := dep.Spec.Template.Annotations; a[ScrapeAnnotation] != "true" || a[ScrapePortAnnotation] != "9113" || a[ScrapePathAnnotation] != "/metrics" {
		t.Errorf("pod annotations %v do not tell Prometheus to scrape :9113/metrics", a)
	}
	// The metrics stay in the cluster: not a port of the Gateway's Service.
	svc := find[*corev1.Service](t, p)
	if svc.Spec.Type != corev1.ServiceTypeLoadBalancer || len(svc.Spec.Ports) != 2 {
		t.Errorf("service: %+v", svc.Spec)
	}
	if svc.Spec.Selector[GatewayNameLabel] != "gw" || dep.Spec.Selector.MatchLabels[GatewayNameLabel] != "gw" {
		t.Errorf("selectors do not select the Gateway's pods")
	}
}

// TestPodTemplateDoesNotFollowListenerPorts: listeners added, removed or
// turning invalid change the Service, not the pod template, so NGINX takes
// them with a reload instead of every pod restarting.
func TestPodTemplateDoesNotFollowListenerPorts(t *testing.T) {
	p := params(&v1alpha2.NginxProxySpec{})
	more := params(&v1alpha2.NginxProxySpec{})
	more.Ports = []int32{80, 443, 8443, 9443}
	fewer := params(&v1alpha2.NginxProxySpec{})
	fewer.Ports = []int32{80}
	want := find[*appsv1.Deployment](t, p).Spec.Template
	for name, q := range map[string]Params{"more": more, "fewer": fewer} {
		if got := find[*appsv1.Deployment](t, q).Spec.Template; !equality.Semantic.DeepEqual(got, want) {
			t.Errorf("%s listener ports changed the pod template; nginx container ports %+v, want %+v",
				name, got.Spec.Containers[0].Ports, want.Spec.Containers[0].Ports)
		}
		if svc := find[*corev1.Service](t, q); len(svc.Spec.Ports) != len(q.Ports) {
			t.Errorf("%s listener ports: Service ports %+v, want %v", name, svc.Spec.Ports, q.Ports)
		}
	}
}

// TestObjectsMetrics: the NginxProxy moves or turns off the metrics port
// and its scrape annotations; the Gateway's own annotations win.
func TestObjectsMetrics(t *testing.T) {
	// The class lets its Gateways set prometheus.io/ annotations.
	moved := params(&v1alpha2.NginxProxySpec{Metrics: &v1alpha2.Metrics{Port: ptr.To(int32(9200))},
		AllowGatewayOverrides: &v1alpha2.GatewayOverrides{InfrastructureKeys: []string{"prometheus.io/"}}})
	moved.Gateway.Spec.Infrastructure = &gatewayv1.GatewayInfrastructure{Annotations: map[gatewayv1.AnnotationKey]gatewayv1.AnnotationValue{ScrapeAnnotation: "false"}}
	dep := find[*appsv1.Deployment](t, moved)
	ports := dep.Spec.Template.Spec.Containers[0].Ports
	if last := ports[len(ports)-1]; last.Name != MetricsPortName || last.ContainerPort != 9200 {
		t.Errorf("container ports %+v, want metrics on 9200", ports)
	}
	if a := dep.Spec.Template.Annotations; a[ScrapeAnnotation] != "false" || a[ScrapePortAnnotation] != "9200" {
		t.Errorf("pod annotations %v: the Gateway's scrape=false must stay, port 9200", a)
	}

	off := find[*appsv1.Deployment](t, params(&v1alpha2.NginxProxySpec{Metrics: &v1alpha2.Metrics{Disable: ptr.To(true)}}))
	for _, p := range off.Spec.Template.Spec.Containers[0].Ports {
		if p.Name == MetricsPortName {
			t.Errorf("metrics disabled, but the container has port %+v", p)
		}
	}
	if _, ok := off.Spec.Template.Annotations[ScrapeAnnotation]; ok {
		t.Errorf("metrics disabled, but the pod asks to be scraped: %v", off.Spec.Template.Annotations)
	}
}

func TestObjectsFromNginxProxy(t *testing.T) {
	np := &v1alpha2.NginxProxySpec{
		WAF:      v1alpha2.WAFEnabled,
		IPFamily: ptr.To(v1alpha2.IPFamilyIPv4),
		Kubernetes: &v1alpha2.KubernetesSpec{
			Deployment: &v1alpha2.DeploymentSpec{
				Replicas:  ptr.To(int32(3)),
				Container: &v1alpha2.ContainerSpec{Image: &v1alpha2.Image{Tag: ptr.To("1.2.3")}},
				WAFContainers: &v1alpha2.WAFContainers{
					Enforcer: &v1alpha2.ContainerSpec{Image: &v1alpha2.Image{Repository: ptr.To("registry.example.com:5000/waf/enforcer")}},
				},
			},
			Service: &v1alpha2.ServiceSpec{Type: ptr.To(corev1.ServiceTypeNodePort), ExternalTrafficPolicy: ptr.To(corev1.ServiceExternalTrafficPolicyLocal)},
		},
	}
	p := params(np)
	dep := find[*appsv1.Deployment](t, p)
	if *dep.Spec.Replicas != 3 {
		t.Errorf("replicas %d", *dep.Spec.Replicas)
	}
	names := map[string]corev1.Container{}
	for _, c := range dep.Spec.Template.Spec.Containers {
		names[c.Name] = c
	}
	if names["nginx"].Image != "ghcr.io/gatewall/dataplane:1.2.3" {
		t.Errorf("nginx image %s", names["nginx"].Image)
	}
	if names["waf-enforcer"].Image != "registry.example.com:5000/waf/enforcer:5.9.0" || names["waf-config-mgr"].Image != DefaultImages.WAFConfigMgr {
		t.Errorf("WAF containers: %+v", names)
	}
	mounted := func(c corev1.Container, path string) bool {
		for _, m := range c.VolumeMounts {
			if m.MountPath == path {
				return true
			}
		}
		return false
	}
	for _, c := range []string{"nginx", "waf-config-mgr"} {
		if !mounted(names[c], WAFBundlesDir) {
			t.Errorf("%s does not mount the shared bundles volume", c)
		}
	}
	if !mounted(names["waf-enforcer"], wafBDConfigDir) || !mounted(names["nginx"], wafBDConfigDir) {
		t.Errorf("NGINX and the enforcer do not share bd_config")
	}
	svc := find[*corev1.Service](t, p)
	if svc.Spec.Type != corev1.ServiceTypeNodePort || svc.Spec.ExternalTrafficPolicy != corev1.ServiceExternalTrafficPolicyLocal ||
		len(svc.Spec.IPFamilies) != 1 || svc.Spec.IPFamilies[0] != corev1.IPv4Protocol {
		t.Errorf("service: %+v", svc.Spec)
	}
}

func TestNameIsShortenedStably(t *testing.T) {
	gw := &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Name: strings.Repeat("g", 60)}, Spec: gatewayv1.GatewaySpec{GatewayClassName: "nginx"}}
	n := Name(gw)
	if len(n) > 63 || n != Name(gw) {
		t.Errorf("Name = %q (%d)", n, len(n))
	}
}

func TestAgentConfigChangeRollsPods(t *testing.T) {
	a := find[*appsv1.Deployment](t, params(&v1alpha2.NginxProxySpec{}))
	p := params(&v1alpha2.NginxProxySpec{})
	p.AgentConfig = []byte("log: {level: debug}\n")
	b := find[*appsv1.Deployment](t, p)
	if a.Spec.Template.Annotations["gatewall.io/agent-config-hash"] == b.Spec.Template.Annotations["gatewall.io/agent-config-hash"] {
		t.Error("the pod template does not change with the agent configuration")
	}
}

// TestInfrastructureMetadata: spec.infrastructure labels and annotations
// reach every object and the pods; Gatewall's own labels cannot be overridden.
func TestInfrastructureMetadata(t *testing.T) {
	p := params(&v1alpha2.NginxProxySpec{})
	p.Gateway.Spec.Infrastructure = &gatewayv1.GatewayInfrastructure{
		Labels:      map[gatewayv1.LabelKey]gatewayv1.LabelValue{"team": "payments", GatewayNameLabel: "spoofed"},
		Annotations: map[gatewayv1.AnnotationKey]gatewayv1.AnnotationValue{"cost-center": "42"},
	}
	check := func(what string, labels, annotations map[string]string) {
		if labels["team"] != "payments" || labels[GatewayNameLabel] != "gw" {
			t.Errorf("%s labels: %v", what, labels)
		}
		if annotations["cost-center"] != "42" {
			t.Errorf("%s annotations: %v", what, annotations)
		}
	}
	for _, o := range Objects(p) {
		check(fmt.Sprintf("%T %s", o, o.GetName()), o.GetLabels(), o.GetAnnotations())
	}
	tpl := find[*appsv1.Deployment](t, p).Spec.Template
	check("pod template", tpl.Labels, tpl.Annotations)
	if tpl.Annotations[agentConfigHashAnnotation] == "" {
		t.Error("the agent configuration hash is gone from the pod template")
	}
}

// TestEndpointsClientContainer: every data-plane pod runs the endpoints
// client beside NGINX, from NGINX's image (an NginxProxy's too), locked
// down, with the agent's server, token and CA and NGINX's run directory
// (its control socket and the state file), and nothing else.
func TestEndpointsClientContainer(t *testing.T) {
	repo := "registry.example.com/dataplane"
	p := params(&v1alpha2.NginxProxySpec{Kubernetes: &v1alpha2.KubernetesSpec{Deployment: &v1alpha2.DeploymentSpec{
		Container: &v1alpha2.ContainerSpec{Image: &v1alpha2.Image{Repository: &repo}}}}})
	pod := find[*appsv1.Deployment](t, p).Spec.Template.Spec
	var c *corev1.Container
	for i := range pod.Containers {
		if pod.Containers[i].Name == EndpointsContainer {
			c = &pod.Containers[i]
		}
	}
	if c == nil {
		t.Fatalf("no %s container among %+v", EndpointsContainer, pod.Containers)
	}
	if c.Image != pod.Containers[0].Image || c.Image != repo+":edge" {
		t.Errorf("image %q, want NGINX's %q", c.Image, pod.Containers[0].Image)
	}
	wantArgs := []string{"--server=gatewall-agent.gatewall-system.svc:8443", "--server-name=gatewall-agent.gatewall-system.svc",
		"--ca-file=" + AgentCADir + "/" + AgentCAFile, "--token-file=" + AgentTokenDir + "/" + AgentTokenFile}
	if !slices.Equal(c.Command, []string{"/usr/bin/gatewall-endpoints"}) || !slices.Equal(c.Args, wantArgs) {
		t.Errorf("command %v %v, want gatewall-endpoints %v", c.Command, c.Args, wantArgs)
	}
	var mounts []string
	for _, m := range c.VolumeMounts {
		mounts = append(mounts, m.Name+":"+m.MountPath)
	}
	if want := []string{"nginx-run:/var/run/nginx", "agent-token:" + AgentTokenDir, "agent-ca:" + AgentCADir}; !slices.Equal(mounts, want) {
		t.Errorf("mounts %v, want %v", mounts, want)
	}
	if sc := c.SecurityContext; !*sc.ReadOnlyRootFilesystem || *sc.AllowPrivilegeEscalation || len(c.Ports) != 0 {
		t.Errorf("not locked down or has ports: %+v %+v", sc, c.Ports)
	}
}
