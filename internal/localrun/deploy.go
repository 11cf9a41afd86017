package localrun

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/gatewall/gatewall/internal/local/images"
	"github.com/gatewall/gatewall/internal/manager"
	"github.com/gatewall/gatewall/internal/manifest"
)

// Where `make deploy` (config/default) puts Gatewall's manager.
const (
	ManagerNamespace  = "gatewall-system"
	ManagerDeployment = "gatewall-controller-manager"
)

// LeaderLease is the leader election Lease of the manager config/default
// deploys (--leader-election-id's default for its controllerName).
var LeaderLease = manager.LeaderElectionID(manager.DefaultControllerName)

// Installation is one Gatewall installation: config/default as `make
// deploy` installs it (the zero value), or another one beside it, for
// another controllerName and GatewayClass, in its own namespace or in the
// same one under a name prefix, as a user installs a second one with a
// kustomize overlay of config/default (README).
type Installation struct {
	// Namespace is where its manager runs; "" is ManagerNamespace.
	Namespace string
	// NamePrefix is put before config/default's names (gatewall-...). An
	// installation beside config/default's needs one, in any namespace:
	// its ClusterRole and ClusterRoleBinding would replace the first's.
	NamePrefix string
	// Instance is its app.kubernetes.io/instance label, which its
	// Deployment and Services select; "" is config/default's (gatewall).
	Instance string
	// ControllerName and GatewayClass are what it serves; "" are
	// config/default's.
	ControllerName, GatewayClass string
}

// defaultInstance is config/default's app.kubernetes.io/instance.
const defaultInstance = "gatewall"

func (i Installation) namespace() string { return cmp.Or(i.Namespace, ManagerNamespace) }

func (i Installation) controllerName() string {
	return cmp.Or(i.ControllerName, manager.DefaultControllerName)
}

// name is a config/default object's name in this installation.
func (i Installation) name(n string) string { return i.NamePrefix + n }

// deployment is its manager Deployment.
func (i Installation) deployment() client.ObjectKey {
	return client.ObjectKey{Namespace: i.namespace(), Name: i.name(ManagerDeployment)}
}

// lease is its leader election Lease.
func (i Installation) lease() client.ObjectKey {
	return client.ObjectKey{Namespace: i.namespace(), Name: manager.LeaderElectionID(i.controllerName())}
}

// podLabels select its manager's pods (config/manager and config/default).
func (i Installation) podLabels() labels.Set {
	return labels.Set{"app.kubernetes.io/name": "gatewall", "app.kubernetes.io/component": "controller",
		"app.kubernetes.io/instance": cmp.Or(i.Instance, defaultInstance)}
}

// args are the manager flags that make it this installation: its own
// controllerName and class, and its own agent Service and TLS Secret
// (config/default's defaults are the first installation's).
func (i Installation) args() []string {
	if i == (Installation{}) {
		return nil
	}
	return []string{
		"--gateway-ctlr-name=" + i.controllerName(),
		"--gatewayclass=" + cmp.Or(i.GatewayClass, manager.DefaultGatewayClassName),
		fmt.Sprintf("--agent-server-address=%s.%s.svc:8443", i.name("gatewall-agent"), i.namespace()),
		"--agent-tls-secret=" + i.name(agentTLSSecret),
	}
}

// agentTLSSecret is config/manager's agent TLS Secret (--agent-tls-secret
// and the volume that mounts it).
const agentTLSSecret = "gatewall-agent-tls"

// Deployment is how Deploy installs Gatewall.
type Deployment struct {
	Installation
	// Args are appended to the manager's arguments in config/manager (a
	// flag given twice takes its last value).
	Args []string
	// With is what installs it: config/default's kustomize output, as
	// `make deploy` (the zero value), or charts/gatewall.
	With Installer
	// Values are more of the chart's values (With Helm), over those that
	// make it the Installation: {"nginxGateway": {"createGatewayClass":
	// false}}, say.
	Values map[string]any
}

// Installer is what installs Gatewall.
type Installer string

const (
	// Kustomize applies config/default's kustomize output (server-side),
	// as `make deploy` does.
	Kustomize Installer = ""
	// Helm installs charts/gatewall with `helm upgrade --install`.
	Helm Installer = "helm"
)

// ParseInstaller reads an Installer by name: kustomize or helm.
func ParseInstaller(name string) (Installer, error) {
	switch name {
	case "kustomize", "":
		return Kustomize, nil
	case string(Helm):
		return Helm, nil
	}
	return "", fmt.Errorf("localrun: install with %q: want kustomize or helm", name)
}

// overlay is the kustomization Deploy builds: config/default, as `make
// deploy IMG=...` builds it, with the manager image built by `make images`,
// made the Installation, and Args added.
type overlay struct {
	Resources  []string       `json:"resources"`
	Namespace  string         `json:"namespace,omitempty"`
	NamePrefix string         `json:"namePrefix,omitempty"`
	Labels     []overlayLabel `json:"labels,omitempty"`
	Images     []overlayImage `json:"images"`
	Patches    []overlayPatch `json:"patches,omitempty"`
}

type overlayLabel struct {
	Pairs            map[string]string `json:"pairs"`
	IncludeSelectors bool              `json:"includeSelectors"`
}

type overlayImage struct {
	Name    string `json:"name"`
	NewName string `json:"newName"`
	NewTag  string `json:"newTag"`
}

type overlayPatch struct {
	Target map[string]string `json:"target"`
	Patch  string            `json:"patch"`
}

// Deploy installs Gatewall from config/default (namespace, CRDs, RBAC,
// manager Deployment and Services), or from charts/gatewall, with the
// manager image images.Manager, as d's Installation, then waits until the
// manager runs the new configuration and holds the leader Lease. Deploying
// again with other Args rolls the manager out.
func (r *Runtime) Deploy(ctx context.Context, d Deployment) error {
	if d.Installation != (Installation{}) && d.NamePrefix == "" {
		return fmt.Errorf("localrun: installation %+v has no NamePrefix: its cluster-wide RBAC would replace config/default's", d.Installation)
	}
	switch d.With {
	case Kustomize:
		objs, err := r.kustomize(d)
		if err != nil {
			return err
		}
		if err := manifest.Apply(ctx, r.Client, "gatewall-local", objs); err != nil {
			return fmt.Errorf("localrun: deploying Gatewall: %w", err)
		}
	case Helm:
		if err := r.helm().Install(ctx, r.release(d)); err != nil {
			return fmt.Errorf("localrun: deploying Gatewall: %w", err)
		}
	default:
		return fmt.Errorf("localrun: no installer %q", d.With)
	}
	key := d.deployment()
	if err := r.WaitDeployment(ctx, key.Namespace, key.Name, 3*time.Minute); err != nil {
		return err
	}
	return r.waitLeader(ctx, d.Installation, 2*time.Minute)
}

// kustomize builds the overlay of config/default for d.
func (r *Runtime) kustomize(d Deployment) ([]*unstructured.Unstructured, error) {
	dir, err := os.MkdirTemp("", "gatewall-deploy-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	name, tag, _ := strings.Cut(images.Manager, ":")
	// kustomize takes no absolute paths to bases.
	base, err := filepath.Rel(dir, filepath.Join(r.opts.Root, "config", "default"))
	if err != nil {
		return nil, err
	}
	k := overlay{
		Resources: []string{base},
		// config/manager names the image ghcr.io/gatewall/gatewall:latest.
		Images: []overlayImage{{Name: "ghcr.io/gatewall/gatewall", NewName: name, NewTag: tag}},
	}
	inst := d.Installation
	if inst != (Installation{}) {
		k.Namespace, k.NamePrefix = inst.Namespace, inst.NamePrefix
		if inst.Instance != "" {
			k.Labels = []overlayLabel{{Pairs: map[string]string{"app.kubernetes.io/instance": inst.Instance}, IncludeSelectors: true}}
		}
		// The volume that mounts the agent TLS Secret names it: kustomize
		// renames only the objects it makes.
		volume := fmt.Sprintf(`{"op": "test", "path": "/spec/template/spec/volumes/%[1]d/name", "value": "agent-tls"},
			{"op": "replace", "path": "/spec/template/spec/volumes/%[1]d/secret/secretName", "value": %[2]q}`,
			agentTLSVolume, inst.name(agentTLSSecret))
		k.Patches = append(k.Patches, overlayPatch{Target: map[string]string{"kind": "Deployment", "name": ManagerDeployment},
			Patch: "[" + volume + "]"})
	}
	if args := append(inst.args(), d.Args...); len(args) > 0 {
		var ops []map[string]string
		for _, a := range args {
			ops = append(ops, map[string]string{"op": "add", "path": "/spec/template/spec/containers/0/args/-", "value": a})
		}
		patch, err := yaml.Marshal(ops)
		if err != nil {
			return nil, err
		}
		k.Patches = append(k.Patches, overlayPatch{Target: map[string]string{"kind": "Deployment", "name": ManagerDeployment}, Patch: string(patch)})
	}
	data, err := yaml.Marshal(k)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), data, 0o644); err != nil {
		return nil, err
	}
	return manifest.Kustomize(dir)
}

// agentTLSVolume is the index of the agent TLS Secret's volume in
// config/manager's pod.
const agentTLSVolume = 1

// WaitDeployment waits until a Deployment has rolled out: every replica
// updated, available, and no pod of an older revision left.
func (r *Runtime) WaitDeployment(ctx context.Context, namespace, name string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	key := client.ObjectKey{Namespace: namespace, Name: name}
	for {
		d := &appsv1.Deployment{}
		err := r.Client.Get(ctx, key, d)
		if err == nil && rolledOut(d) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("localrun: Deployment %s not rolled out after %s (%v): %s", key, timeout, err, r.podProblems(ctx, d))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func rolledOut(d *appsv1.Deployment) bool {
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	s := d.Status
	return s.ObservedGeneration >= d.Generation && s.UpdatedReplicas == want && s.AvailableReplicas == want && s.Replicas == want
}

// podProblems describes why a Deployment's pods are not ready, for errors.
func (r *Runtime) podProblems(ctx context.Context, d *appsv1.Deployment) string {
	if d.Spec.Selector == nil {
		return "no Deployment"
	}
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil {
		return err.Error()
	}
	pods := &corev1.PodList{}
	if err := r.Client.List(ctx, pods, client.InNamespace(d.Namespace), client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return err.Error()
	}
	var out []string
	for _, p := range pods.Items {
		out = append(out, fmt.Sprintf("pod %s: %s", p.Name, describePod(&p)))
	}
	if len(out) == 0 {
		return "no pods"
	}
	return strings.Join(out, "; ")
}

// describePod is a pod's phase and the reasons its containers give.
func describePod(p *corev1.Pod) string {
	parts := []string{string(p.Status.Phase)}
	for _, c := range p.Status.Conditions {
		if c.Status != corev1.ConditionTrue && c.Message != "" {
			parts = append(parts, fmt.Sprintf("%s: %s", c.Type, c.Message))
		}
	}
	for _, cs := range append(p.Status.InitContainerStatuses, p.Status.ContainerStatuses...) {
		switch {
		case cs.State.Waiting != nil:
			parts = append(parts, fmt.Sprintf("%s waiting (%s: %s)", cs.Name, cs.State.Waiting.Reason, cs.State.Waiting.Message))
		case cs.State.Terminated != nil:
			parts = append(parts, fmt.Sprintf("%s terminated (%s, exit %d)", cs.Name, cs.State.Terminated.Reason, cs.State.Terminated.ExitCode))
		}
	}
	return strings.Join(parts, ", ")
}

// waitLeader waits until a pod of the manager's current revision holds the
// leader Lease: only the leader reconciles and serves the agents.
func (r *Runtime) waitLeader(ctx context.Context, inst Installation, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		pods, err := r.InstallationPods(ctx, inst)
		lease := &coordinationv1.Lease{}
		lerr := r.Client.Get(ctx, inst.lease(), lease)
		if err == nil && lerr == nil && lease.Spec.HolderIdentity != nil {
			holder := *lease.Spec.HolderIdentity
			for _, p := range pods {
				// controller-runtime's identity is "<hostname>_<uuid>".
				if strings.HasPrefix(holder, p.Name+"_") {
					return nil
				}
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("localrun: no running manager pod holds the Lease %s after %s", inst.lease(), timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// ManagerPods are the running pods of config/default's manager that are
// not being deleted.
func (r *Runtime) ManagerPods(ctx context.Context) ([]corev1.Pod, error) {
	return r.InstallationPods(ctx, Installation{})
}

// InstallationPods are the running pods of an installation's manager that
// are not being deleted.
func (r *Runtime) InstallationPods(ctx context.Context, inst Installation) ([]corev1.Pod, error) {
	return r.RunningPods(ctx, inst.namespace(), inst.podLabels())
}

// RunningPods are the running pods of namespace ns with labels sel that are
// not being deleted.
func (r *Runtime) RunningPods(ctx context.Context, ns string, sel map[string]string) ([]corev1.Pod, error) {
	pods := &corev1.PodList{}
	if err := r.Client.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels(sel)); err != nil {
		return nil, err
	}
	var out []corev1.Pod
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning {
			out = append(out, p)
		}
	}
	return out, nil
}

// ScaleManager sets the manager Deployment's replicas and waits: for none,
// until its pods are gone; else until it has rolled out and one of its pods
// holds the leader Lease.
func (r *Runtime) ScaleManager(ctx context.Context, replicas int32) error {
	d := &appsv1.Deployment{}
	key := client.ObjectKey{Namespace: ManagerNamespace, Name: ManagerDeployment}
	if err := r.Client.Get(ctx, key, d); err != nil {
		return err
	}
	patch := client.MergeFrom(d.DeepCopy())
	d.Spec.Replicas = &replicas
	if err := r.Client.Patch(ctx, d, patch); err != nil {
		return fmt.Errorf("localrun: scaling the manager: %w", err)
	}
	if replicas > 0 {
		if err := r.WaitDeployment(ctx, ManagerNamespace, ManagerDeployment, 3*time.Minute); err != nil {
			return err
		}
		return r.waitLeader(ctx, Installation{}, 2*time.Minute)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		pods := &corev1.PodList{}
		sel := labels.SelectorFromSet(Installation{}.podLabels())
		err := r.Client.List(ctx, pods, client.InNamespace(ManagerNamespace), client.MatchingLabelsSelector{Selector: sel})
		if err == nil && len(pods.Items) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("localrun: manager pods still there a minute after scaling to 0 (%v)", err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Undeploy removes an installation Deploy installed beside config/default's:
// its manager, RBAC and Services, and its namespace when it has its own. The
// CRDs, which every installation shares, stay. Its data planes go with their
// Gateways.
func (r *Runtime) Undeploy(ctx context.Context, d Deployment) error {
	if d.Installation == (Installation{}) || d.NamePrefix == "" {
		return fmt.Errorf("localrun: Undeploy removes only an installation beside config/default's, with a NamePrefix (not %+v)", d.Installation)
	}
	if d.With == Helm {
		return r.helmUninstall(ctx, d)
	}
	objs, err := r.kustomize(d)
	if err != nil {
		return err
	}
	for _, o := range objs {
		switch {
		case o.GetKind() == "CustomResourceDefinition":
			continue
		case o.GetKind() == "Namespace" && o.GetName() == ManagerNamespace:
			continue
		}
		if err := r.Client.Delete(ctx, o); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("localrun: removing %s %s: %w", o.GetKind(), o.GetName(), err)
		}
	}
	return nil
}
