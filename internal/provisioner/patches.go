package provisioner

import (
	"encoding/json"
	"errors"
	"fmt"

	jsonpatch "github.com/evanphx/json-patch/v5"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
	"github.com/gatewall/gatewall/internal/podseal"
)

// NGINX Gateway Fabric's patches change the Deployment, DaemonSet and
// Service Gatewall makes, after it makes them. They may add to an object
// and change what the data plane's identity and protection do not rest
// on; a patch that changes what they do rest on (protectedWorkload,
// protectedService), or does not apply, is left out, and the Gateway's
// status names it. The pod template is sealed again after the patches, so
// that the agent server serves the patched pods.

// errProtected says a patch changes what the data plane's protection
// rests on.
var errProtected = errors.New("it changes what the data plane's identity and protection rest on " +
	"(security contexts, containers, images, commands, the agent's volumes and mounts, the ServiceAccount, selectors, Gatewall's labels, annotations and owner), which patches may not")

// patchObjects applies the NginxProxy's patches to the workload and the
// Service among objs, in place, and returns what was left out, each
// "field: why".
func patchObjects(p Params, objs []client.Object) []string {
	var notes []string
	w := p.NginxProxy.Workload()
	path := "kubernetes.deployment.patches"
	if p.NginxProxy.IsDaemonSet() {
		path = "kubernetes.daemonSet.patches"
	}
	for i, o := range objs {
		switch o := o.(type) {
		case *appsv1.Deployment, *appsv1.DaemonSet:
			if w == nil || len(w.Patches) == 0 {
				continue
			}
			patched, left := patchOne(o, w.Patches, path, protectedWorkload)
			notes = append(notes, left...)
			reseal(p, patched)
			objs[i] = patched
		case *corev1.Service:
			k := p.NginxProxy.Kubernetes
			if k == nil || k.Service == nil || len(k.Service.Patches) == 0 {
				continue
			}
			patched, left := patchOne(o, k.Service.Patches, "kubernetes.service.patches", protectedService)
			notes = append(notes, left...)
			objs[i] = patched
		}
	}
	return notes
}

// patchOne applies patches to o in order, each to the result of those
// before it; one that fails or changes protected(o) is left out.
func patchOne(o client.Object, patches []v1alpha2.Patch, path string, protected func(base, o client.Object) any) (client.Object, []string) {
	var notes []string
	base := o
	want := protected(base, o)
	for i, p := range patches {
		next, err := applyPatch(o, p)
		if err == nil && !equality.Semantic.DeepEqual(protected(base, next), want) {
			err = errProtected
		}
		if err != nil {
			notes = append(notes, fmt.Sprintf("%s[%d]: not applied: %v", path, i, err))
			continue
		}
		o = next
	}
	return o, notes
}

// applyPatch returns a copy of o with p applied.
func applyPatch(o client.Object, p v1alpha2.Patch) (client.Object, error) {
	if p.Value == nil {
		return o, nil
	}
	doc, err := json.Marshal(o)
	if err != nil {
		return nil, fmt.Errorf("encoding the object: %w", err)
	}
	var out []byte
	switch {
	case p.Type != nil && *p.Type == v1alpha2.PatchTypeMerge:
		out, err = jsonpatch.MergePatch(doc, p.Value.Raw)
	case p.Type != nil && *p.Type == v1alpha2.PatchTypeJSONPatch:
		var ops jsonpatch.Patch
		if ops, err = jsonpatch.DecodePatch(p.Value.Raw); err == nil {
			out, err = ops.Apply(doc)
		}
	default: // StrategicMerge
		out, err = strategicpatch.StrategicMergePatch(doc, p.Value.Raw, o)
	}
	if err != nil {
		return nil, fmt.Errorf("it does not apply: %w", err)
	}
	next := o.DeepCopyObject().(client.Object)
	reset(next)
	if err := json.Unmarshal(out, next); err != nil {
		return nil, fmt.Errorf("its result is not a %s: %w", kind(o), err)
	}
	return next, nil
}

// reset empties o, keeping its type, so that decoding a patched document
// into it leaves nothing of the old object a patch removed.
func reset(o client.Object) {
	switch o := o.(type) {
	case *appsv1.Deployment:
		*o = appsv1.Deployment{}
	case *appsv1.DaemonSet:
		*o = appsv1.DaemonSet{}
	case *corev1.Service:
		*o = corev1.Service{}
	}
}

// reseal seals the workload's pod template again, as patched.
func reseal(p Params, o client.Object) {
	tpl := templateOf(o)
	if tpl == nil {
		return
	}
	delete(tpl.Annotations, podseal.Annotation)
	if seal, err := podseal.Seal(p.SealKey, p.Gateway.UID, &tpl.Spec); err == nil {
		if tpl.Annotations == nil {
			tpl.Annotations = map[string]string{}
		}
		tpl.Annotations[podseal.Annotation] = seal
	}
}

func templateOf(o client.Object) *corev1.PodTemplateSpec {
	switch o := o.(type) {
	case *appsv1.Deployment:
		return &o.Spec.Template
	case *appsv1.DaemonSet:
		return &o.Spec.Template
	}
	return nil
}

// protectedMeta is what of an object's metadata patches keep: its name,
// Gatewall's labels and annotations as Gatewall set them (others may be
// added), its owner.
type protectedMeta struct {
	Name, Namespace string
	Labels          map[string]string
	Annotations     map[string]string
	Owners          []metav1.OwnerReference
}

// gatewallKeys are m's values of the keys of keys ("" when absent): the
// keys Gatewall set keep their values, others may be added.
func gatewallKeys(m map[string]string, keys map[string]string) map[string]string {
	out := map[string]string{}
	for k := range keys {
		out[k] = m[k]
	}
	return out
}

// own are Gatewall's annotations besides the labels it sets.
var own = map[string]string{ControllerAnnotation: "", agentConfigHashAnnotation: ""}

// protectedWorkload is what a Deployment's or DaemonSet's patches keep:
// its metadata, selector and pod template's labels and annotations of
// Gatewall's, and of the pods everything the seal holds of what Gatewall
// rendered (the containers, their images, commands, arguments, security
// contexts and mounts, the volumes of the data plane's own, the
// ServiceAccount and token, host namespaces, the pod's security
// context).
func protectedWorkload(base, o client.Object) any {
	tpl, baseTpl := templateOf(o), templateOf(base)
	var sel *metav1.LabelSelector
	switch o := o.(type) {
	case *appsv1.Deployment:
		sel = o.Spec.Selector
	case *appsv1.DaemonSet:
		sel = o.Spec.Selector
	}
	type container struct {
		Name, Image     string
		Command, Args   []string
		SecurityContext *corev1.SecurityContext
		Mounts          []corev1.VolumeMount
		Env             []corev1.EnvVar
		EnvFrom         []corev1.EnvFromSource
	}
	s := tpl.Spec
	out := struct {
		Meta, TemplateMeta    protectedMeta
		Selector              *metav1.LabelSelector
		ServiceAccount        string
		Token                 *bool
		HostNetwork, PID, IPC bool
		Share                 *bool
		HostUsers             *bool
		Security              *corev1.PodSecurityContext
		Containers, Init      []container
		Ephemeral             int
		OwnVolumes            []corev1.Volume
	}{
		Meta: protectedMeta{Name: o.GetName(), Namespace: o.GetNamespace(), Owners: o.GetOwnerReferences(),
			Labels: gatewallKeys(o.GetLabels(), base.GetLabels()), Annotations: gatewallKeys(o.GetAnnotations(), own)},
		TemplateMeta: protectedMeta{Labels: gatewallKeys(tpl.Labels, baseTpl.Labels), Annotations: gatewallKeys(tpl.Annotations, own)},
		Selector:     sel, ServiceAccount: s.ServiceAccountName, Token: s.AutomountServiceAccountToken,
		HostNetwork: s.HostNetwork, PID: s.HostPID, IPC: s.HostIPC, Share: s.ShareProcessNamespace, HostUsers: s.HostUsers,
		Security: s.SecurityContext, Ephemeral: len(s.EphemeralContainers),
	}
	for _, c := range s.Containers {
		out.Containers = append(out.Containers, container{c.Name, c.Image, c.Command, c.Args, c.SecurityContext, c.VolumeMounts, c.Env, c.EnvFrom})
	}
	for _, c := range s.InitContainers {
		out.Init = append(out.Init, container{c.Name, c.Image, c.Command, c.Args, c.SecurityContext, c.VolumeMounts, c.Env, c.EnvFrom})
	}
	for _, v := range s.Volumes {
		for _, own := range v1alpha2.ReservedVolumeNames {
			if v.Name == own {
				out.OwnVolumes = append(out.OwnVolumes, v)
			}
		}
	}
	return out
}

// protectedService is what a Service's patches keep: its metadata of
// Gatewall's, its selector, and no external IPs.
func protectedService(base, o client.Object) any {
	svc := o.(*corev1.Service)
	return struct {
		Meta        protectedMeta
		Selector    map[string]string
		ExternalIPs []string
	}{
		Meta: protectedMeta{Name: svc.Name, Namespace: svc.Namespace, Owners: svc.OwnerReferences,
			Labels: gatewallKeys(svc.Labels, base.GetLabels()), Annotations: gatewallKeys(svc.Annotations, own)},
		Selector: svc.Spec.Selector, ExternalIPs: svc.Spec.ExternalIPs,
	}
}
