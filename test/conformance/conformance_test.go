package conformance

import (
	"flag"
	"io/fs"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/gateway-api/apis/v1alpha3"
	xv1alpha1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"
	"sigs.k8s.io/gateway-api/conformance"
	confv1 "sigs.k8s.io/gateway-api/conformance/apis/v1"
	conformanceconfig "sigs.k8s.io/gateway-api/conformance/utils/config"
	"sigs.k8s.io/gateway-api/conformance/utils/flags"
	"sigs.k8s.io/gateway-api/conformance/utils/suite"
	"sigs.k8s.io/gateway-api/pkg/features"

	"github.com/gatewall/gatewall/internal/manager"
	"github.com/gatewall/gatewall/internal/scheme"
)

var extended = flag.Bool("extended", false,
	"Run the tests of every feature the GatewayClass claims in its status; without it only the core tests of the profiles run.")

// usableAddress is a Gateway address the runtime's load balancer can give
// (its range is 127.0.3.0/24, handed out from the bottom).
const usableAddress = "127.0.3.250"

// profiles are the conformance profiles Gatewall claims.
var profiles = []suite.ConformanceProfileName{suite.GatewayHTTPConformanceProfileName, suite.GatewayGRPCConformanceProfileName,
	suite.GatewayTLSConformanceProfileName, suite.GatewayTCPConformanceProfileName, suite.GatewayUDPConformanceProfileName}

// coreFeatures are the core features of the profiles: naming them runs
// exactly the core tests; and TLSRoute's modes, which Gatewall serves: a
// core test (TLSRouteListenerTerminateNotSupported) checks that a suite
// run without TLSRouteModeTerminate refuses Terminate listeners.
var coreFeatures = []features.FeatureName{features.SupportGateway, features.SupportReferenceGrant,
	features.SupportHTTPRoute, features.SupportGRPCRoute, features.SupportTLSRoute,
	features.SupportTLSRouteModeTerminate, features.SupportTLSRouteModeMixed,
	features.SupportTCPRoute, features.SupportUDPRoute}

func TestConformance(t *testing.T) {
	s := scheme.New()
	for _, install := range []func(*runtime.Scheme) error{v1alpha3.Install, xv1alpha1.Install} {
		if err := install(s); err != nil {
			t.Fatal(err)
		}
	}
	opts := client.Options{Scheme: s}
	c, err := client.New(rt.Config, opts)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := clientset.NewForConfig(rt.Config)
	if err != nil {
		t.Fatal(err)
	}
	configurable := suite.ConfigurableOptions{
		GatewayClassName:     manager.DefaultGatewayClassName,
		CleanupBaseResources: true,
		CleanupTestResources: true,
		Mode:                 flags.DefaultMode,
		TimeoutConfig:        conformanceconfig.DefaultTimeoutConfig(),
		ConformanceProfiles:  profiles,
		Implementation: confv1.Implementation{
			Organization: "gatewall", Project: "gatewall", URL: "https://github.com/gatewall/gatewall",
			Version: "dev", Contact: []string{"@gatewall/maintainers"},
		},
	}
	// GatewayStaticAddresses: an address in the runtime's load balancer
	// range that no Gateway is given first, and one outside it.
	configurable.UsableNetworkAddresses = []gatewayv1.GatewaySpecAddress{{Type: ptr.To(gatewayv1.IPAddressType), Value: usableAddress}}
	configurable.UnusableNetworkAddresses = []gatewayv1.GatewaySpecAddress{{Type: ptr.To(gatewayv1.IPAddressType), Value: "10.255.255.254"}}
	if !*extended {
		configurable.SupportedFeatures = coreFeatures
	}
	// The suite's own flags (-run-test, -debug, -report-output, -version, …) override.
	flags.ApplyAll(&configurable)
	conformance.RunConformanceWithOptions(t, suite.ConformanceOptions{
		ConfigurableOptions: configurable,
		Client:              c,
		ClientOptions:       opts,
		Clientset:           cs,
		RestConfig:          rt.Config,
		ManifestFS:          []fs.FS{&conformance.Manifests},
	})
}
