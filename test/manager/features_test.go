package manager_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/gateway-api/pkg/features"
	"sigs.k8s.io/yaml"

	"github.com/gatewall/gatewall/internal/localrun"
)

// TestSupportedFeaturesFollowTheCRDs: the GatewayClass claims the retry
// features only while the cluster's HTTPRoute CRD has the retry field (the
// experimental channel's, in Gateway API v1.6): with the standard
// channel's, which the API server prunes retry from, it does not; the
// experimental one installed adds them, and the standard one back removes
// them, without a restart.
func TestSupportedFeaturesFollowTheCRDs(t *testing.T) {
	ctx := context.Background()
	if err := env.Client.Create(ctx, gatewayClass()); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
	claims := func(want bool) {
		t.Helper()
		eventually(t, 20*time.Second, func() error {
			gc := &gatewayv1.GatewayClass{}
			if err := env.Client.Get(ctx, client.ObjectKey{Name: className}, gc); err != nil {
				return err
			}
			var names []string
			for _, f := range gc.Status.SupportedFeatures {
				names = append(names, string(f.Name))
			}
			for _, f := range []features.FeatureName{features.SupportHTTPRouteRetry, features.SupportHTTPRouteRetryConnectionError} {
				if got := slices.Contains(names, string(f)); got != want {
					return fmt.Errorf("claims %s: %v, want %v (features %v)", f, got, want, names)
				}
			}
			if !slices.Contains(names, string(features.SupportHTTPRoute)) {
				return fmt.Errorf("HTTPRoute itself is not claimed: %v", names)
			}
			return nil
		})
	}
	claims(false) // envtest installs the standard channel
	replaceHTTPRouteCRD(t, "experimental")
	t.Cleanup(func() { replaceHTTPRouteCRD(t, "standard") })
	claims(true)
	replaceHTTPRouteCRD(t, "standard")
	claims(false)
}

// replaceHTTPRouteCRD replaces the HTTPRoute CRD with the channel's.
func replaceHTTPRouteCRD(t *testing.T, channel string) {
	t.Helper()
	standard, err := localrun.GatewayAPICRDDir()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(filepath.Dir(standard), channel, "gateway.networking.k8s.io_httproutes.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	want := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(data, want); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, func() error {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := env.Client.Get(context.Background(), client.ObjectKey{Name: want.Name}, crd); err != nil {
			return err
		}
		crd.Spec = want.Spec
		crd.Annotations = want.Annotations
		return env.Client.Update(context.Background(), crd)
	})
}
