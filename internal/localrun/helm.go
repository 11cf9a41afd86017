package localrun

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gatewall/gatewall/internal/helm"
	"github.com/gatewall/gatewall/internal/local/images"
	"github.com/gatewall/gatewall/internal/manager"
)

// helm runs bin/helm on this runtime's cluster, its cache, configuration
// and data in the state directory (never the user's).
func (r *Runtime) helm() helm.Helm {
	return helm.Helm{Path: filepath.Join(r.opts.Root, helm.Binary), Kubeconfig: r.opts.KubeconfigPath,
		Home: filepath.Join(r.opts.StateDir, "helm")}
}

// release is d as a release of charts/gatewall: named as its instance
// label (the chart's app.kubernetes.io/instance is the release's name),
// its objects' names prefixed as NamePrefix prefixes config/default's
// (fullnameOverride), serving its controllerName and class, with the
// manager image images.Manager and d's Args after the chart's flags, then
// d's Values.
func (r *Runtime) release(d Deployment) helm.Release {
	inst := d.Installation
	repository, tag, _ := strings.Cut(images.Manager, ":")
	gw := map[string]any{
		"image":                 map[string]any{"repository": repository, "tag": tag},
		"gatewayControllerName": inst.controllerName(),
		"gatewayClassName":      cmp.Or(inst.GatewayClass, manager.DefaultGatewayClassName),
	}
	if len(d.Args) > 0 {
		gw["extraArgs"] = d.Args
	}
	values := map[string]any{"fullnameOverride": inst.NamePrefix + "gatewall", "nginxGateway": gw}
	mergeValues(values, d.Values)
	return helm.Release{Name: cmp.Or(inst.Instance, defaultInstance), Namespace: inst.namespace(),
		Chart: filepath.Join(r.opts.Root, "charts", "gatewall"), Values: values}
}

// mergeValues sets over's values in into, maps merged key by key, as helm
// merges values files.
func mergeValues(into, over map[string]any) {
	for k, v := range over {
		sub, ok := v.(map[string]any)
		if cur, isMap := into[k].(map[string]any); ok && isMap {
			mergeValues(cur, sub)
			continue
		}
		into[k] = v
	}
}

// helmUninstall uninstalls d's release and deletes its namespace when it
// has its own, as Undeploy does for an installation kustomize made.
func (r *Runtime) helmUninstall(ctx context.Context, d Deployment) error {
	rel := r.release(d)
	if err := r.helm().Uninstall(ctx, rel.Name, rel.Namespace); err != nil {
		return fmt.Errorf("localrun: removing release %s: %w", rel.Name, err)
	}
	if rel.Namespace == ManagerNamespace {
		return nil
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: rel.Namespace}}
	if err := r.Client.Delete(ctx, ns); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("localrun: removing namespace %s: %w", rel.Namespace, err)
	}
	return nil
}
