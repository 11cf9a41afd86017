// Package v1alpha1 holds Gatewall's policies (ProxySettingsPolicy,
// ClientSettingsPolicy, RateLimitPolicy, UpstreamSettingsPolicy and
// WAFGatewayBindingPolicy) and route filters (AuthenticationFilter), group
// gateway.nginx.org, version v1alpha1.
//
// +kubebuilder:object:generate=true
// +groupName=gateway.nginx.org
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of the objects in this package.
	GroupVersion = schema.GroupVersion{Group: "gateway.nginx.org", Version: "v1alpha1"}

	// SchemeBuilder registers the objects of this package with a scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds the objects of this package to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
