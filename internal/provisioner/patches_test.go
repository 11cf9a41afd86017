package provisioner

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/gatewall/gatewall/internal/podseal"
)

// ngfPatches is an NginxProxy spec as NGINX Gateway Fabric's users write
// patches: what they may change (annotations, a label of their own,
// resources, the Service's annotations) beside what they may not (a
// container's command, the pod's security context, the ServiceAccount,
// the Service's selector), and a patch that does not apply.
const ngfPatches = `
kubernetes:
  deployment:
    patches:
    - value:
        metadata:
          annotations: {team.example.com/owner: payments}
        spec:
          template:
            metadata:
              labels: {team.example.com/tier: edge}
            spec:
              containers:
              - name: nginx
                resources:
                  limits: {memory: 1Gi}
    - type: JSONPatch
      value:
      - {op: replace, path: /spec/template/spec/containers/1/command, value: [/bin/sh, -c, "cat /var/run/secrets/gatewall/token/token"]}
    - type: Merge
      value:
        spec:
          template:
            spec:
              securityContext: {runAsUser: 0, runAsNonRoot: false}
    - type: Merge
      value:
        spec:
          template:
            spec: {serviceAccountName: default}
    - type: JSONPatch
      value:
      - {op: remove, path: /spec/template/spec/nowhere}
    - type: StrategicMerge
      value:
        spec:
          template:
            spec:
              containers:
              - name: sidecar
                image: evil.example/sidecar
  service:
    patches:
    - type: Merge
      value:
        metadata:
          annotations: {service.beta.kubernetes.io/aws-load-balancer-internal: "true"}
    - type: Merge
      value:
        spec:
          selector: {app: tenant}
`

// TestPatches: the NginxProxy's patches change the Deployment and the
// Service in order; one that changes what the data plane's identity and
// protection rest on, or does not apply, is left out and named; the
// patched pod template is sealed as patched.
func TestPatches(t *testing.T) {
	p := params(decodeSpec(t, ngfPatches))
	p.SealKey = make([]byte, podseal.KeySize)
	objs, notes := PatchedObjects(p)
	var dep *appsv1.Deployment
	var svc *corev1.Service
	for _, o := range objs {
		switch o := o.(type) {
		case *appsv1.Deployment:
			dep = o
		case *corev1.Service:
			svc = o
		}
	}
	if dep.Annotations["team.example.com/owner"] != "payments" || dep.Spec.Template.Labels["team.example.com/tier"] != "edge" {
		t.Errorf("the first patch's metadata is not applied: %v, %v", dep.Annotations, dep.Spec.Template.Labels)
	}
	nginx := dep.Spec.Template.Spec.Containers[0]
	if got := nginx.Resources.Limits.Memory().String(); got != "1Gi" {
		t.Errorf("NGINX's memory limit %s, want the patch's 1Gi", got)
	}
	if nginx.Resources.Limits.Cpu().IsZero() {
		t.Error("the strategic merge patch dropped NGINX's CPU limit")
	}
	if len(dep.Spec.Template.Spec.Containers) != 2 || dep.Spec.Template.Spec.Containers[1].Command[0] != "/usr/bin/gatewall-endpoints" {
		t.Errorf("containers %+v: a protected patch was applied", dep.Spec.Template.Spec.Containers)
	}
	if sc := dep.Spec.Template.Spec.SecurityContext; *sc.RunAsUser != nginxUID || dep.Spec.Template.Spec.ServiceAccountName != dep.Name {
		t.Errorf("pod security context %+v, ServiceAccount %s: a protected patch was applied", sc, dep.Spec.Template.Spec.ServiceAccountName)
	}
	pod := &corev1.Pod{ObjectMeta: dep.Spec.Template.ObjectMeta, Spec: dep.Spec.Template.Spec}
	if err := podseal.Verify(p.SealKey, p.Gateway.UID, pod); err != nil {
		t.Errorf("a pod of the patched template fails its seal: %v", err)
	}
	if svc.Annotations["service.beta.kubernetes.io/aws-load-balancer-internal"] != "true" || svc.Spec.Selector["app"] == "tenant" {
		t.Errorf("Service annotations %v selector %v: want the annotation patch only", svc.Annotations, svc.Spec.Selector)
	}
	want := []string{
		"kubernetes.deployment.patches[1]: not applied: it changes what",
		"kubernetes.deployment.patches[2]: not applied: it changes what",
		"kubernetes.deployment.patches[3]: not applied: it changes what",
		"kubernetes.deployment.patches[4]: not applied: it does not apply",
		"kubernetes.deployment.patches[5]: not applied: it changes what",
		"kubernetes.service.patches[1]: not applied: it changes what",
	}
	if len(notes) != len(want) {
		t.Fatalf("notes %q, want %d", notes, len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(notes[i], w) {
			t.Errorf("note %d %q, want it to start %q", i, notes[i], w)
		}
	}
}
