// Package podseal seals the pod template of a Gateway's data plane, so
// that the agent server can tell a pod Gatewall rendered for that Gateway
// from one that only looks like it.
//
// Anyone who may create pods in a Gateway's namespace can create one that
// runs as the data plane's ServiceAccount and carries its labels, and get a
// token bound to it. What such a pod must not get is the Gateway's files,
// certificate keys included. The manager therefore computes, with a key
// only it holds, a MAC (HMAC-SHA256) over the Gateway's UID and the
// security-relevant part of the pod spec it renders (Projection), and puts
// it in the pod template's Annotation; the agent server recomputes it from
// the live pod. A pod passes only if its spec is one the manager rendered
// for that Gateway: a copy of a real data-plane pod runs Gatewall's own
// images, commands and mounts, and pods of an older template (a rollout
// under way) still pass.
//
// The projection is chosen so that the API server's defaulting does not
// change it (defaults of the fields it holds are applied to both sides):
// test/envtest creates pods and Deployments from rendered templates and
// checks their seals. The package is pure: no I/O.
package podseal

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Annotation holds a pod template's seal.
const Annotation = "gatewall.io/pod-seal"

// A version prefixes a seal: a later projection gets a new one, and seals
// of the old one stay verifiable while its pods run. A v1 seal leaves
// placement out (the node selector, tolerations, affinity and host ports):
// it is the seal of pods whose template sets none, so that a mutating
// admission that adds a toleration or a node selector to every pod of a
// namespace, which such pods passed before placement was sealed, still
// lets them pass. A template that sets any gets a v2 seal, which holds
// them: its pods carry the placement they were rendered with.
const (
	version          = "v1."
	versionPlacement = "v2."
)

// KeySize is the size of a sealing key: HMAC-SHA256's block is larger,
// its output this size.
const KeySize = 32

// macContext separates these MACs from any other use of the key, and
// each version's from the other's.
var macContext = map[string]string{version: "gatewall pod seal v1\x00", versionPlacement: "gatewall pod seal v2\x00"}

// Seal returns the seal of spec, rendered for the Gateway whose UID is
// gateway, under key.
func Seal(key []byte, gateway types.UID, spec *corev1.PodSpec) (string, error) {
	if len(key) < KeySize {
		return "", fmt.Errorf("a pod seal key has %d bytes, want %d", len(key), KeySize)
	}
	v := version
	if hasPlacement(spec) {
		v = versionPlacement
	}
	p, err := project(spec, v == versionPlacement)
	if err != nil {
		return "", err
	}
	return v + base64.RawURLEncoding.EncodeToString(mac(key, v, gateway, p)), nil
}

// Verify returns nil if pod carries the seal its spec would have if the
// manager had rendered it for the Gateway whose UID is gateway, else why
// not.
func Verify(key []byte, gateway types.UID, pod *corev1.Pod) error {
	seal, ok := pod.Annotations[Annotation]
	switch {
	case !ok:
		return fmt.Errorf("it carries no seal (annotation %s): Gatewall did not render it", Annotation)
	case len(pod.Spec.EphemeralContainers) > 0:
		// They can mount the pod's volumes and join its containers'
		// process namespaces: what the seal rules out.
		return fmt.Errorf("it has ephemeral containers (%s)", ephemeralNames(pod))
	}
	v := seal[:min(len(seal), len(version))]
	if _, known := macContext[v]; !known {
		return fmt.Errorf("its seal is not of a version this Gatewall knows (%q)", truncate(seal))
	}
	got, err := base64.RawURLEncoding.DecodeString(seal[len(v):])
	if err != nil {
		return fmt.Errorf("its seal does not decode: %w", err)
	}
	p, err := project(&pod.Spec, v == versionPlacement)
	if err != nil {
		return err
	}
	if !hmac.Equal(got, mac(key, v, gateway, p)) {
		return errors.New("its spec is not one Gatewall rendered for this Gateway: its containers, images, commands, environment, mounts, volumes, " +
			"security contexts or ServiceAccount differ from those sealed, or the seal is of another Gateway or another installation")
	}
	return nil
}

func mac(key []byte, v string, gateway types.UID, projection []byte) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(macContext[v]))
	h.Write([]byte(gateway))
	h.Write([]byte{0})
	h.Write(projection)
	return h.Sum(nil)
}

// Projection is the canonical encoding (JSON, fields in a fixed order) of
// what the seal covers of spec: every container and init container (names,
// images, commands, arguments, working directory, environment, mounts,
// devices, security context, the commands of exec probes and hooks,
// resource claims, an init container's restart policy), the volumes, the
// ServiceAccount and whether its API token is mounted, the host namespaces
// and process sharing, the pod's security context and resource claims; and
// where it may run: its node selector, tolerations (but those of node
// conditions, which Kubernetes adds), preferred node affinity, pod
// affinity and anti-affinity, and the containers' host ports. Left out is
// what does not decide which code runs with which files and privileges,
// or cannot be held: resources, other ports, probes that are not
// commands, the node (nodeName, which the scheduler sets, and the
// required node affinity, which the DaemonSet controller replaces), DNS,
// labels and annotations.
//
// A v1 seal's projection leaves placement out (version).
func Projection(spec *corev1.PodSpec) ([]byte, error) { return project(spec, true) }

// hasPlacement says whether spec sets what a v2 seal holds and a v1 seal
// does not.
func hasPlacement(spec *corev1.PodSpec) bool {
	if len(spec.NodeSelector) > 0 || projectAffinity(spec.Affinity) != nil || len(projectTolerations(spec.Tolerations)) > 0 {
		return true
	}
	for _, c := range append(append([]corev1.Container(nil), spec.InitContainers...), spec.Containers...) {
		for _, port := range c.Ports {
			if port.HostPort != 0 {
				return true
			}
		}
	}
	return false
}

func project(spec *corev1.PodSpec, placement bool) ([]byte, error) {
	p := podProjection{
		ServiceAccountName:           spec.ServiceAccountName,
		AutomountServiceAccountToken: spec.AutomountServiceAccountToken,
		HostNetwork:                  spec.HostNetwork,
		HostPID:                      spec.HostPID,
		HostIPC:                      spec.HostIPC,
		ShareProcessNamespace:        spec.ShareProcessNamespace != nil && *spec.ShareProcessNamespace,
		HostUsers:                    spec.HostUsers,
		SecurityContext:              projectPodSecurity(spec.SecurityContext),
		ResourceClaims:               spec.ResourceClaims,
	}
	if placement {
		p.NodeSelector, p.Affinity, p.Tolerations = spec.NodeSelector, projectAffinity(spec.Affinity), projectTolerations(spec.Tolerations)
	}
	for _, c := range spec.InitContainers {
		p.InitContainers = append(p.InitContainers, projectContainer(c, placement))
	}
	for _, c := range spec.Containers {
		p.Containers = append(p.Containers, projectContainer(c, placement))
	}
	for _, v := range spec.Volumes {
		pv, err := projectVolume(v)
		if err != nil {
			return nil, err
		}
		p.Volumes = append(p.Volumes, pv)
	}
	out, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("encoding the pod's projection: %w", err)
	}
	return out, nil
}

func ephemeralNames(pod *corev1.Pod) string {
	var names []string
	for _, c := range pod.Spec.EphemeralContainers {
		names = append(names, c.Name)
	}
	return strings.Join(names, ", ")
}

// truncate bounds what a message quotes of a value a pod's creator wrote.
func truncate(s string) string {
	const most = 64
	if len(s) <= most {
		return s
	}
	return s[:most] + "…"
}
