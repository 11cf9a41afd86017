package manager_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/manifest"
	"github.com/gatewall/gatewall/internal/policy"
	"github.com/gatewall/gatewall/test/testenv"
)

// parityGoldens, when set, replaces parityCases by these goldens (comma
// separated names of internal/render/testdata/<name>.in.yaml), with no
// expectation about what the API server refuses: to look for divergences
// in goldens that are not (yet) in the passing set.
var parityGoldens = flag.String("parity.goldens", "", "goldens TestStatusParity runs instead of its passing set (comma separated)")

// goldenControllerName is the controllerName of the goldens' GatewayClasses.
const goldenControllerName = "gateway.nginx.org/nginx-gateway-controller"

// parityCase is a golden input of internal/render whose statuses the
// manager and `gatewall render` must agree on.
type parityCase struct {
	name string
	// refused are the objects ("Kind namespace/name", as in the golden) the
	// API server refuses: the goldens hold objects that bypassed its schema
	// and CEL rules on purpose, to show Gatewall re-checks them. They are
	// left out on both sides.
	refused []string
	// fixup, when set, changes the golden's objects (before anything
	// else, on both sides) so that the API server stores one it would
	// refuse and the golden is about more than that object.
	fixup func(t *testing.T, u *unstructured.Unstructured)
	// builtIn says fixup is about built-in kinds (a Service's cluster IP),
	// which the API server checks whatever the CRDs say: the bypassed
	// variant needs it too.
	builtIn bool
	// unreadable says the golden holds objects that do not decode into
	// their Go types on purpose: render refuses them (with warnings), the
	// manager reads them as stubs.
	unreadable bool
}

// parityCases are the goldens on which the manager and render agree.
// Left out (run them with -args -parity.goldens=<name>,...), and run by
// TestStatusParityBypassed instead: cors, injection and rechecked-rules,
// whose point is objects the API server refuses (their Gateways or
// routes), leaving little to compare. unreadable-objects is run by
// neither: its objects do not decode into their Go types.
//
// The goldens with a bundles directory (WAF) run with the directory's
// bundles in the manager's PLM storage (storeBundles).
//
// worker-connections and unresolved-listener (a route with parents on two
// Gateways) found that the manager ordered a route's parent statuses by
// which Gateway wrote last, and rewrote them when that changed; both sides
// now use status.OrderRouteParents.
var parityCases = []parityCase{
	{name: "basic"},
	{name: "worker-connections"},
	{name: "unresolved-listener"},
	{name: "backend-tls-ancestors"},
	{name: "clientsettings", refused: []string{
		"ClientSettingsPolicy default/header-ms",
		"ClientSettingsPolicy default/header-without-server",
		"ClientSettingsPolicy default/service-target",
	}},
	{name: "hostnames"},
	// The API server refuses the Gateway (http-a and http-b have the same
	// port, protocol and hostname) and team-a-route (two parentRefs name
	// the Gateway, one without sectionName): http-b gets a hostname of its
	// own, and the route's parentRef by port 80 the sectionName http-a.
	{name: "listeners", fixup: func(t *testing.T, u *unstructured.Unstructured) {
		switch id(u) {
		case "Gateway default/gw":
			editListener(t, u, "http-b", func(l map[string]any) { l["hostname"] = "other.example.com" })
		case "HTTPRoute team-a/team-a-route":
			refs, _, _ := unstructured.NestedSlice(u.Object, "spec", "parentRefs")
			for _, r := range refs {
				if r := r.(map[string]any); r["sectionName"] == nil {
					r["sectionName"] = "http-a"
				}
			}
			if err := unstructured.SetNestedSlice(u.Object, refs, "spec", "parentRefs"); err != nil {
				t.Fatal(err)
			}
		}
	}},
	{name: "proxysettings-attachment"},
	{name: "proxysettings-conflicts"},
	{name: "proxysettings-multitarget"},
	{name: "ratelimit", refused: []string{
		"RateLimitPolicy default/bad-key",
		"RateLimitPolicy default/zero-rate",
	}},
	{name: "upstreamsettings", refused: []string{
		"UpstreamSettingsPolicy default/bypassed",
		"UpstreamSettingsPolicy default/not-a-service",
	}, fixup: func(t *testing.T, u *unstructured.Unstructured) {
		allocatedClusterIPs(t, u)
		if id(u) == "Service default/zoned" {
			// The API server refuses its clusterIP (an injection), and one
			// it allocates would serve useClusterIP: headless, it is
			// refused by both sides alike.
			if err := unstructured.SetNestedField(u.Object, "None", "spec", "clusterIP"); err != nil {
				t.Fatal(err)
			}
		}
	}, builtIn: true},
	{name: "upstreamsettings-tlsroute", fixup: allocatedClusterIPs, builtIn: true},
	{name: "clientsettings-http2"},
	{name: "budgets"},
	{name: "weighted"},
	// More goldens the API server stores as written, or nearly.
	{name: "backend-tls"},
	{name: "backend-tls-invalid-refs", refused: []string{"BackendTLSPolicy default/bad-kind"}},
	{name: "backendrefs"},
	{name: "certificates"},
	{name: "client-validation"},
	{name: "endpoints", refused: []string{"EndpointSlice default/mixed-1", "EndpointSlice default/mixed-2"}},
	{name: "filters"},
	{name: "grpc"},
	{name: "https"},
	{name: "invalid-class-parameters"},
	{name: "limits", refused: []string{"GRPCRoute default/long-service"}},
	{name: "listenersets"},
	{name: "matching"},
	{name: "metrics"},
	{name: "nginxproxy-overlay-conflict"},
	{name: "parameters"},
	{name: "gateway-overrides"},
	{name: "proxysettings-disable"},
	{name: "proxysettings-grpc"},
	{name: "proxysettings-h2c"},
	{name: "proxysettings-invalid", refused: []string{"ProxySettingsPolicy default/bypassed", "ProxySettingsPolicy default/huge-sizes"}},
	{name: "redos"},
	// The API server refuses the Gateway for its listeners that are
	// refused on purpose (TLS without tls, Terminate without a
	// certificate): they are left out.
	{name: "tls-passthrough", refused: []string{"TLSRoute default/no-hostnames", "TLSRoute default/two-rules"},
		fixup: func(t *testing.T, u *unstructured.Unstructured) {
			if id(u) == "Gateway default/gw" {
				removeListeners(t, u, "no-tls", "terminate-no-cert")
			}
		}},
	{name: "waf-targets", refused: []string{"WAFGatewayBindingPolicy default/mixed"}},
	{name: "waf"},
	{name: "waf-statuses"},
	{name: "waf-fallbacks"},
	{name: "waf-held"},
	{name: "waf-bad-bundle-refs", refused: []string{"WAFGatewayBindingPolicy default/bad-sha", "WAFGatewayBindingPolicy default/keeps-old"}},
	{name: "policies-tls-listeners"},
	{name: "policy-unattached-targets"},
	// AuthenticationFilters, their Secrets and the rules naming them; the
	// filters' statuses are written by their own reconciler. (The
	// externalauth golden needs the experimental channel's HTTPRoute,
	// which envtest does not install.)
	{name: "authentication"},
	{name: "tls-options"},
	// The snippets scenario on an installation without --snippets, as
	// this test's manager runs (the snippets golden, with --snippets,
	// is compared by no manager here: TestSnippetsFollowTheFlag runs
	// one with the flag).
	{name: "snippets-disabled"},
	// JWT filters: a Secret's key set (its weak keys named), remote sets,
	// the invalid ones.
	{name: "jwt"},
}

// allocatedClusterIPs leaves a Service's cluster IP to the API server,
// which allocates them from its own range (the golden's appear only in
// the rendered configuration), unless it is headless.
func allocatedClusterIPs(_ *testing.T, u *unstructured.Unstructured) {
	if ip, _, _ := unstructured.NestedString(u.Object, "spec", "clusterIP"); u.GetKind() == "Service" && ip != "None" {
		unstructured.RemoveNestedField(u.Object, "spec", "clusterIP")
	}
}

// id is an object's "Kind namespace/name" ("Kind name" when cluster
// scoped), its namespace defaulting to "default" as render reads it.
func id(u *unstructured.Unstructured) string {
	switch u.GetKind() {
	case "GatewayClass", "Namespace":
		return u.GetKind() + " " + u.GetName()
	}
	ns := u.GetNamespace()
	if ns == "" {
		ns = "default"
	}
	return u.GetKind() + " " + ns + "/" + u.GetName()
}

// editListener changes a Gateway's listener.
func editListener(t *testing.T, gw *unstructured.Unstructured, name string, edit func(map[string]any)) {
	t.Helper()
	ls, _, _ := unstructured.NestedSlice(gw.Object, "spec", "listeners")
	found := false
	for _, l := range ls {
		if l := l.(map[string]any); l["name"] == name {
			edit(l)
			found = true
		}
	}
	if !found {
		t.Fatalf("%s has no listener %s", id(gw), name)
	}
	if err := unstructured.SetNestedSlice(gw.Object, ls, "spec", "listeners"); err != nil {
		t.Fatal(err)
	}
}

// removeListeners removes a Gateway's listeners.
func removeListeners(t *testing.T, gw *unstructured.Unstructured, names ...string) {
	t.Helper()
	ls, _, _ := unstructured.NestedSlice(gw.Object, "spec", "listeners")
	kept := slices.DeleteFunc(slices.Clone(ls), func(l any) bool { return slices.Contains(names, l.(map[string]any)["name"].(string)) })
	if len(kept) != len(ls)-len(names) {
		t.Fatalf("%s does not have the listeners %q", id(gw), names)
	}
	if err := unstructured.SetNestedSlice(gw.Object, kept, "spec", "listeners"); err != nil {
		t.Fatal(err)
	}
}

// TestStatusParity proves that the manager's reconcilers and the offline
// renderer (`gatewall render`, the golden tests' engine) set the same
// statuses. For each golden input it moves the objects into fresh
// namespaces (and the GatewayClass to a fresh name), leaves out the
// objects the API server refuses, creates the rest in the order of their
// golden creationTimestamps, and renders the same objects, as the API
// server stores them, with render.Decode and render.Render. Every status
// render sets must then be the manager's, and every object render sets no
// status on must have none from the manager.
//
// Both sides see the test's names, so statuses are compared as they are
// (names are mapped back only to check that render reports on the objects
// the golden output does). Render is given the API server's creation
// times, so both sides decide conflicts on the same times; render with the
// golden's times must agree (the creation order keeps their semantics).
// Render of the objects as written (without the schema's defaults) must
// agree too.
//
// Two things only are normalised (normaliseStatus): lastTransitionTime,
// which is the time of writing on one side and render's fixed time on the
// other; and the message of a Programmed condition that is Pending because
// no data plane applied the configuration (render says it rendered
// offline, this manager's HeldFiles that no data plane is connected): the
// status and the reason are still compared.
func TestStatusParity(t *testing.T) {
	cases := parityCases
	if *parityGoldens != "" {
		cases = nil
		for _, name := range strings.Split(*parityGoldens, ",") {
			cases = append(cases, parityCase{name: strings.TrimSpace(name), refused: nil})
		}
	}
	explore := *parityGoldens != ""
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			runParity(t, c, explore)
		})
	}
}

// parityObject is one object of a golden, rewritten into the test's namespaces.
type parityObject struct {
	// id is "Kind namespace/name" (or "Kind name") in the golden's names.
	id string
	// written is the object as the golden has it, namespaces and class
	// names rewritten, without its creationTimestamp.
	written *unstructured.Unstructured
	// goldenTime is the golden's creationTimestamp (zero when it has none,
	// as render then reads it).
	goldenTime metav1.Time
	// stored is the object as the API server stored it (nil until created).
	stored *unstructured.Unstructured
	// created is its status once created, before Gatewall wrote any: the
	// schema's defaults (a Gateway's "Waiting for controller"), or the
	// golden's status (an APPolicy's, which PLM writes).
	created any
	// extra marks a Namespace the golden uses but has no object for: the
	// API server needs it, render is not given it (as in the golden).
	extra bool
}

func runParity(t *testing.T, c parityCase, explore bool) {
	ctx := context.Background()
	dir := filepath.Join(testenv.RepoRoot(), "internal", "render", "testdata")
	in := filepath.Join(dir, c.name+".in.yaml")
	bundles := filepath.Join(dir, c.name+".bundles")
	if _, err := os.Stat(bundles); err != nil {
		bundles = ""
	}
	golden, err := manifest.ReadFiles(in)
	if err != nil {
		t.Fatal(err)
	}
	if c.fixup != nil {
		for _, u := range golden {
			c.fixup(t, u)
		}
	}
	if bundles != "" {
		// The manager fetches the bundles render reads from the bundles
		// directory from PLM storage, at the locations the statuses name
		// (under a folder of the golden's: goldens name the same locations).
		for _, u := range golden {
			u.Object = prefixLocations(u.Object, c.name).(map[string]any)
		}
		storeBundles(t, golden, bundles)
	}
	// The golden must decode cleanly, as the golden test requires.
	if _, warnings := renderObjects(t, golden, bundles); warnings != "" && !c.unreadable && !explore {
		t.Fatalf("%s has objects the renderer skips or refuses:\n%s", in, warnings)
	}

	names := newParityNames(t, c.name, golden)
	objs, namespaces := names.rewrite(t, golden)
	names.createNamespaces(t, namespaces)
	t.Cleanup(func() { names.cleanup(t, objs) })

	// What the API server refuses is left out on both sides.
	var refused []string
	var kept []*parityObject
	for _, o := range objs {
		err := env.Client.Create(ctx, o.written.DeepCopy(), client.DryRunAll)
		switch {
		case apierrors.IsInvalid(err) || apierrors.IsBadRequest(err):
			refused = append(refused, o.id)
			t.Logf("the API server refuses %s: %v", o.id, err)
		case err != nil:
			t.Fatalf("creating %s (dry run): %v", o.id, err)
		default:
			kept = append(kept, o)
		}
	}
	sort.Strings(refused)
	if !explore && !slices.Equal(refused, c.refused) {
		t.Fatalf("the API server refuses %q, want %q", refused, c.refused)
	}
	if len(kept) == 0 {
		t.Fatal("the API server refuses every object")
	}

	createInGoldenOrder(t, kept)

	// Render the objects the API server holds, read as render reads
	// manifests (YAML, decoded with render.Decode), then the objects as
	// written with their golden and their live creation times.
	stored := make([]*unstructured.Unstructured, 0, len(kept)+len(namespaces))
	writtenLive := make([]*unstructured.Unstructured, 0, len(kept)+len(namespaces))
	writtenGolden := make([]*unstructured.Unstructured, 0, len(kept)+len(namespaces))
	for _, ns := range namespaces {
		if !ns.extra {
			stored = append(stored, ns.stored)
			writtenLive = append(writtenLive, ns.written)
			writtenGolden = append(writtenGolden, ns.written)
		}
	}
	for _, o := range kept {
		stored = append(stored, o.stored)
		live, gold := o.written.DeepCopy(), o.written.DeepCopy()
		live.SetCreationTimestamp(o.stored.GetCreationTimestamp())
		gold.SetCreationTimestamp(o.goldenTime)
		for _, u := range []*unstructured.Unstructured{live, gold} {
			u.SetGeneration(o.stored.GetGeneration())
		}
		writtenLive = append(writtenLive, live)
		writtenGolden = append(writtenGolden, gold)
	}
	want, warnings := renderObjects(t, stored, bundles)
	if warnings != "" && !c.unreadable && !explore {
		t.Fatalf("render refuses objects the API server stored:\n%s", warnings)
	}
	if len(want) == 0 {
		t.Fatal("render set no status: nothing to compare")
	}

	// The statuses render sets are on the objects the golden has statuses
	// for, less the refused ones: the comparison covers the golden.
	goldenIDs := goldenStatusIDs(t, filepath.Join(dir, c.name+".out.yaml"))
	var wantIDs []string
	for id := range want {
		wantIDs = append(wantIDs, names.back(id))
	}
	sort.Strings(wantIDs)
	goldenIDs = slices.DeleteFunc(goldenIDs, func(id string) bool { return slices.Contains(refused, id) })
	if !slices.Equal(wantIDs, goldenIDs) {
		t.Errorf("render sets statuses on %q, the golden (less what the API server refuses) on %q", wantIDs, goldenIDs)
	}

	// Test artefacts, told apart from divergences: the creation order must
	// give the golden's conflict winners (render with the golden times
	// agrees with render with the live ones), and what the API server
	// defaults must not change a status render sets (render of the objects
	// as written agrees with render of the objects as stored).
	goldenOrder, _ := renderObjects(t, writtenGolden, bundles)
	liveOrder, _ := renderObjects(t, writtenLive, bundles)
	if d := diffStatusSets(liveOrder, goldenOrder); len(d) > 0 {
		t.Errorf("the objects were not created in an order that keeps the golden's creationTimestamp semantics:\n%s",
			strings.Join(formatDiffs(d, "render with live creation times", "render with golden creation times"), "\n"))
	}
	if d := diffStatusSets(want, liveOrder); len(d) > 0 {
		t.Errorf("render gives other statuses for the objects as written than for the objects as the API server stores them:\n%s",
			strings.Join(formatDiffs(d, "render of the stored objects", "render of the objects as written"), "\n"))
	}

	// Every object of a kind Gatewall sets a status on that render sets
	// none on must have none from the manager either: its status is still
	// the one it was created with.
	var noStatus []*parityObject
	for _, o := range kept {
		if _, ok := want[liveID(o.stored)]; !ok && statusKinds[o.stored.GetKind()] {
			noStatus = append(noStatus, o)
		}
	}

	compare := func() error {
		var diffs []string
		for id, st := range want {
			live, err := liveStatus(id, st.gvk)
			if err != nil {
				return err
			}
			diffs = append(diffs, diffStatus(id, normaliseStatus(live), normaliseStatus(st.status), "manager", "render")...)
		}
		for _, o := range noStatus {
			id := liveID(o.stored)
			live, err := liveStatus(id, o.stored.GroupVersionKind())
			if err != nil {
				return err
			}
			if !reflect.DeepEqual(live, o.created) && !emptyStatus(live) {
				diffs = append(diffs, fmt.Sprintf("%s: render sets no status, the manager sets %s", id, toJSON(live)))
			}
		}
		if len(diffs) > 0 {
			sort.Strings(diffs)
			return fmt.Errorf("the manager's statuses differ from render's:\n%s", strings.Join(diffs, "\n"))
		}
		return nil
	}
	eventually(t, 45*time.Second, compare)
	// And they stay so: the manager is done, not passing through.
	time.Sleep(2 * time.Second)
	if err := compare(); err != nil {
		t.Errorf("after they agreed: %v", err)
	}
	t.Logf("%d statuses agree (%d objects with none on either side); refused: %q", len(want), len(noStatus), refused)
}

// statusKinds are the kinds Gatewall sets statuses on that render reports
// too (not NginxProxy: render does not report its status).
var statusKinds = func() map[string]bool {
	m := map[string]bool{
		"GatewayClass": true, "Gateway": true, "ListenerSet": true, "NginxProxy": true, "HTTPRoute": true, "GRPCRoute": true, "TLSRoute": true,
	}
	for _, k := range policy.Kinds {
		m[k.Name()] = true
	}
	for _, k := range graph.ExtensionFilterKinds {
		m[k.Kind] = true
	}
	return m
}()
