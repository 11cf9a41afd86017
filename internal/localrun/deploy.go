package localrun

import (
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

// managerLabels select the manager's pods (config/manager).
var managerLabels = labels.Set{"app.kubernetes.io/name": "gatewall", "app.kubernetes.io/component": "controller"}

// Deployment is how Deploy installs Gatewall.
type Deployment struct {
	// Args are appended to the manager's arguments in config/manager (a
	// flag given twice takes its last value).
	Args []string
}

// overlay is the kustomization Deploy builds: config/default, as `make
// deploy IMG=...` builds it, with the manager image built by `make images`
// and Args added.
type overlay struct {
	Resources []string       `json:"resources"`
	Images    []overlayImage `json:"images"`
	Patches   []overlayPatch `json:"patches,omitempty"`
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
// manager Deployment and Services) with the manager image images.Manager,
// then waits until the manager runs the new configuration and holds the
// leader Lease. Deploying again with other Args rolls the manager out.
func (r *Runtime) Deploy(ctx context.Context, d Deployment) error {
	objs, err := r.kustomize(d)
	if err != nil {
		return err
	}
	if err := manifest.Apply(ctx, r.Client, "gatewall-local", objs); err != nil {
		return fmt.Errorf("localrun: deploying Gatewall: %w", err)
	}
	if err := r.WaitDeployment(ctx, ManagerNamespace, ManagerDeployment, 3*time.Minute); err != nil {
		return err
	}
	return r.waitLeader(ctx, 2*time.Minute)
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
	if len(d.Args) > 0 {
		var ops []map[string]string
		for _, a := range d.Args {
			ops = append(ops, map[string]string{"op": "add", "path": "/spec/template/spec/containers/0/args/-", "value": a})
		}
		patch, err := yaml.Marshal(ops)
		if err != nil {
			return nil, err
		}
		k.Patches = []overlayPatch{{Target: map[string]string{"kind": "Deployment", "name": ManagerDeployment}, Patch: string(patch)}}
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
func (r *Runtime) waitLeader(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		pods, err := r.ManagerPods(ctx)
		lease := &coordinationv1.Lease{}
		lerr := r.Client.Get(ctx, client.ObjectKey{Namespace: ManagerNamespace, Name: LeaderLease}, lease)
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
			return fmt.Errorf("localrun: no running manager pod holds the Lease %s/%s after %s", ManagerNamespace, LeaderLease, timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// ManagerPods are the manager's running pods that are not being deleted.
func (r *Runtime) ManagerPods(ctx context.Context) ([]corev1.Pod, error) {
	pods := &corev1.PodList{}
	sel := labels.SelectorFromSet(managerLabels)
	if err := r.Client.List(ctx, pods, client.InNamespace(ManagerNamespace), client.MatchingLabelsSelector{Selector: sel}); err != nil {
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
		return r.waitLeader(ctx, 2*time.Minute)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		pods := &corev1.PodList{}
		sel := labels.SelectorFromSet(managerLabels)
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
