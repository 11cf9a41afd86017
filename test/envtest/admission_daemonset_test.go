package envtest

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
	"github.com/gatewall/gatewall/internal/provisioner"
)

// TestManagerAdmissionDaemonSet: as the manager's ServiceAccount, the
// provisioner replaces a Deployment data plane (with its autoscaler and
// disruption budget) by a DaemonSet one and back; the admission policies
// pin a DaemonSet's pods as they pin a Deployment's.
func TestManagerAdmissionDaemonSet(t *testing.T) {
	ctx := context.Background()
	mgr := installRBAC(t)
	ns := "admission-daemonset"
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	gw, depObjs := dataPlane(t, ns)
	dsObjs := provisioner.Objects(provisioner.Params{
		Gateway: gw, NginxProxy: &v1alpha2.NginxProxySpec{Kubernetes: &v1alpha2.KubernetesSpec{DaemonSet: &v1alpha2.DaemonSetSpec{}}},
		Ports: []int32{80}, ReadinessPort: 8081, AgentConfig: []byte("command: {}\n"), AgentCA: []byte("CA"),
		AgentServer: "gatewall-agent.gatewall-system.svc:8443", AgentServerName: "gatewall-agent.gatewall-system.svc",
		Images: provisioner.DefaultImages, Owner: admissionOwner,
	})
	ds := find[*appsv1.DaemonSet](t, dsObjs)
	exists := func(o client.Object) bool {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(o), o.DeepCopyObject().(client.Object))
		if err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		return err == nil
	}
	for i, objs := range [][]client.Object{depObjs, dsObjs, depObjs} {
		if err := provisioner.Apply(ctx, mgr, nil, admissionOwner, gw, objs, nil); err != nil {
			t.Fatalf("applying data plane %d: %v", i, err)
		}
		if err := provisioner.Remove(ctx, mgr, admissionOwner, gw, objs); err != nil {
			t.Fatalf("removing what data plane %d does not have: %v", i, err)
		}
		isDS := i == 1
		if got := exists(ds); got != isDS {
			t.Errorf("data plane %d: the DaemonSet exists: %v, want %v", i, got, isDS)
		}
		for _, o := range depObjs {
			switch k := o.GetObjectKind().GroupVersionKind().Kind; k {
			case "Deployment", "HorizontalPodAutoscaler", "PodDisruptionBudget":
				if got := exists(o); got == isDS {
					t.Errorf("data plane %d: the %s exists: %v, want %v", i, k, got, !isDS)
				}
			}
		}
	}

	if err := provisioner.Apply(ctx, mgr, nil, admissionOwner, gw, dsObjs, nil); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, want string
		change     func(*corev1.PodSpec)
	}{
		{"the host's network", "no host namespace", func(p *corev1.PodSpec) { p.HostNetwork, p.SecurityContext.Sysctls = true, nil }},
		{"a host port", "binds no host port", func(p *corev1.PodSpec) {
			p.Containers[0].Ports = append(p.Containers[0].Ports, corev1.ContainerPort{ContainerPort: 80, HostPort: 80})
		}},
		{"a toleration of every taint", "placed by the scheduler", func(p *corev1.PodSpec) {
			p.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
		}},
		{"a privileged container", "not privileged", func(p *corev1.PodSpec) {
			p.Containers[0].SecurityContext.Privileged = ptr.To(true)
			p.Containers[0].SecurityContext.AllowPrivilegeEscalation = nil
		}},
	} {
		t.Run("refused: a DaemonSet with "+c.name, func(t *testing.T) {
			d := &appsv1.DaemonSet{}
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(ds), d); err != nil {
				t.Fatal(err)
			}
			before := d.DeepCopy()
			c.change(&d.Spec.Template.Spec)
			refusedSaying(t, c.want, func() error { return mgr.Patch(ctx, d.DeepCopy(), client.MergeFrom(before), client.DryRunAll) })
		})
	}
}
