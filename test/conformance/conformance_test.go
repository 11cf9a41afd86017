package conformance

import (
	"flag"
	"io/fs"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	clientset "k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
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

// profiles are the conformance profiles Gatewall claims.
var profiles = []suite.ConformanceProfileName{suite.GatewayHTTPConformanceProfileName, suite.GatewayGRPCConformanceProfileName}

// coreFeatures are the core features of the profiles: naming them runs
// exactly the core tests.
var coreFeatures = []features.FeatureName{features.SupportGateway, features.SupportReferenceGrant,
	features.SupportHTTPRoute, features.SupportGRPCRoute}

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
