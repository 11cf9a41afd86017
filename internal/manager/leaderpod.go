package manager

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// AgentServerLabel marks the manager pod that serves the agents: the leader.
// The agent Service (config/manager) selects it, so that agents reach the
// one replica that listens, whatever the number of replicas.
const AgentServerLabel = "gatewall.io/agent-server"

// leaderPod labels this manager's own pod (POD_NAME in the manager's
// namespace) as the agents' server, or removes the label.
type leaderPod struct {
	c   client.Client
	key types.NamespacedName
}

// set adds (serving) or removes the label. A pod name of "" (a manager
// running outside a pod) does nothing.
func (p leaderPod) set(ctx context.Context, serving bool) error {
	if p.key.Name == "" {
		return nil
	}
	value := "null" // a JSON merge patch removes a label set to null
	if serving {
		value = `"true"`
	}
	patch := fmt.Sprintf(`{"metadata":{"labels":{%q:%s}}}`, AgentServerLabel, value)
	pod := &corev1.Pod{}
	pod.Namespace, pod.Name = p.key.Namespace, p.key.Name
	if err := p.c.Patch(ctx, pod, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		return fmt.Errorf("labelling the manager's pod %s (%s=%v): %w", p.key, AgentServerLabel, value, err)
	}
	return nil
}
