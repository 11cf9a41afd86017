package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// WAFGatewayBindingPolicyAffected is the condition type Gatewall sets on every
// Gateway, HTTPRoute and GRPCRoute protected by a WAFGatewayBindingPolicy.
const WAFGatewayBindingPolicyAffected = "gateway.nginx.org/WAFGatewayBindingPolicyAffected"

// Reasons of a WAFGatewayBindingPolicy's conditions beyond the Gateway API's.
const (
	// WAFReasonInvalidRef: an APPolicy or APLogConf does not exist or has no usable bundle.
	WAFReasonInvalidRef = "InvalidRef"
	// WAFReasonRefNotPermitted: a cross-namespace reference lacks a ReferenceGrant.
	WAFReasonRefNotPermitted = "RefNotPermitted"
	// WAFReasonFetchError: a bundle could not be fetched from PLM storage.
	WAFReasonFetchError = "FetchError"
	// WAFReasonIntegrityError: a fetched bundle did not match its sha256.
	WAFReasonIntegrityError = "IntegrityError"
	// WAFReasonDeploymentError: the data plane failed to apply the configuration.
	WAFReasonDeploymentError = "DeploymentError"
	// WAFReasonWAFDisabled: the ancestor Gateway's effective NginxProxy does not enable WAF.
	WAFReasonWAFDisabled = "WAFNotEnabled"
)

// WAFGatewayBindingPolicy is an inherited policy (GEP-713) that binds a compiled
// F5 WAF policy (a PLM APPolicy) and security log profiles (PLM APLogConfs) to
// Gateways or to routes. A Gateway policy protects every route attached to the
// Gateway; a route policy replaces the Gateway's for that route entirely.
//
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=gateway-api,scope=Namespaced,shortName=wafpolicy;wgbp
// +kubebuilder:printcolumn:name="APPolicy",type=string,JSONPath=`.spec.apPolicySource.name`
// +kubebuilder:printcolumn:name="Bundle",type=string,JSONPath=`.status.apPolicyStatus.bundle.state`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:metadata:labels="gateway.networking.k8s.io/policy=inherited"
type WAFGatewayBindingPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec defines the desired state of the WAFGatewayBindingPolicy.
	Spec WAFGatewayBindingPolicySpec `json:"spec"`

	// Status is the state of the policy per ancestor (Gateway) and of the bundles
	// it references, as set by Gatewall.
	// +optional
	Status WAFGatewayBindingPolicyStatus `json:"status,omitempty"`
}

// WAFGatewayBindingPolicySpec defines the desired state of a WAFGatewayBindingPolicy.
type WAFGatewayBindingPolicySpec struct {
	// TargetRefs are the Gateways, or the HTTPRoutes and GRPCRoutes, in the
	// policy's own namespace that the policy protects. One policy targets either
	// Gateways or routes, never both. Each target appears at most once.
	//
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:XValidation:message="TargetRefs entries must have kind Gateway, HTTPRoute, or GRPCRoute",rule="self.all(t, t.kind == 'Gateway' || t.kind == 'HTTPRoute' || t.kind == 'GRPCRoute')"
	// +kubebuilder:validation:XValidation:message="TargetRefs entries must have group gateway.networking.k8s.io",rule="self.all(t, t.group == 'gateway.networking.k8s.io')"
	// +kubebuilder:validation:XValidation:message="TargetRefs must be unique",rule="self.all(t1, self.exists_one(t2, t1.kind == t2.kind && t1.name == t2.name))"
	// +kubebuilder:validation:XValidation:message="TargetRefs cannot mix Gateway with HTTPRoute or GRPCRoute",rule="self.all(t, t.kind == 'Gateway') || self.all(t, t.kind != 'Gateway')"
	TargetRefs []gatewayv1.LocalPolicyTargetReference `json:"targetRefs"`

	// APPolicySource is the PLM APPolicy whose compiled bundle is enforced. An
	// APPolicy in another namespace needs a ReferenceGrant in that namespace from
	// gateway.nginx.org/WAFGatewayBindingPolicy to the APPolicy kind.
	APPolicySource PLMObjectReference `json:"apPolicySource"`

	// SecurityLogs are the security log profiles (PLM APLogConfs) and where each
	// one's events go.
	//
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	SecurityLogs []SecurityLog `json:"securityLogs,omitempty"`
}

// PLMObjectReference names a PLM object (APPolicy or APLogConf).
type PLMObjectReference struct {
	// Name of the object: a DNS-1123 subdomain.
	//
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name"`

	// Namespace of the object: a DNS-1123 label. Defaults to the policy's namespace.
	//
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Namespace *string `json:"namespace,omitempty"`
}

// SecurityLog sends the events selected by one log profile to one destination.
type SecurityLog struct {
	// Name identifies this entry in status and messages: a DNS-1123 label.
	//
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name *string `json:"name,omitempty"`

	// APLogConfSource is the PLM APLogConf whose compiled log profile is used. An
	// APLogConf in another namespace needs a ReferenceGrant, as for APPolicySource.
	APLogConfSource PLMObjectReference `json:"apLogConfSource"`

	// Destination is where the security log events go.
	Destination SecurityLogDestination `json:"destination"`
}

// SecurityLogDestinationType is where security log events go.
//
// +kubebuilder:validation:Enum=Stderr;File;Syslog
type SecurityLogDestinationType string

// Security log destination types.
const (
	// SecurityLogDestinationStderr writes events to the WAF's standard error.
	SecurityLogDestinationStderr SecurityLogDestinationType = "Stderr"
	// SecurityLogDestinationFile writes events to a file.
	SecurityLogDestinationFile SecurityLogDestinationType = "File"
	// SecurityLogDestinationSyslog sends events to a syslog server over TCP.
	SecurityLogDestinationSyslog SecurityLogDestinationType = "Syslog"
)

// SecurityLogDestination is where the events of a security log go. File is set
// exactly when Type is File, Syslog exactly when Type is Syslog.
//
// +kubebuilder:validation:XValidation:message="file must be set when type is File, and only then",rule="(self.type == 'File') == has(self.file)"
// +kubebuilder:validation:XValidation:message="syslog must be set when type is Syslog, and only then",rule="(self.type == 'Syslog') == has(self.syslog)"
type SecurityLogDestination struct {
	// Type is the kind of destination: Stderr, File or Syslog.
	//
	// +kubebuilder:default=Stderr
	// +optional
	Type SecurityLogDestinationType `json:"type,omitempty"`

	// File is the file destination; required when Type is File.
	// +optional
	File *FileDestination `json:"file,omitempty"`

	// Syslog is the syslog destination; required when Type is Syslog.
	// +optional
	Syslog *SyslogDestination `json:"syslog,omitempty"`
}

// SecurityLogFileDir is the directory security log files must be in: the data
// plane mounts a volume there that NGINX and the WAF enforcer share.
const SecurityLogFileDir = "/var/log/app_protect/"

// FileDestination writes security log events to a file.
type FileDestination struct {
	// Path of the log file: a file directly in /var/log/app_protect/, the volume
	// the WAF enforcer shares with NGINX. The file name uses letters, digits,
	// '.', '_' and '-', and does not start with '.'.
	//
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:Pattern=`^/var/log/app_protect/[A-Za-z0-9_-][A-Za-z0-9._-]*$`
	Path string `json:"path"`
}

// SyslogDestination sends security log events to a syslog server over TCP.
type SyslogDestination struct {
	// Server is the syslog server as host:port, where host is a DNS name
	// (lower case, labels of at most 63 characters, the last one not all
	// digits) or an IPv4 address, and port is 1-65535.
	//
	// +kubebuilder:validation:MaxLength=259
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*:[0-9]{1,5}$`
	// +kubebuilder:validation:XValidation:message="host must be a DNS name or an IPv4 address",rule="!self.matches('(^|[.])[0-9]+:[0-9]+$') || isIP(self.substring(0, self.lastIndexOf(':')))"
	// +kubebuilder:validation:XValidation:message="port must be between 1 and 65535",rule="int(self.substring(self.lastIndexOf(':') + 1)) >= 1 && int(self.substring(self.lastIndexOf(':') + 1)) <= 65535"
	Server string `json:"server"`
}

// WAFGatewayBindingPolicyStatus is the state of a WAFGatewayBindingPolicy.
type WAFGatewayBindingPolicyStatus struct {
	gatewayv1.PolicyStatus `json:",inline"`

	// APPolicyStatus mirrors the APPolicy bundle in force and when Gatewall
	// last fetched it: the referenced APPolicy's, or, while that one is not
	// available after apPolicySource changed, the bundle of the APPolicy
	// referenced before, which stays in force (its name is given).
	// +optional
	APPolicyStatus *BundleReferenceStatus `json:"apPolicyStatus,omitempty"`

	// APLogConfStatus mirrors the bundles of the referenced APLogConfs, in the
	// order of spec.securityLogs (each APLogConf once).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	APLogConfStatus []BundleReferenceStatus `json:"apLogConfStatus,omitempty"`
}

// BundleReferenceStatus is what Gatewall knows of one referenced PLM bundle.
type BundleReferenceStatus struct {
	// Name of the APPolicy or APLogConf.
	Name string `json:"name"`
	// Namespace of the APPolicy or APLogConf.
	Namespace string `json:"namespace"`
	// Bundle is the bundle as the PLM object's status describes it.
	// +optional
	Bundle BundleSummary `json:"bundle,omitempty"`
	// LastFetched is when Gatewall last fetched and verified this bundle.
	// +optional
	LastFetched *metav1.Time `json:"lastFetched,omitempty"`
}

// BundleSummary is the part of a PLM bundle status Gatewall uses.
type BundleSummary struct {
	// State of the bundle: pending, processing, ready or invalid.
	// +optional
	State string `json:"state,omitempty"`
	// Location of the compiled bundle, s3://bucket/key.
	// +optional
	Location string `json:"location,omitempty"`
	// Sha256 of the compiled bundle, hex.
	// +optional
	Sha256 string `json:"sha256,omitempty"`
}

// WAFGatewayBindingPolicyList is a list of WAFGatewayBindingPolicies.
//
// +kubebuilder:object:root=true
type WAFGatewayBindingPolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []WAFGatewayBindingPolicy `json:"items"`
}

func init() {
	SchemeBuilder.Register(&WAFGatewayBindingPolicy{}, &WAFGatewayBindingPolicyList{})
}
