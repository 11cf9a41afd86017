package controller

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/agent"
	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/provisioner"
	"github.com/gatewall/gatewall/internal/status"
)

// Data planes are written with server-side apply (create, patch), watched
// for drift (list, watch; Secrets, ConfigMaps and ServiceAccounts as
// metadata), read by name before they are taken for Gatewall's (get), and
// deleted when their Gateway moves to another class (delete: while the
// Gateway lives, garbage collection does not). config/rbac's
// ValidatingAdmissionPolicies narrow these rights to data planes.
// +kubebuilder:rbac:groups=apps,resources=deployments;daemonsets,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups="",resources=services;serviceaccounts;configmaps;secrets,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=autoscaling,resources=horizontalpodautoscalers,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=policy,resources=poddisruptionbudgets,verbs=get;list;watch;create;patch;delete
// Owner references block the Gateway's deletion (blockOwnerDeletion), which
// clusters enforcing OwnerReferencesPermissionEnforcement allow only to
// those who may update the Gateway's finalizers.
// +kubebuilder:rbac:groups=gateway.networking.k8s.io,resources=gateways/finalizers,verbs=update

// Provisioning says how Gatewall provisions each Gateway's data plane and
// how its agents reach Gatewall.
type Provisioning struct {
	// AgentHost and AgentPort are where the agents connect.
	AgentHost string
	AgentPort int
	// ServerName is the name the agents verify in Gatewall's certificate.
	ServerName string
	// CA returns the CA bundle the agents verify Gatewall with; called on
	// every reconcile, so a rotated CA reaches the data planes.
	CA     func() ([]byte, error)
	Images provisioner.Images
	// ReloadMonitoringPeriod is how long an agent watches NGINX after a
	// reload before reporting success (0: the agent's default).
	ReloadMonitoringPeriod time.Duration
	// APIReader, if set, confirms with the API server that a data-plane
	// object the cache does not have yet does not exist, before it is
	// created (an existing one Gatewall does not own is never taken over).
	APIReader client.Reader
	// Applied, if set, skips data-plane objects that neither Gatewall's
	// wish nor anybody else changed since they were last applied.
	Applied *provisioner.Applied
	// PullSecrets are the installation's image pull Secrets
	// (--nginx-docker-secret), copied into each Gateway's namespace for its
	// data-plane pods.
	PullSecrets []types.NamespacedName
	// SealKey seals the data-plane pod templates (provisioner.Params):
	// the agent server checks the seal with the same key.
	SealKey []byte
}

// notOwnedRetry is how often a Gateway whose data-plane names are taken by
// objects Gatewall does not own is tried again: deleting such an object
// triggers nothing Gatewall watches.
const notOwnedRetry = time.Minute

// provisioned is the outcome of provisioning a Gateway's data plane.
type provisioned struct {
	addresses []gatewayv1.GatewayStatusAddress
	// problem is a Programmed=False condition: requested addresses not
	// assigned yet, or a data plane that cannot be provisioned.
	problem *metav1.Condition
	// retryAfter, when set, is when to provision again.
	retryAfter time.Duration
	// notes are the NginxProxy's patches left out (provisioner.PatchedObjects),
	// named with what of the NginxProxy is not programmed.
	notes []string
	// stalled is why the data plane's Deployment cannot bring its pods up
	// (deploymentStalled); "" when it can or is still trying.
	stalled string
}

// provision applies the Gateway's data plane and removes what it left of
// its data plane under another class. When a data-plane object's name is
// taken by an object Gatewall does not own, nothing is applied and the
// problem says so.
func (r *GatewayReconciler) provision(ctx context.Context, g *graph.Gateway) (provisioned, error) {
	p := r.Provisioning
	ca, err := p.CA()
	if err != nil {
		return provisioned{}, fmt.Errorf("reading the agents' CA bundle: %w", err)
	}
	level := "info"
	if l := g.NginxProxy.Logging.AgentLevelV3(); l != "" {
		level = l
	}
	conf, err := agent.AgentConfig(agent.AgentConfigParams{
		ServerHost: p.AgentHost, ServerPort: p.AgentPort, ServerName: p.ServerName,
		CAFile:    provisioner.AgentCADir + "/" + provisioner.AgentCAFile,
		TokenFile: provisioner.AgentTokenDir + "/" + provisioner.AgentTokenFile,
		Gateway:   g.Key, LogLevel: level, ReloadMonitoringPeriod: p.ReloadMonitoringPeriod,
		MetricsPort: int(g.NginxProxy.MetricsPort()),
	})
	if err != nil {
		return provisioned{}, err
	}
	var ports, udpPorts []int32
	for _, l := range g.AcceptedListeners() {
		if l.Source.Protocol == gatewayv1.UDPProtocolType {
			udpPorts = append(udpPorts, int32(l.Source.Port))
		} else {
			ports = append(ports, int32(l.Source.Port))
		}
	}
	pullSecrets, missing, err := r.pullSecrets(ctx)
	if err != nil {
		return provisioned{}, err
	}
	objs, patchNotes := provisioner.PatchedObjects(provisioner.Params{
		Gateway: g.Source, NginxProxy: g.NginxProxy, Ports: ports, UDPPorts: udpPorts, ReadinessPort: g.ReadinessPort(), AgentConfig: conf, AgentCA: ca, Images: p.Images,
		AgentServer: net.JoinHostPort(p.AgentHost, strconv.Itoa(p.AgentPort)), AgentServerName: p.ServerName,
		Owner: r.owner(), PullSecrets: pullSecrets, SealKey: p.SealKey,
	})
	var refusedErr *provisioner.RefusedError
	if err := provisioner.Apply(ctx, r.Client, p.APIReader, r.owner(), g.Source, objs, p.Applied); err != nil {
		var notOwned *provisioner.NotOwnedError
		switch {
		case errors.As(err, &notOwned):
			return provisioned{problem: status.NotProvisioned(notOwned), retryAfter: notOwnedRetry}, nil
		case errors.As(err, &refusedErr):
			// Said in the Gateway's status below, and the configuration is
			// published all the same: the pods that run keep serving it.
			log.FromContext(ctx).Error(err, "Data-plane objects refused")
		default:
			return provisioned{}, err
		}
	}
	if refusedErr != nil {
		// The Service may be among the refused: its addresses are not
		// read. A fix of the NginxProxy is watched; one of the
		// installation's (its dataplane-placement ConfigMap, which the
		// manager does not watch) is found by trying again each minute.
		return provisioned{addresses: g.Source.Status.Addresses, problem: status.DataPlaneRefused(refusedErr), retryAfter: notOwnedRetry, notes: patchNotes}, nil
	}
	if err := provisioner.Remove(ctx, r.Client, r.owner(), g.Source, objs); err != nil {
		return provisioned{}, err
	}
	key := client.ObjectKey{Namespace: g.Key.Namespace, Name: provisioner.Name(g.Source)}
	svc := &corev1.Service{}
	if err := r.Get(ctx, key, svc); err != nil {
		return provisioned{}, client.IgnoreNotFound(err)
	}
	out := provisioned{addresses: status.ServiceAddresses(svc), problem: status.AddressCondition(graph.RequestedAddresses(g.Source), svc), notes: patchNotes}
	if len(missing) > 0 {
		// Installed when it appears (the Secret is watched); pods that need
		// it fail to pull meanwhile, which the Deployment reports.
		log.FromContext(ctx).Error(errors.New("image pull Secrets not found"), "Data-plane pods get no copy of them", "secrets", missing)
	}
	dep := &appsv1.Deployment{}
	if err := r.Get(ctx, key, dep); err != nil {
		// Not in the cache yet: nothing to say of its pods.
		return out, client.IgnoreNotFound(err)
	}
	out.stalled = deploymentStalled(dep)
	return out, nil
}

// pullSecrets reads the installation's image pull Secrets; those that do
// not exist are returned apart.
func (r *GatewayReconciler) pullSecrets(ctx context.Context) ([]*corev1.Secret, []string, error) {
	var found []*corev1.Secret
	var missing []string
	for _, k := range r.Provisioning.PullSecrets {
		// Secrets are cached as metadata only: their content comes from
		// the API server, kept while the cache's version holds.
		o, err := r.Config.Referenced.Get(ctx, graph.ObjectRef{Kind: "Secret", Key: k}, &corev1.Secret{})
		switch {
		case err == nil:
			found = append(found, o.(*corev1.Secret))
		case apierrors.IsNotFound(err):
			missing = append(missing, k.String())
		default:
			return nil, nil, fmt.Errorf("reading image pull Secret %s: %w", k, err)
		}
	}
	return found, missing, nil
}

// deploymentStalled is why a data-plane Deployment cannot bring its pods
// up, from the conditions the Deployment controller sets: pods it cannot
// create (ReplicaFailure: a quota, an admission policy), or a rollout past
// its progress deadline (Progressing=False: pods that never become ready,
// an image that cannot be pulled). "" otherwise.
func deploymentStalled(d *appsv1.Deployment) string {
	for _, c := range d.Status.Conditions {
		switch {
		case c.Type == appsv1.DeploymentReplicaFailure && c.Status == corev1.ConditionTrue:
			return fmt.Sprintf("the data plane's Deployment %s cannot create pods: %s (%s)", d.Name, c.Message, c.Reason)
		case c.Type == appsv1.DeploymentProgressing && c.Status == corev1.ConditionFalse:
			return fmt.Sprintf("the data plane's Deployment %s is not progressing: %s (%s)", d.Name, c.Message, c.Reason)
		}
	}
	return ""
}

// deprovision removes the data plane of a Gateway that is no longer this
// installation's (its class changed, was deleted or is another
// controller's): only the objects this installation created for it.
func (r *GatewayReconciler) deprovision(ctx context.Context, gw *gatewayv1.Gateway) error {
	return provisioner.Remove(ctx, r.Client, r.owner(), gw, nil)
}

// owner is this installation, as its data-plane objects name it.
func (r *GatewayReconciler) owner() provisioner.Owner {
	return provisioner.Owner{ControllerName: r.Config.ControllerName, GatewayClassName: r.Config.GatewayClassName}
}
