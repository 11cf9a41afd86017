package envtest

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
	"github.com/gatewall/gatewall/internal/manager"
	"github.com/gatewall/gatewall/internal/manifest"
	"github.com/gatewall/gatewall/internal/provisioner"
	"github.com/gatewall/gatewall/test/testenv"
)

// managerUser is config/default's manager ServiceAccount, as the API server
// names it.
const managerUser = "system:serviceaccount:gatewall-system:gatewall-controller-manager"

// installRBAC applies config/default's ServiceAccount, RBAC and admission
// policies for real, and returns a client that acts as the manager's
// ServiceAccount (impersonated), once the policies are in force.
func installRBAC(t *testing.T) client.Client {
	t.Helper()
	ctx := context.Background()
	objs, err := manifest.Kustomize(filepath.Join(testenv.RepoRoot(), "config", "default"))
	if err != nil {
		t.Fatal(err)
	}
	var install []*unstructured.Unstructured
	for _, o := range objs {
		switch o.GetKind() {
		case "Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding",
			"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding":
			install = append(install, o)
		case "ConfigMap":
			if strings.HasSuffix(o.GetName(), "dataplane-placement") {
				install = append(install, o)
			}
		}
	}
	if err := manifest.Apply(ctx, env.Client, "gatewall-test", install); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(mgrConfig(), client.Options{Scheme: env.Client.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	// The API server loads new policies in the background.
	probe := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "admission-probe"}}
	testenv.Eventually(t, 30*time.Second, func() error {
		err := c.Create(ctx, probe, client.DryRunAll)
		if err == nil || !strings.Contains(err.Error(), "ValidatingAdmissionPolicy") {
			return fmt.Errorf("an unmarked ConfigMap is not refused yet: %v", err)
		}
		return nil
	})
	return c
}

// dataPlane is a data plane as the provisioner makes it, with WAF and the
// NginxProxy's Kubernetes settings, for a Gateway that exists.
func dataPlane(t *testing.T, ns string) (*gatewayv1.Gateway, []client.Object) {
	t.Helper()
	gw := &gatewayv1.Gateway{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gw"},
		Spec: gatewayv1.GatewaySpec{GatewayClassName: "nginx",
			Listeners: []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType}}},
	}
	if err := env.Client.Create(context.Background(), gw); err != nil {
		t.Fatal(err)
	}
	np := &v1alpha2.NginxProxySpec{WAF: v1alpha2.WAFEnabled, Kubernetes: &v1alpha2.KubernetesSpec{
		Deployment: &v1alpha2.DeploymentSpec{
			Replicas:            ptr.To(int32(2)),
			Autoscaling:         &v1alpha2.AutoscalingSpec{Enable: true, MinReplicas: ptr.To(int32(2)), MaxReplicas: 4, TargetCPUUtilizationPercentage: ptr.To(int32(70))},
			PodDisruptionBudget: &v1alpha2.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(1))},
			Pod: &v1alpha2.PodSpec{TerminationGracePeriodSeconds: ptr.To(int64(90)), TopologySpreadConstraints: []v1alpha2.TopologySpreadConstraint{{
				MaxSkew: 1, TopologyKey: "topology.kubernetes.io/zone", WhenUnsatisfiable: corev1.DoNotSchedule, MinDomains: ptr.To(int32(2)),
			}}},
		},
		Service: &v1alpha2.ServiceSpec{Type: ptr.To(corev1.ServiceTypeNodePort), ExternalTrafficPolicy: ptr.To(corev1.ServiceExternalTrafficPolicyLocal)},
	}}
	return gw, provisioner.Objects(provisioner.Params{
		Gateway: gw, NginxProxy: np, Ports: []int32{80, 443}, ReadinessPort: 8081,
		AgentConfig: []byte("command: {}\n"), AgentCA: []byte("CA"),
		AgentServer: "gatewall-agent.gatewall-system.svc:8443", AgentServerName: "gatewall-agent.gatewall-system.svc",
		Images: provisioner.DefaultImages, Owner: admissionOwner,
	})
}

var admissionOwner = provisioner.Owner{ControllerName: manager.DefaultControllerName, GatewayClassName: "nginx"}

// TestManagerAdmission runs config/rbac on a real API server, acting as the
// manager's ServiceAccount: the provisioner applies, changes and removes a
// real data plane, and the manager runs (its agent TLS Secret, leader
// election, caches) and provisions a Gateway; anything
// else it tries that is not a data plane (a tenant's object, a pod that
// could take credentials or the host, a token Secret, a Service that
// hijacks traffic) is refused by RBAC or by the admission policies, with
// the policy's reason. Other users are not restricted.
func TestManagerAdmission(t *testing.T) {
	ctx := context.Background()
	mgr := installRBAC(t)
	ns := "admission"
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	gw, objs := dataPlane(t, ns)

	t.Run("the provisioner applies, changes and removes a data plane", func(t *testing.T) {
		if err := provisioner.Apply(ctx, mgr, nil, admissionOwner, gw, objs, nil); err != nil {
			t.Fatalf("applying: %v", err)
		}
		var changed []client.Object
		for _, o := range objs {
			o = o.DeepCopyObject().(client.Object)
			if d, ok := o.(*appsv1.Deployment); ok {
				d.Spec.Replicas = ptr.To(int32(3))
			}
			changed = append(changed, o)
		}
		if err := provisioner.Apply(ctx, mgr, nil, admissionOwner, gw, changed, nil); err != nil {
			t.Fatalf("applying a change: %v", err)
		}
		// The change set 3 replicas; the data plane is autoscaled: they are
		// handed over to the autoscaler as they are.
		if err := provisioner.Apply(ctx, mgr, nil, admissionOwner, gw, objs, nil); err != nil {
			t.Fatalf("applying the autoscaled data plane again: %v", err)
		}
		d := &appsv1.Deployment{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(find[*appsv1.Deployment](t, objs)), d); err != nil {
			t.Fatal(err)
		}
		if got := ptr.Deref(d.Spec.Replicas, 0); got != 3 {
			t.Errorf("the autoscaled Deployment has %d replicas, want the 3 it had", got)
		}
		if err := provisioner.Remove(ctx, mgr, admissionOwner, gw, nil); err != nil {
			t.Fatalf("removing: %v", err)
		}
		if err := provisioner.Apply(ctx, mgr, nil, admissionOwner, gw, objs, nil); err != nil {
			t.Fatalf("applying again: %v", err)
		}
	})

	t.Run("the manager, as its ServiceAccount, makes its agent TLS Secret, leads and provisions a Gateway", func(t *testing.T) {
		m, err := manager.New(mgrConfig(), manager.Options{
			ControllerName: "gatewall.test/admission", GatewayClassName: "admission", Namespace: manager.DefaultNamespace,
			MetricsAddr: "0", ProbeAddr: "0", LeaderElection: true, LeaderElectionID: "admission-test",
			Agent: manager.AgentOptions{ListenAddress: "127.0.0.1:0", ServerAddress: "gatewall-agent.test:8443", TLSSecret: "admission-agent-tls"},
		})
		if err != nil {
			t.Fatal(err)
		}
		testenv.RunManager(t, m)
		class := &gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "admission"},
			Spec: gatewayv1.GatewayClassSpec{ControllerName: "gatewall.test/admission"}}
		led := &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "led"},
			Spec: gatewayv1.GatewaySpec{GatewayClassName: "admission",
				Listeners: []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType}}}}
		for _, o := range []client.Object{class, led} {
			if err := env.Client.Create(ctx, o); err != nil {
				t.Fatal(err)
			}
		}
		testenv.Eventually(t, 60*time.Second, func() error {
			for _, o := range []client.Object{&appsv1.Deployment{}, &corev1.Service{}, &corev1.ServiceAccount{}} {
				if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "led-admission"}, o); err != nil {
					return fmt.Errorf("the data plane: %w", err)
				}
			}
			s := &corev1.Secret{}
			return env.Client.Get(ctx, client.ObjectKey{Namespace: manager.DefaultNamespace, Name: "admission-agent-tls"}, s)
		})
	})

	// Objects of a tenant, which the manager must leave alone.
	tenantCM := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tenant"}, Data: map[string]string{"k": "v"}}
	tenantSvc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tenant"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}, Selector: map[string]string{"app": "tenant"}}}
	tenantDep := plainDeployment(ns, "tenant")
	for _, o := range []client.Object{tenantCM, tenantSvc, tenantDep} {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatalf("another user is restricted too: %v", err)
		}
	}

	deployment := func(change func(*corev1.PodSpec)) func() error {
		return func() error {
			d := &appsv1.Deployment{}
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(find[*appsv1.Deployment](t, objs)), d); err != nil {
				return err
			}
			before := d.DeepCopy()
			change(&d.Spec.Template.Spec)
			return mgr.Patch(ctx, d, client.MergeFrom(before), client.DryRunAll)
		}
	}
	marked := func(o client.Object) client.Object {
		o.SetLabels(map[string]string{provisioner.ManagedByLabel: "gatewall"})
		o.SetAnnotations(map[string]string{provisioner.ControllerAnnotation: admissionOwner.ControllerName})
		o.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: gatewayv1.GroupVersion.String(), Kind: "Gateway",
			Name: gw.Name, UID: gw.UID, Controller: ptr.To(true)}})
		return o
	}
	for _, c := range []struct {
		name, want string
		try        func() error
	}{
		{"a tenant's Deployment", "carry its marks", func() error {
			return mgr.Create(ctx, plainDeployment(ns, "new"), client.DryRunAll)
		}},
		{"a marked Deployment no Gateway owns", "whose controller is a Gateway", func() error {
			d := marked(plainDeployment(ns, "unowned"))
			d.SetOwnerReferences(nil)
			return mgr.Create(ctx, d, client.DryRunAll)
		}},
		{"changing a tenant's ConfigMap", "changes and deletes only objects a Gatewall installation made", func() error {
			cm := marked(tenantCM.DeepCopy())
			return mgr.Patch(ctx, cm, client.MergeFrom(tenantCM), client.DryRunAll)
		}},
		{"deleting a tenant's Service", "changes and deletes only objects a Gatewall installation made", func() error {
			return mgr.Delete(ctx, tenantSvc.DeepCopy(), client.DryRunAll)
		}},
		{"taking another installation's ConfigMap", "stays that installation's", func() error {
			cm := find[*corev1.ConfigMap](t, objs).DeepCopy()
			before := cm.DeepCopy()
			cm.Annotations = map[string]string{provisioner.ControllerAnnotation: "example.com/another"}
			return mgr.Patch(ctx, cm, client.MergeFrom(before), client.DryRunAll)
		}},
		{"a host path", "mounts only empty directories", deployment(func(p *corev1.PodSpec) {
			p.Volumes = append(p.Volumes, corev1.Volume{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}})
		})},
		{"another Secret", "mounts only empty directories", deployment(func(p *corev1.PodSpec) {
			p.Volumes = append(p.Volumes, corev1.Volume{Name: "s", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "db-password"}}})
		})},
		{"an API token", "mounts only empty directories", deployment(func(p *corev1.PodSpec) {
			p.Volumes = append(p.Volumes, corev1.Volume{Name: "t", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
				Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}}}}}})
		})},
		{"the automounted token", "mounts no API token", deployment(func(p *corev1.PodSpec) { p.AutomountServiceAccountToken = nil })},
		{"another ServiceAccount", "runs as its own ServiceAccount", deployment(func(p *corev1.PodSpec) { p.ServiceAccountName = "admin" })},
		{"the host's network", "no host namespace", deployment(func(p *corev1.PodSpec) {
			p.HostNetwork, p.SecurityContext.Sysctls = true, nil // the API server refuses a sysctl with the host's network
		})},
		{"a privileged container", "not privileged", deployment(func(p *corev1.PodSpec) {
			p.Containers[0].SecurityContext.Privileged = ptr.To(true)
			p.Containers[0].SecurityContext.AllowPrivilegeEscalation = nil // the API server refuses false with privileged
		})},
		{"an added capability", "adds no capability", deployment(func(p *corev1.PodSpec) {
			p.Containers[1].SecurityContext.Capabilities.Add = []corev1.Capability{"NET_ADMIN"}
		})},
		{"an init container that escalates", "cannot escalate", deployment(func(p *corev1.PodSpec) {
			p.InitContainers = []corev1.Container{{Name: "init", Image: "busybox",
				SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(true)}}}
		})},
		{"a host port", "binds no host port", deployment(func(p *corev1.PodSpec) {
			p.Containers[0].Ports = append(p.Containers[0].Ports, corev1.ContainerPort{ContainerPort: 80, HostPort: 80})
		})},
		{"a node of its choosing", "placed by the scheduler", deployment(func(p *corev1.PodSpec) { p.NodeName = "control-plane-1" })},
		{"a node selector", "placed by the scheduler", deployment(func(p *corev1.PodSpec) {
			p.NodeSelector = map[string]string{"node-role.kubernetes.io/control-plane": ""}
		})},
		{"a toleration of every taint", "placed by the scheduler", deployment(func(p *corev1.PodSpec) {
			p.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
		})},
		{"another scheduler", "placed by the scheduler", deployment(func(p *corev1.PodSpec) { p.SchedulerName = "mine" })},
		{"a priority class", "placed by the scheduler", deployment(func(p *corev1.PodSpec) { p.PriorityClassName = "system-node-critical" })},
		{"a runtime class", "placed by the scheduler", deployment(func(p *corev1.PodSpec) { p.RuntimeClassName = ptr.To("unconfined") })},
		{"the host's users", "placed by the scheduler", deployment(func(p *corev1.PodSpec) { p.HostUsers = ptr.To(true) })},
		{"root in the pod", "other than root", deployment(func(p *corev1.PodSpec) {
			p.SecurityContext.RunAsUser, p.SecurityContext.RunAsNonRoot = ptr.To(int64(0)), ptr.To(false)
		})},
		{"no seccomp profile", "default seccomp profile", deployment(func(p *corev1.PodSpec) {
			p.SecurityContext.SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined}
		})},
		{"another sysctl", "no sysctl but", deployment(func(p *corev1.PodSpec) {
			p.SecurityContext.Sysctls = append(p.SecurityContext.Sysctls, corev1.Sysctl{Name: "net.ipv4.tcp_syncookies", Value: "0"})
		})},
		{"a container as root", "never root", deployment(func(p *corev1.PodSpec) {
			p.Containers[0].SecurityContext.RunAsUser = ptr.To(int64(0))
			p.Containers[0].SecurityContext.RunAsNonRoot = nil
		})},
		{"a container without seccomp", "never root", deployment(func(p *corev1.PodSpec) {
			p.Containers[1].SecurityContext.SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined}
		})},
		{"a writable root filesystem", "read-only root filesystem", deployment(func(p *corev1.PodSpec) {
			p.Containers[0].SecurityContext.ReadOnlyRootFilesystem = ptr.To(false)
		})},
		{"capabilities kept", "drops every capability", deployment(func(p *corev1.PodSpec) {
			p.Containers[1].SecurityContext.Capabilities.Drop = nil
		})},
		{"a Secret in the environment", "no Secret or ConfigMap in its environment", deployment(func(p *corev1.PodSpec) {
			p.Containers[0].Env = append(p.Containers[0].Env, corev1.EnvVar{Name: "P", ValueFrom: &corev1.EnvVarSource{
				SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "db"}, Key: "password"}}})
		})},
		{"a ConfigMap as the environment", "no Secret or ConfigMap in its environment", deployment(func(p *corev1.PodSpec) {
			p.Containers[0].EnvFrom = []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "x"}}}}
		})},
		{"a ServiceAccount token Secret", "a ServiceAccount token Secret would mint a token", func() error {
			s := marked(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "token"}, Type: corev1.SecretTypeServiceAccountToken})
			s.GetAnnotations()[corev1.ServiceAccountNameKey] = "admin"
			return mgr.Create(ctx, s, client.DryRunAll)
		}},
		{"a Secret no Gateway owns, outside the manager's namespace", "whose controller is a Gateway", func() error {
			s := marked(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "loose"}})
			s.SetOwnerReferences(nil)
			return mgr.Create(ctx, s, client.DryRunAll)
		}},
		{"a Service with external IPs", "claims no external IPs", func() error {
			s := find[*corev1.Service](t, objs).DeepCopy()
			s.Name, s.Spec.ExternalIPs = "changed-"+s.Name, []string{"203.0.113.7"}
			return mgr.Create(ctx, s, client.DryRunAll)
		}},
		{"a Service that selects a tenant's pods", "selects data-plane pods", func() error {
			s := find[*corev1.Service](t, objs).DeepCopy()
			s.Name, s.Spec.Selector = "changed-"+s.Name, map[string]string{"app": "tenant"}
			return mgr.Create(ctx, s, client.DryRunAll)
		}},
		{"an autoscaler that scales a tenant's Deployment", "scales its own Deployment", func() error {
			h := find[*autoscalingv2.HorizontalPodAutoscaler](t, objs).DeepCopy()
			h.Name, h.Spec.ScaleTargetRef.Name = "changed-"+h.Name, tenantDep.Name
			return mgr.Create(ctx, h, client.DryRunAll)
		}},
		{"an autoscaler that scales another kind", "scales its own Deployment", func() error {
			h := find[*autoscalingv2.HorizontalPodAutoscaler](t, objs).DeepCopy()
			h.Spec.ScaleTargetRef.APIVersion, h.Spec.ScaleTargetRef.Kind = "example.com/v1", "Deployment"
			h.Name = "changed-" + h.Name
			h.Spec.ScaleTargetRef.Name = h.Name
			return mgr.Create(ctx, h, client.DryRunAll)
		}},
		{"a disruption budget that selects a tenant's pods", "selects data-plane pods", func() error {
			b := find[*policyv1.PodDisruptionBudget](t, objs).DeepCopy()
			b.Name, b.Spec.Selector = "changed-"+b.Name, &metav1.LabelSelector{MatchLabels: map[string]string{"app": "tenant"}}
			return mgr.Create(ctx, b, client.DryRunAll)
		}},
		{"an ExternalName Service", "is not an ExternalName", func() error {
			s := marked(&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "external"},
				Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "example.com",
					Selector: map[string]string{provisioner.ManagedByLabel: "gatewall"}}})
			return mgr.Create(ctx, s, client.DryRunAll)
		}},
		// RBAC: verbs and kinds the ClusterRole does not grant.
		{"a replace (update) of its own ConfigMap", "forbidden: User", func() error {
			cm := &corev1.ConfigMap{}
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(find[*corev1.ConfigMap](t, objs)), cm); err != nil {
				return err
			}
			return mgr.Update(ctx, cm, client.DryRunAll)
		}},
		{"a pod", "forbidden: User", func() error {
			return mgr.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "p"},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}, client.DryRunAll)
		}},
		{"a RoleBinding", "forbidden: User", func() error {
			return mgr.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "rb"},
				RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
				Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "default", Namespace: ns}}}, client.DryRunAll)
		}},
	} {
		t.Run("refused: "+c.name, func(t *testing.T) {
			refusedSaying(t, c.want, c.try)
		})
	}
}

// mgrConfig is a rest config that acts as the manager's ServiceAccount.
func mgrConfig() *rest.Config {
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: managerUser,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:gatewall-system", "system:authenticated"}}
	return cfg
}

func find[T client.Object](t *testing.T, objs []client.Object) T {
	t.Helper()
	for _, o := range objs {
		if v, ok := o.(T); ok {
			return v
		}
	}
	t.Fatalf("no %T among the data plane's objects", *new(T))
	return *new(T)
}

// plainDeployment is a Deployment such as a tenant makes.
//
// Its pod passes the manager-pods policy (its own ServiceAccount, no API
// token), so a refusal comes from the rule a case names: when two policies
// refuse a request, which one the API server reports is not fixed.
func plainDeployment(ns, name string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				// A pod the pods policy allows: only the other policies refuse it.
				Spec: corev1.PodSpec{ServiceAccountName: name, AutomountServiceAccountToken: ptr.To(false),
					SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To(int64(101)),
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
					Containers: []corev1.Container{{Name: "c", Image: "busybox", SecurityContext: &corev1.SecurityContext{
						ReadOnlyRootFilesystem: ptr.To(true), Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}}}}}},
	}
}

// refusedSaying checks that try is refused (forbidden or invalid) with a
// message saying want. The API server loads admission policies in the
// background, each on its own: installRBAC's probe proves one is loaded,
// not every one, so a try that passes is tried again for a while (a
// policy once loaded refuses every time; one never loaded fails the test).
func refusedSaying(t *testing.T, want string, try func() error) {
	t.Helper()
	var err error
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		err = try()
		if err != nil || time.Now().After(deadline) {
			break
		}
	}
	if err == nil || !strings.Contains(err.Error(), want) || !apierrors.IsForbidden(err) && !apierrors.IsInvalid(err) {
		t.Errorf("got %v, want a refusal saying %q", err, want)
	}
}
