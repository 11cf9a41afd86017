package v1alpha2

import apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

// ReadinessProbeSpec tunes the NGINX container's readiness probe (NGINX
// Gateway Fabric's shape). The probe asks NGINX itself, on a port of the
// data plane's own, so that a pod is ready only once NGINX runs a
// configuration Gatewall pushed.
type ReadinessProbeSpec struct {
	// Port is where NGINX answers the probe. Not programmed: the port is
	// the first from 8081 up that no listener of the Gateway uses (the
	// status says so).
	//
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Port *int32 `json:"port,omitempty"`

	// Path is the probe's path. Not programmed: it is /readyz (the status
	// says so).
	//
	// +optional
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:Pattern=`^/[a-zA-Z0-9/_\-\.~]*$`
	Path *string `json:"path,omitempty"`

	// InitialDelaySeconds is how long after the container starts the
	// first probe is made: 0 to 3600 seconds, 0 by default (NGINX is not
	// ready before its first configuration anyway).
	//
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=3600
	InitialDelaySeconds *int32 `json:"initialDelaySeconds,omitempty"`

	// Expose would put the probe's port on the Gateway's Service, for an
	// outside load balancer's health checks. Not programmed (the status
	// says so).
	//
	// +optional
	Expose *bool `json:"expose,omitempty"`
}

// HostPort binds a port of the node to a port of the NGINX container.
type HostPort struct {
	// Port is the node's port.
	//
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Port int32 `json:"port"`

	// ContainerPort is the NGINX container's port (a listener's).
	//
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	ContainerPort int32 `json:"containerPort"`
}

// NodePort chooses the node port of the Service's port of a listener port.
type NodePort struct {
	// Port is the node port.
	//
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Port int32 `json:"port"`

	// ListenerPort is the Gateway listener port it serves.
	//
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	ListenerPort int32 `json:"listenerPort"`
}

// Patch changes a data-plane object Gatewall makes, after Gatewall has
// made it (NGINX Gateway Fabric's shape). A patch may add to the object
// and change what is not the data plane's identity and protection: one
// that changes the pods' or containers' security contexts, the
// containers' commands, images' set or the agent's token, CA and
// configuration, the ServiceAccount, the pods' labels and selector, or
// Gatewall's marks, is not applied, and the Gateway's status says so. The
// pod template is sealed after the patches.
type Patch struct {
	// Type is StrategicMerge (the default), Merge (RFC 7386) or JSONPatch
	// (RFC 6902).
	//
	// +optional
	// +kubebuilder:default:=StrategicMerge
	Type *PatchType `json:"type,omitempty"`

	// Value is the patch: a JSON object for StrategicMerge and Merge, an
	// array of operations for JSONPatch.
	//
	// +optional
	// +kubebuilder:validation:XPreserveUnknownFields
	Value *apiextv1.JSON `json:"value,omitempty"`
}

// PatchType is how a Patch is applied.
//
// +kubebuilder:validation:Enum=StrategicMerge;Merge;JSONPatch
type PatchType string

// The patch types.
const (
	PatchTypeStrategicMerge PatchType = "StrategicMerge"
	PatchTypeMerge          PatchType = "Merge"
	PatchTypeJSONPatch      PatchType = "JSONPatch"
)
