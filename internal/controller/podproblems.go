package controller

import (
	"context"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/provisioner"
)

// Listing a data plane's pods, by its Deployment's selector, says why they
// do not serve (never watched: see podProblems).
// +kubebuilder:rbac:groups="",resources=pods,verbs=list

// podRecheck is how soon the statuses of a Gateway whose data plane does
// not serve are written again: a pod's state (scheduled at last, an image
// pulled, a crash) changes nothing the reconciler watches.
const podRecheck = 15 * time.Second

// dataPlanePods tells, from the pods' own state, why a Gateway's data plane
// does not serve, and has the Gateway's status job run again while it
// does not.
type dataPlanePods struct {
	mu      sync.Mutex
	pending map[types.NamespacedName]bool
}

// podProblems reads the Gateway's data-plane Deployment (from the cache) and,
// when it has fewer ready pods than it wants, its pods from the API server
// (pods are not cached: the manager would hold every pod of the cluster);
// it says what keeps them from serving ("" when nothing does, or there is
// no Deployment yet), and whether its pods do not all serve.
func (r *GatewayReconciler) podProblems(ctx context.Context, gw *gatewayv1.Gateway) (string, bool, error) {
	if r.Provisioning == nil || r.Provisioning.APIReader == nil {
		return "", false, nil
	}
	key := client.ObjectKey{Namespace: gw.Namespace, Name: provisioner.Name(gw)}
	serving, err := r.workloadServes(ctx, key)
	if err != nil || serving {
		return "", false, client.IgnoreNotFound(err)
	}
	pods := &corev1.PodList{}
	if err := r.Provisioning.APIReader.List(ctx, pods, client.InNamespace(gw.Namespace), client.MatchingLabels(provisioner.PodSelector(gw))); err != nil {
		return "", true, err
	}
	return provisioner.PodProblems(pods.Items), true, nil
}

// workloadServes says whether the data plane's Deployment, or its
// DaemonSet, has pods ready and none that is not (the cache holds their
// metadata and status only). A NotFound error: neither exists (yet).
func (r *GatewayReconciler) workloadServes(ctx context.Context, key client.ObjectKey) (bool, error) {
	dep := &appsv1.Deployment{}
	err := r.Get(ctx, key, dep)
	if err == nil {
		st := dep.Status
		return st.ReadyReplicas > 0 && st.ReadyReplicas >= st.Replicas, nil
	}
	if !apierrors.IsNotFound(err) {
		return false, err
	}
	ds := &appsv1.DaemonSet{}
	if err := r.Get(ctx, key, ds); err != nil {
		return false, err
	}
	st := ds.Status
	return st.NumberReady > 0 && st.NumberReady >= st.DesiredNumberScheduled, nil
}

// recheck runs the Gateway's last status job again after podRecheck, once
// however often it is asked meanwhile.
func (p *dataPlanePods) recheck(key types.NamespacedName, run func(types.NamespacedName) bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pending == nil {
		p.pending = map[types.NamespacedName]bool{}
	}
	if p.pending[key] {
		return
	}
	p.pending[key] = true
	time.AfterFunc(podRecheck, func() {
		p.mu.Lock()
		delete(p.pending, key)
		p.mu.Unlock()
		run(key)
	})
}
