package controller

import (
	"context"
	"fmt"
	"os"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/agent"
	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/provisioner"
)

// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=services;serviceaccounts;configmaps;secrets,verbs=get;list;watch;create;update;patch;delete

// Provisioning says how Gatewall provisions each Gateway's data plane and
// how its agents reach Gatewall.
type Provisioning struct {
	// AgentHost and AgentPort are where the agents connect.
	AgentHost string
	AgentPort int
	// ServerName is the name the agents verify in Gatewall's certificate.
	ServerName string
	// CAFile is the CA bundle the agents verify Gatewall with; re-read on
	// every reconcile, so a rotated CA reaches the data planes.
	CAFile string
	Images provisioner.Images
	// ReloadMonitoringPeriod is how long an agent watches NGINX after a
	// reload before reporting success (0: the agent's default).
	ReloadMonitoringPeriod time.Duration
}

// provision applies the Gateway's data plane and returns its addresses, and
// a Programmed=False condition while the addresses it requests are not
// assigned.
func (r *GatewayReconciler) provision(ctx context.Context, g *graph.Gateway) ([]gatewayv1.GatewayStatusAddress, *metav1.Condition, error) {
	p := r.Provisioning
	ca, err := os.ReadFile(p.CAFile)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the agents' CA bundle: %w", err)
	}
	level := "info"
	if l := g.NginxProxy.Logging; l != nil && l.AgentLevel != nil {
		level = string(*l.AgentLevel)
	}
	conf, err := agent.AgentConfig(agent.AgentConfigParams{
		ServerHost: p.AgentHost, ServerPort: p.AgentPort, ServerName: p.ServerName,
		CAFile:    provisioner.AgentCADir + "/" + provisioner.AgentCAFile,
		TokenFile: provisioner.AgentTokenDir + "/" + provisioner.AgentTokenFile,
		Gateway:   g.Key, LogLevel: level, ReloadMonitoringPeriod: p.ReloadMonitoringPeriod,
	})
	if err != nil {
		return nil, nil, err
	}
	var ports []int32
	for _, l := range g.ValidListeners() {
		ports = append(ports, int32(l.Source.Port))
	}
	objs := provisioner.Objects(provisioner.Params{
		Gateway: g.Source, NginxProxy: g.NginxProxy, Ports: ports, AgentConfig: conf, AgentCA: ca, Images: p.Images,
	})
	if err := provisioner.Apply(ctx, r.Client, objs); err != nil {
		return nil, nil, err
	}
	svc := &corev1.Service{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: g.Key.Namespace, Name: provisioner.Name(g.Source)}, svc); err != nil {
		return nil, nil, client.IgnoreNotFound(err)
	}
	return serviceAddresses(svc), addressCondition(graph.RequestedAddresses(g.Source), svc), nil
}

// deprovision removes the data plane of a Gateway that is not accepted.
func (r *GatewayReconciler) deprovision(ctx context.Context, gw *gatewayv1.Gateway) error {
	name := provisioner.Name(gw)
	meta := func(n string) metav1.ObjectMeta { return metav1.ObjectMeta{Namespace: gw.Namespace, Name: n} }
	for _, o := range []client.Object{
		&appsv1.Deployment{ObjectMeta: meta(name)}, &corev1.Service{ObjectMeta: meta(name)},
		&corev1.ServiceAccount{ObjectMeta: meta(name)}, &corev1.ConfigMap{ObjectMeta: meta(name + "-agent")},
		&corev1.Secret{ObjectMeta: meta(name + "-agent-ca")},
	} {
		if err := r.Delete(ctx, o); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting %T %s: %w", o, o.GetName(), err)
		}
	}
	return nil
}

// serviceAddresses are the addresses clients reach a Gateway's Service at:
// its load balancer's, else its cluster IPs.
func serviceAddresses(svc *corev1.Service) []gatewayv1.GatewayStatusAddress {
	var out []gatewayv1.GatewayStatusAddress
	ip, host := gatewayv1.IPAddressType, gatewayv1.HostnameAddressType
	for _, in := range svc.Status.LoadBalancer.Ingress {
		switch {
		case in.IP != "":
			out = append(out, gatewayv1.GatewayStatusAddress{Type: &ip, Value: in.IP})
		case in.Hostname != "":
			out = append(out, gatewayv1.GatewayStatusAddress{Type: &host, Value: in.Hostname})
		}
	}
	if len(out) == 0 && svc.Spec.Type != corev1.ServiceTypeLoadBalancer {
		for _, c := range svc.Spec.ClusterIPs {
			if c != "" && c != corev1.ClusterIPNone {
				out = append(out, gatewayv1.GatewayStatusAddress{Type: &ip, Value: c})
			}
		}
	}
	return out
}
