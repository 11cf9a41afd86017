package agent

import (
	"fmt"
	"math"
	"strconv"

	mpi "github.com/nginx/agent/v3/api/grpc/mpi/v1"
	"google.golang.org/protobuf/types/known/structpb"
)

// The labels of the agent configuration that name the Gateway whose data
// plane the agent serves. The agent sends its configured labels in
// CreateConnectionRequest.resource.instances[type AGENT]
// .instance_config.agent_config.labels (one Struct per label), and also as
// gRPC metadata of some RPCs. Hence the keys: gRPC refuses metadata keys
// outside [0-9a-z-_.], so the agent cannot connect at all with a Kubernetes
// style key such as gateway.networking.k8s.io/gateway-name; and the agent's
// configuration loader splits keys at "_".
const (
	LabelGatewayName      = "gatewall-gateway-name"
	LabelGatewayNamespace = "gatewall-gateway-namespace"
)

// PodLabelGatewayName is the label of a data-plane pod naming its Gateway (in
// the pod's namespace): the Gateway API's own label for a Gateway's
// resources. The TokenReview authenticator reads it.
const PodLabelGatewayName = "gateway.networking.k8s.io/gateway-name"

// agentLabels returns the labels of the agent instance of res.
func agentLabels(res *mpi.Resource) (map[string]*structpb.Value, bool) {
	for _, in := range res.GetInstances() {
		if in.GetInstanceMeta().GetInstanceType() != mpi.InstanceMeta_INSTANCE_TYPE_AGENT {
			continue
		}
		labels := make(map[string]*structpb.Value)
		for _, st := range in.GetInstanceConfig().GetAgentConfig().GetLabels() {
			for k, v := range st.GetFields() {
				labels[k] = v
			}
		}
		return labels, true
	}
	return nil, false
}

// checkLabels verifies that the agent's labels name the Gateway it is
// authenticated for.
func checkLabels(res *mpi.Resource, gw Key) error {
	labels, ok := agentLabels(res)
	if !ok {
		return fmt.Errorf("the resource has no agent instance to read the labels %s and %s from",
			LabelGatewayName, LabelGatewayNamespace)
	}
	for _, want := range []struct{ label, value string }{
		{LabelGatewayName, gw.Name},
		{LabelGatewayNamespace, gw.Namespace},
	} {
		v, ok := labels[want.label]
		if !ok {
			return fmt.Errorf("the agent configuration lacks the label %s (want %q)", want.label, want.value)
		}
		if !labelEquals(v, want.value) {
			return fmt.Errorf("the agent's label %s=%s names another Gateway than its pod serves (%s)",
				want.label, v.String(), gw)
		}
	}
	return nil
}

// labelEquals compares a label as the agent sent it with a string. The agent
// turns label values that parse as numbers or booleans into those types
// (a Gateway may be named "42"), so those are compared as the agent would
// have parsed the string.
func labelEquals(v *structpb.Value, want string) bool {
	switch k := v.GetKind().(type) {
	case *structpb.Value_StringValue:
		return k.StringValue == want
	case *structpb.Value_NumberValue:
		if i, err := strconv.Atoi(want); err == nil {
			return float64(i) == k.NumberValue
		}
		f, err := strconv.ParseFloat(want, 64)
		return err == nil && (f == k.NumberValue || math.IsNaN(f) && math.IsNaN(k.NumberValue))
	case *structpb.Value_BoolValue:
		b, err := strconv.ParseBool(want)
		return err == nil && b == k.BoolValue
	case *structpb.Value_NullValue:
		return want == "nil" // the agent reads the value "nil" as no value
	}
	return false
}
