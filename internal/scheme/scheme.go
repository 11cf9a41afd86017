// Package scheme builds the runtime.Scheme holding every type Gatewall reads or
// writes: Kubernetes built-ins, the Gateway API, Gatewall's CRDs and the PLM
// stand-in types.
package scheme

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayv1alpha2 "sigs.k8s.io/gateway-api/apis/v1alpha2"
	gatewayv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"

	gwv1alpha1 "github.com/gatewall/gatewall/api/gateway/v1alpha1"
	gwv1alpha2 "github.com/gatewall/gatewall/api/gateway/v1alpha2"
	appprotectv1 "github.com/gatewall/gatewall/api/plm/appprotect/v1"
	wafv1alpha1 "github.com/gatewall/gatewall/api/plm/waf/v1alpha1"
)

// New returns a scheme with every type Gatewall uses registered.
func New() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme,
		apiextensionsv1.AddToScheme,
		gatewayv1.Install,
		gatewayv1beta1.Install,
		gatewayv1alpha2.Install,
		gwv1alpha1.AddToScheme,
		gwv1alpha2.AddToScheme,
		appprotectv1.AddToScheme,
		wafv1alpha1.AddToScheme,
	} {
		if err := add(s); err != nil {
			panic(err) // registering static types cannot fail unless the code is wrong
		}
	}
	return s
}
