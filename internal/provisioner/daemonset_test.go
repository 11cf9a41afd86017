package provisioner

import (
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/gatewall/gatewall/internal/podseal"
)

// TestDaemonSet: an NginxProxy with NGINX Gateway Fabric's daemonSet gets a
// DaemonSet and no Deployment, autoscaler or disruption budget; its pods
// are the Deployment's would-be pods, seal included, so everything that
// finds and checks data-plane pods (the agent server, pod problems, the
// Service) works for both kinds.
func TestDaemonSet(t *testing.T) {
	key := make([]byte, podseal.KeySize)
	const container = `
      container:
        image: {tag: "1.2.3"}
      pod:
        imagePullSecrets: [{name: registry}]`
	ds := params(decodeSpec(t, "kubernetes:\n    daemonSet:"+container))
	dep := params(decodeSpec(t, "kubernetes:\n    deployment:\n      replicas: 3"+container))
	ds.SealKey, dep.SealKey = key, key

	var got *appsv1.DaemonSet
	for _, o := range Objects(ds) {
		switch o := o.(type) {
		case *appsv1.DaemonSet:
			got = o
		case *appsv1.Deployment, *autoscalingv2.HorizontalPodAutoscaler, *policyv1.PodDisruptionBudget:
			t.Errorf("a %s beside the DaemonSet", kind(o))
		}
	}
	if got == nil {
		t.Fatal("no DaemonSet")
	}
	want := find[*appsv1.Deployment](t, dep)
	if got.Name != want.Name || !equality.Semantic.DeepEqual(got.OwnerReferences, want.OwnerReferences) ||
		!equality.Semantic.DeepEqual(got.Spec.Selector, want.Spec.Selector) {
		t.Errorf("DaemonSet %s owned by %+v selecting %v; want the Deployment's name, owner and selector", got.Name, got.OwnerReferences, got.Spec.Selector)
	}
	if !equality.Semantic.DeepEqual(got.Spec.Template, want.Spec.Template) {
		t.Errorf("the DaemonSet's pod template differs from the Deployment's:\n got %+v\nwant %+v", got.Spec.Template, want.Spec.Template)
	}
	if got.Spec.Template.Annotations[podseal.Annotation] == "" {
		t.Error("the DaemonSet's pods carry no seal")
	}
	if c := got.Spec.Template.Spec.Containers[0]; c.Image != "ghcr.io/gatewall/dataplane:1.2.3" {
		t.Errorf("NGINX image %s, want the daemonSet's tag", c.Image)
	}
	if _, ok := kindOf(got); !ok {
		t.Error("DaemonSet is not a data-plane kind: Apply refuses it and Remove never finds it")
	}
}

// TestTerminationGrace: the pods' termination grace is the NginxProxy's,
// for a Deployment's pods and a DaemonSet's, else the drain, the
// workerShutdownTimeout (60 s by default) and 5 s, and at least 30 s.
func TestTerminationGrace(t *testing.T) {
	for spec, want := range map[string]int64{
		`{}`:                              10 + 60 + 5,
		`{workerShutdownTimeout: 300s}`:   10 + 300 + 5,
		`{workerShutdownTimeout: 1500ms}`: 30,
		`{workerShutdownTimeout: 20s}`:    10 + 20 + 5,
		`{kubernetes: {daemonSet: {}}}`:   10 + 60 + 5,
		`{kubernetes: {deployment: {pod: {terminationGracePeriodSeconds: 90}}}}`: 90,
		`{kubernetes: {daemonSet: {pod: {terminationGracePeriodSeconds: 0}}}}`:   0,
	} {
		var got *int64
		for _, o := range Objects(params(decodeSpec(t, spec))) {
			switch o := o.(type) {
			case *appsv1.Deployment:
				got = o.Spec.Template.Spec.TerminationGracePeriodSeconds
			case *appsv1.DaemonSet:
				got = o.Spec.Template.Spec.TerminationGracePeriodSeconds
			}
		}
		if got == nil || *got != want {
			t.Errorf("%s: terminationGracePeriodSeconds %v, want %d", spec, ptr.Deref(got, -1), want)
		}
	}
}

// TestTopologySpread: each constraint spreads the pods of the Gateway's
// data plane for its current class (the Service's selector), whatever
// kind runs them.
func TestTopologySpread(t *testing.T) {
	const spec = `{kubernetes: {%s: {pod: {topologySpreadConstraints: [
		{maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule, minDomains: 2},
		{maxSkew: 2, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: ScheduleAnyway, nodeTaintsPolicy: Honor}]}}}}`
	for _, kind := range []string{"deployment", "daemonSet"} {
		p := params(decodeSpec(t, fmt.Sprintf(spec, kind)))
		var got []corev1.TopologySpreadConstraint
		for _, o := range Objects(p) {
			switch o := o.(type) {
			case *appsv1.Deployment:
				got = o.Spec.Template.Spec.TopologySpreadConstraints
			case *appsv1.DaemonSet:
				got = o.Spec.Template.Spec.TopologySpreadConstraints
			}
		}
		selector := find[*corev1.Service](t, p).Spec.Selector
		honor := corev1.NodeInclusionPolicyHonor
		want := []corev1.TopologySpreadConstraint{
			{MaxSkew: 1, TopologyKey: "topology.kubernetes.io/zone", WhenUnsatisfiable: corev1.DoNotSchedule, MinDomains: ptr.To(int32(2)),
				LabelSelector: &metav1.LabelSelector{MatchLabels: selector}},
			{MaxSkew: 2, TopologyKey: "kubernetes.io/hostname", WhenUnsatisfiable: corev1.ScheduleAnyway, NodeTaintsPolicy: &honor,
				LabelSelector: &metav1.LabelSelector{MatchLabels: selector}},
		}
		if !equality.Semantic.DeepEqual(got, want) {
			t.Errorf("%s: constraints\n got %+v\nwant %+v", kind, got, want)
		}
	}
}

// TestDrain: a deleted data-plane pod's containers pause (the kubelet's
// preStop sleep) before they are told to stop, so that load balancers stop
// sending NGINX connections while it still takes them, and what NGINX uses
// (the endpoints container, the WAF's) stays meanwhile: 10 s, or the whole
// termination grace when that is shorter (Kubernetes refuses a longer
// pause), none without a grace.
func TestDrain(t *testing.T) {
	for spec, want := range map[string]int64{
		`{}`:             10,
		`{waf: enabled}`: 10,
		`{kubernetes: {deployment: {pod: {terminationGracePeriodSeconds: 90}}}}`: 10,
		`{kubernetes: {daemonSet: {pod: {terminationGracePeriodSeconds: 3}}}}`:   3,
		`{kubernetes: {deployment: {pod: {terminationGracePeriodSeconds: 0}}}}`:  0,
	} {
		var pod *corev1.PodSpec
		for _, o := range Objects(params(decodeSpec(t, spec))) {
			switch o := o.(type) {
			case *appsv1.Deployment:
				pod = &o.Spec.Template.Spec
			case *appsv1.DaemonSet:
				pod = &o.Spec.Template.Spec
			}
		}
		if pod == nil {
			t.Fatalf("%s: no pods", spec)
		}
		if len(pod.Containers) < 2 {
			t.Fatalf("%s: containers %d; want NGINX and the endpoints container at least", spec, len(pod.Containers))
		}
		for _, c := range pod.Containers {
			var got int64
			if l := c.Lifecycle; l != nil && l.PreStop != nil && l.PreStop.Sleep != nil && l.PostStart == nil {
				got = l.PreStop.Sleep.Seconds
			} else if l != nil {
				t.Errorf("%s: container %s's lifecycle %+v; want a preStop sleep or none", spec, c.Name, l)
			}
			if got != want {
				t.Errorf("%s: container %s pauses %d s before it stops; want %d s", spec, c.Name, got, want)
			}
		}
		if g := pod.TerminationGracePeriodSeconds; g == nil || *g < want {
			t.Errorf("%s: termination grace %v shorter than the pause %d s", spec, ptr.Deref(g, -1), want)
		}
	}
}

// TestClassHookAndTheDrain: a class's lifecycle hook without a preStop
// keeps the drain's pause on NGINX; one with a preStop replaces it.
func TestClassHookAndTheDrain(t *testing.T) {
	for spec, wantSleep := range map[string]int64{
		`{kubernetes: {deployment: {container: {lifecycle: {postStart: {sleep: {seconds: 1}}}}}}}`: 10,
		`{kubernetes: {deployment: {container: {lifecycle: {preStop: {sleep: {seconds: 4}}}}}}}`:   4,
	} {
		for _, o := range Objects(params(decodeSpec(t, spec))) {
			d, ok := o.(*appsv1.Deployment)
			if !ok {
				continue
			}
			l := d.Spec.Template.Spec.Containers[0].Lifecycle
			if l == nil || l.PreStop == nil || l.PreStop.Sleep == nil || l.PreStop.Sleep.Seconds != wantSleep {
				t.Errorf("%s: NGINX's lifecycle %+v; want a preStop sleep of %d s", spec, l, wantSleep)
			}
		}
	}
}
