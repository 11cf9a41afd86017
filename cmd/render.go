package main

import (
	"errors"
	"flag"
	"os"

	"github.com/gatewall/gatewall/api/plm"
	"github.com/gatewall/gatewall/internal/manager"
	"github.com/gatewall/gatewall/internal/render"
)

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return "" }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

// runRender previews, with no cluster, the NGINX files and statuses Gatewall
// would produce for the given manifests.
func runRender(args []string) error {
	fs := flag.NewFlagSet("gatewall render", flag.ContinueOnError)
	var paths, kustomizations stringList
	fs.Var(&paths, "f", "A manifest file or directory, read as it is (repeatable).")
	fs.Var(&kustomizations, "k", "A kustomization directory, built as kubectl -k does (repeatable).")
	out := fs.String("output-dir", "", "Directory for <namespace>_<gateway>/ files and status.yaml.")
	ctlr := fs.String("gateway-ctlr-name", manager.DefaultControllerName, "The GatewayClass controllerName to render for.")
	bundles := fs.String("plm-bundles-dir", "", "Directory of WAF bundles named <sha256>.tgz, standing in for PLM storage.")
	group := fs.String("plm-api-group", "", "PLM API group to read (appprotect.f5.com or waf.f5.com); empty picks the one the manifests use.")
	var scope plm.Scope
	fs.StringVar(&scope.Bucket, "plm-storage-bucket", "", "The manager's --plm-storage-bucket: bundle locations elsewhere are refused (empty: any).")
	fs.StringVar(&scope.Prefix, "plm-storage-prefix", "", "The manager's --plm-storage-prefix.")
	channel := fs.String("gateway-api-channel", render.ChannelStandard, "The Gateway API channel whose CRDs the cluster has (standard or experimental): the GatewayClass claims the features they carry.")
	snippets := fs.Bool("snippets", false, "The manager's --snippets: use SnippetsFilters and SnippetsPolicies (off: their statuses say they are not used).")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if len(paths)+len(kustomizations) == 0 || *out == "" {
		return errors.New("render: -f or -k, and --output-dir, are required")
	}
	return render.Run(render.Options{Paths: paths, Kustomizations: kustomizations, OutputDir: *out, ControllerName: *ctlr, Warnings: os.Stderr, BundlesDir: *bundles, PLMGroup: *group, PLMScope: scope, Snippets: *snippets, GatewayAPIChannel: *channel})
}
