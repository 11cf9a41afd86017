package node

import (
	"context"
	"fmt"
	"runtime"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
)

// allocatable is what the node offers the scheduler: generous, since pods
// are host processes without resource isolation.
func (n *Node) allocatable() corev1.ResourceList {
	return corev1.ResourceList{
		corev1.ResourceCPU:              resource.MustParse("64"),
		corev1.ResourceMemory:           resource.MustParse("256Gi"),
		corev1.ResourcePods:             resource.MustParse("250"),
		corev1.ResourceEphemeralStorage: resource.MustParse("1Ti"),
	}
}

func (n *Node) nodeStatus(now metav1.Time) corev1.NodeStatus {
	cond := func(t corev1.NodeConditionType, s corev1.ConditionStatus, reason, msg string) corev1.NodeCondition {
		return corev1.NodeCondition{Type: t, Status: s, Reason: reason, Message: msg,
			LastHeartbeatTime: now, LastTransitionTime: n.registeredAt}
	}
	return corev1.NodeStatus{
		Capacity:    n.allocatable(),
		Allocatable: n.allocatable(),
		Phase:       corev1.NodeRunning,
		Conditions: []corev1.NodeCondition{
			cond(corev1.NodeReady, corev1.ConditionTrue, "KubeletReady", "kubelet is posting ready status"),
			cond(corev1.NodeMemoryPressure, corev1.ConditionFalse, "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
			cond(corev1.NodeDiskPressure, corev1.ConditionFalse, "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
			cond(corev1.NodePIDPressure, corev1.ConditionFalse, "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
		},
		Addresses: []corev1.NodeAddress{
			{Type: corev1.NodeInternalIP, Address: n.network.NodeIP().String()},
			{Type: corev1.NodeHostName, Address: n.opts.Name},
		},
		DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: int32(n.opts.KubeletPort)}},
		NodeInfo: corev1.NodeSystemInfo{
			KubeletVersion:          "v1.37.1",
			ContainerRuntimeVersion: "gatewall-local://1",
			OperatingSystem:         runtime.GOOS,
			Architecture:            runtime.GOARCH,
			OSImage:                 "gatewall local node (host processes)",
		},
	}
}

// register creates the Node (or takes over one left by an earlier run) and
// writes its status.
func (n *Node) register(ctx context.Context) error {
	n.registeredAt = metav1.Now().Rfc3339Copy()
	cidr := n.network.CIDR().String()
	want := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: n.opts.Name, Labels: map[string]string{
			corev1.LabelHostname:   n.opts.Name,
			corev1.LabelOSStable:   runtime.GOOS,
			corev1.LabelArchStable: runtime.GOARCH,
		}},
		Spec: corev1.NodeSpec{PodCIDR: cidr, PodCIDRs: []string{cidr}},
	}
	nodes := n.client.CoreV1().Nodes()
	_, err := nodes.Create(ctx, want, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
			node, err := nodes.Get(ctx, n.opts.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			node.Labels = want.Labels
			node.Spec.Unschedulable = false
			_, err = nodes.Update(ctx, node, metav1.UpdateOptions{})
			return err
		})
	}
	if err != nil {
		return fmt.Errorf("node: registering Node %s: %w", n.opts.Name, err)
	}
	if err := n.updateNodeStatus(ctx, n.registeredAt); err != nil {
		return fmt.Errorf("node: %w", err)
	}
	return n.renewLease(ctx)
}

// heartbeat renews the Node status and Lease until ctx ends, so that the
// node lifecycle controller keeps the node Ready.
func (n *Node) heartbeat(ctx context.Context) {
	t := time.NewTicker(n.opts.HeartbeatPeriod)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := n.updateNodeStatus(ctx, metav1.Now()); err != nil && ctx.Err() == nil {
			n.log.Error(err, "node heartbeat")
		}
		if err := n.renewLease(ctx); err != nil && ctx.Err() == nil {
			n.log.Error(err, "node lease")
		}
	}
}

// updateNodeStatus writes the status with a fresh object, retrying when
// the controllers (taints, node lifecycle) updated the Node in between.
func (n *Node) updateNodeStatus(ctx context.Context, heartbeat metav1.Time) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		node, err := n.client.CoreV1().Nodes().Get(ctx, n.opts.Name, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("getting Node: %w", err)
		}
		node.Status = n.nodeStatus(heartbeat)
		if _, err := n.client.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("updating Node status: %w", err)
		}
		return nil
	})
}

func (n *Node) renewLease(ctx context.Context) error {
	leases := n.client.CoordinationV1().Leases(corev1.NamespaceNodeLease)
	now := metav1.NewMicroTime(time.Now())
	holder := n.opts.Name
	duration := int32(40)
	lease, err := leases.Get(ctx, n.opts.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = leases.Create(ctx, &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: n.opts.Name, Namespace: corev1.NamespaceNodeLease},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &duration,
				RenewTime: &now},
		}, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("creating Lease: %w", err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("getting Lease: %w", err)
	}
	lease.Spec.HolderIdentity, lease.Spec.LeaseDurationSeconds, lease.Spec.RenewTime = &holder, &duration, &now
	if _, err := leases.Update(ctx, lease, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("renewing Lease: %w", err)
	}
	return nil
}

// deregister deletes the Node, so that the pod garbage collector removes
// pods left bound to it.
func (n *Node) deregister(ctx context.Context) error {
	err := n.client.CoreV1().Nodes().Delete(ctx, n.opts.Name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("node: deleting Node %s: %w", n.opts.Name, err)
	}
	return nil
}
