package envtest

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/gatewall/gatewall/internal/helm"
	"github.com/gatewall/gatewall/internal/manager"
	"github.com/gatewall/gatewall/internal/manifest"
	"github.com/gatewall/gatewall/test/testenv"
)

// chartInstallation is one Gatewall installation made both ways: a
// kustomization and the chart's release with its values.
type chartInstallation struct {
	name               string
	release, namespace string
	values             map[string]any
	kustomize          func(t *testing.T) []*unstructured.Unstructured
	// class and controller are the GatewayClass the chart makes and the
	// controllerName it names.
	class, controller string
}

// chartInstallations: config/default beside the chart with its defaults,
// and README's overlay for a second installation beside the chart with the
// values that make the same one.
var chartInstallations = []chartInstallation{
	{
		name: "config/default", release: "gatewall", namespace: "gatewall-system",
		kustomize: func(t *testing.T) []*unstructured.Unstructured {
			objs, err := manifest.Kustomize(filepath.Join(testenv.RepoRoot(), "config", "default"))
			if err != nil {
				t.Fatal(err)
			}
			return objs
		},
		class: "nginx", controller: manager.DefaultControllerName,
	},
	{
		name: "README's second installation", release: "second", namespace: "gatewall-second",
		values: map[string]any{
			"fullnameOverride": "second-gatewall",
			"nginxGateway":     map[string]any{"gatewayClassName": "second", "gatewayControllerName": "example.com/gatewall-second"},
		},
		kustomize: readmeOverlay,
		class:     "second", controller: "example.com/gatewall-second",
	},
}

// TestChartMatchesKustomize: charts/gatewall installs what config/default
// (`make deploy`) installs, and the chart with a second installation's
// values what README's overlay for it does: the same objects, field for
// field, but for what Helm itself adds or handles its own way (normalise
// lists each difference and why) and the GatewayClass and NginxProxy the
// chart makes. The API server takes every object the chart renders.
func TestChartMatchesKustomize(t *testing.T) {
	for _, inst := range chartInstallations {
		t.Run(inst.name, func(t *testing.T) {
			rendered := renderChart(t, inst.release, inst.namespace, inst.values)
			chart := checkChartGatewayClass(t, rendered, inst)
			kust := inst.kustomize(t)
			for _, ns := range kust {
				if ns.GetKind() == "Namespace" && ns.GetName() != inst.namespace {
					t.Errorf("kustomize makes the namespace %s, the release is in %s", ns.GetName(), inst.namespace)
				}
			}
			compareInstallations(t, normalise(kust, "kustomize"), normalise(chart, "chart"))
			dryRunChart(t, inst.namespace, rendered)
		})
	}
}

// renderChart is `helm template --include-crds` of charts/gatewall.
func renderChart(t *testing.T, release, namespace string, values map[string]any) []*unstructured.Unstructured {
	t.Helper()
	root := testenv.RepoRoot()
	h := helm.Helm{Path: filepath.Join(root, helm.Binary), Home: t.TempDir()}
	objs, err := h.Template(context.Background(), helm.Release{Name: release, Namespace: namespace,
		Chart: filepath.Join(root, "charts", "gatewall"), Values: values})
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// readmeOverlay builds the kustomization README's "Another installation
// beside it" shows, with its base pointing at this checkout's config/default.
func readmeOverlay(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	root := testenv.RepoRoot()
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "### Another installation beside it")
	m := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindStringSubmatch(section)
	if !ok || m == nil {
		t.Fatal("README has no kustomization under \"### Another installation beside it\"")
	}
	dir := t.TempDir()
	base, err := filepath.Rel(dir, filepath.Join(root, "config", "default"))
	if err != nil {
		t.Fatal(err)
	}
	kustomization := strings.Replace(m[1], "- ../default ", "- "+base+" ", 1)
	if kustomization == m[1] {
		t.Fatal("README's overlay has no resource ../default")
	}
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(kustomization), 0o644); err != nil {
		t.Fatal(err)
	}
	objs, err := manifest.Kustomize(dir)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// checkChartGatewayClass checks the GatewayClass and NginxProxy the chart
// makes (config/default makes neither) and returns the other objects.
func checkChartGatewayClass(t *testing.T, objs []*unstructured.Unstructured, inst chartInstallation) []*unstructured.Unstructured {
	t.Helper()
	var rest []*unstructured.Unstructured
	var class, proxy *unstructured.Unstructured
	for _, o := range objs {
		switch o.GetKind() {
		case "GatewayClass":
			class = o
		case "NginxProxy":
			proxy = o
		default:
			rest = append(rest, o)
		}
	}
	if class == nil || proxy == nil {
		t.Fatalf("the chart makes GatewayClass %v and NginxProxy %v, want both", class != nil, proxy != nil)
	}
	if class.GetName() != inst.class {
		t.Errorf("GatewayClass %s, want %s", class.GetName(), inst.class)
	}
	want := map[string]any{
		"controllerName": inst.controller,
		"parametersRef": map[string]any{"group": "gateway.nginx.org", "kind": "NginxProxy",
			"name": proxy.GetName(), "namespace": inst.namespace},
	}
	if spec := class.Object["spec"]; !reflect.DeepEqual(canonical(spec), canonical(want)) {
		t.Errorf("GatewayClass spec %v, want %v", spec, want)
	}
	if proxy.GetNamespace() != inst.namespace {
		t.Errorf("NginxProxy in %q, want the release's namespace %s", proxy.GetNamespace(), inst.namespace)
	}
	return rest
}

// Labels Helm's charts put on their objects, which a kustomization does
// not: the chart and its version, and the tool that manages the release.
var helmLabels = map[string]string{"helm.sh/chart": "", "app.kubernetes.io/managed-by": "Helm"}

// normalise makes an installation's objects comparable, each as JSON
// decodes it. What it takes away, and why:
//   - Helm's labels (helmLabels) on the chart's objects: Helm's convention,
//     which config/default has no reason to copy;
//   - the Namespace config/default makes: Helm installs into a namespace
//     that `helm install --create-namespace` makes (a chart that made its
//     release's namespace too would fail on it);
//   - config/default's labels on its CRDs (part-of, instance): the chart's
//     crds/ are `make manifests`' files as generated, which Helm installs
//     untemplated (and which installations share, so that no instance label
//     is true of them);
//   - the Helm annotations of the dataplane-placement ConfigMap (a hook
//     the chart renders only while the ConfigMap is missing, kept on
//     uninstall): the platform team writes it, and Helm must not take it
//     back (TestChartUpgradeKeepsPlacement); kubectl apply -k leaves
//     others' keys alone without them;
//   - the manager's arguments, compared apart (sameManagerFlags): as the
//     manager parses them, so that a flag an overlay adds after
//     config/manager's replaces it, as it does in the manager.
func normalise(objs []*unstructured.Unstructured, from string) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, o := range objs {
		obj := canonical(o.Object).(map[string]any)
		u := &unstructured.Unstructured{Object: obj}
		switch {
		case u.GetKind() == "Namespace" && from == "kustomize":
			continue
		case u.GetKind() == "CustomResourceDefinition" && from == "kustomize":
			dropLabels(u, map[string]string{"app.kubernetes.io/part-of": "", "app.kubernetes.io/instance": ""})
		case from == "chart":
			dropLabels(u, helmLabels)
			if u.GetKind() == "ConfigMap" && strings.HasSuffix(u.GetName(), "-dataplane-placement") {
				dropAnnotations(u, placementHook)
			}
		}
		out[objectKey(u)] = obj
	}
	return out
}

// placementHook is what makes the chart's dataplane-placement ConfigMap
// the platform team's: a hook, no part of the release, kept on uninstall.
var placementHook = map[string]string{"helm.sh/hook": "pre-install,pre-upgrade", "helm.sh/resource-policy": "keep"}

// dropAnnotations removes the annotations named, with those values.
func dropAnnotations(u *unstructured.Unstructured, drop map[string]string) {
	annotations := u.GetAnnotations()
	for k, v := range drop {
		if annotations[k] == v {
			delete(annotations, k)
		}
	}
	if len(annotations) == 0 {
		unstructured.RemoveNestedField(u.Object, "metadata", "annotations")
		return
	}
	u.SetAnnotations(annotations)
}

// dropLabels removes the labels named (with that value, when one is given).
func dropLabels(u *unstructured.Unstructured, drop map[string]string) {
	labels := u.GetLabels()
	for k, v := range drop {
		if got, ok := labels[k]; ok && (v == "" || got == v) {
			delete(labels, k)
		}
	}
	if len(labels) == 0 {
		unstructured.RemoveNestedField(u.Object, "metadata", "labels")
		return
	}
	u.SetLabels(labels)
}

func objectKey(u *unstructured.Unstructured) string {
	return fmt.Sprintf("%s %s %s/%s", u.GetAPIVersion(), u.GetKind(), u.GetNamespace(), u.GetName())
}

// canonical is v as JSON decodes it (numbers float64, no typed maps), so
// that kustomize's and helm's decodings compare.
func canonical(v any) any {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		panic(err)
	}
	return out
}

// compareInstallations fails for every object only one side has, and every
// field where both have an object and they differ.
func compareInstallations(t *testing.T, kust, chart map[string]map[string]any) {
	t.Helper()
	keys := map[string]bool{}
	for k := range kust {
		keys[k] = true
	}
	for k := range chart {
		keys[k] = true
	}
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		ko, co := kust[k], chart[k]
		switch {
		case ko == nil:
			t.Errorf("%s: only the chart makes it", k)
			continue
		case co == nil:
			t.Errorf("%s: only kustomize makes it", k)
			continue
		}
		if ko["kind"] == "Deployment" {
			sameManagerFlags(t, k, managerArgs(t, ko), managerArgs(t, co))
		}
		for _, d := range differences(ko, co, "") {
			t.Errorf("%s: %s", k, d)
		}
	}
}

// managerArgs takes the manager container's arguments out of a Deployment.
func managerArgs(t *testing.T, d map[string]any) []string {
	t.Helper()
	u := &unstructured.Unstructured{Object: d}
	containers, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
	for i, c := range containers {
		c := c.(map[string]any)
		if c["name"] != "manager" {
			continue
		}
		var args []string
		for _, a := range c["args"].([]any) {
			args = append(args, a.(string))
		}
		delete(c, "args")
		containers[i] = c
		if err := unstructured.SetNestedSlice(u.Object, containers, "spec", "template", "spec", "containers"); err != nil {
			t.Fatal(err)
		}
		return args
	}
	t.Fatalf("%s has no container manager", u.GetName())
	return nil
}

// parsedFlags is what the manager makes of its arguments: its Options and
// the text of every flag's value (cmd/manager.go's flags: the manager's,
// the client's rate limits and the logger's).
type parsedFlags struct {
	opts   manager.Options
	values map[string]string
}

func parseManagerFlags(args []string) (parsedFlags, error) {
	fs := flag.NewFlagSet("gatewall", flag.ContinueOnError)
	fs.SetOutput(&strings.Builder{})
	p := parsedFlags{values: map[string]string{}}
	manager.BindFlags(fs, &p.opts)
	fs.Float64("kube-api-qps", 50, "")
	fs.Int("kube-api-burst", 100, "")
	(&zap.Options{}).BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		return p, err
	}
	if fs.NArg() > 0 {
		return p, fmt.Errorf("unexpected arguments %v", fs.Args())
	}
	fs.VisitAll(func(f *flag.Flag) { p.values[f.Name] = f.Value.String() })
	return p, nil
}

// sameManagerFlags fails when two argument lists make the manager run
// differently.
func sameManagerFlags(t *testing.T, what string, kust, chart []string) {
	t.Helper()
	k, err := parseManagerFlags(kust)
	if err != nil {
		t.Fatalf("%s: kustomize's manager arguments %q: %v", what, kust, err)
	}
	c, err := parseManagerFlags(chart)
	if err != nil {
		t.Fatalf("%s: the chart's manager arguments %q: %v", what, chart, err)
	}
	differ := false
	for _, name := range slices.Sorted(maps.Keys(k.values)) {
		if v := k.values[name]; c.values[name] != v {
			differ = true
			t.Errorf("%s: manager flag --%s is %q from kustomize, %q from the chart", what, name, v, c.values[name])
		}
	}
	// Flags whose value has no text (repeated and quantity flags) show
	// only in the options they make.
	if !differ && !reflect.DeepEqual(k.opts, c.opts) {
		t.Errorf("%s: the manager's options differ: kustomize's arguments %q make %+v, the chart's %q make %+v", what, kust, k.opts, chart, c.opts)
	}
}

// differences lists the paths where a and b differ, with both values.
func differences(a, b any, path string) []string {
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok {
			break
		}
		keys := map[string]bool{}
		for k := range av {
			keys[k] = true
		}
		for k := range bv {
			keys[k] = true
		}
		var out []string
		for _, k := range slices.Sorted(maps.Keys(keys)) {
			out = append(out, differences(av[k], bv[k], path+"."+k)...)
		}
		return out
	case []any:
		bv, ok := b.([]any)
		if !ok || len(av) != len(bv) {
			break
		}
		var out []string
		for i := range av {
			out = append(out, differences(av[i], bv[i], fmt.Sprintf("%s[%d]", path, i))...)
		}
		return out
	}
	if reflect.DeepEqual(a, b) {
		return nil
	}
	return []string{fmt.Sprintf("%s: kustomize %s, chart %s", strings.TrimPrefix(path, "."), show(a), show(b))}
}

func show(v any) string {
	if v == nil {
		return "(none)"
	}
	data, _ := json.Marshal(v)
	return string(data)
}

// dryRunChart applies a rendering of the chart to the API server with
// server-side dry-run, its namespace for real.
func dryRunChart(t *testing.T, namespace string, objs []*unstructured.Unstructured) {
	t.Helper()
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}
	if err := env.Client.Create(ctx, ns); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
	if err := manifest.Apply(ctx, env.Client, "gatewall-test", objs, client.DryRunAll); err != nil {
		t.Fatal(err)
	}
}

// TestChartValues: each of the chart's values reaches the flag, field or
// object it documents, and the API server takes what it renders.
func TestChartValues(t *testing.T) {
	for _, tc := range []struct {
		name   string
		values map[string]any
		check  func(t *testing.T, r chartRendering)
	}{{
		name:   "leader election",
		values: gw(map[string]any{"replicas": 2, "leaderElection": map[string]any{"enable": false, "lockName": "my-lease"}}),
		check: func(t *testing.T, r chartRendering) {
			if r.flags.opts.LeaderElection || r.flags.opts.LeaderElectionID != "my-lease" {
				t.Errorf("leader election %v, Lease %q", r.flags.opts.LeaderElection, r.flags.opts.LeaderElectionID)
			}
			if n, _, _ := unstructured.NestedInt64(r.object(t, "Deployment", "gatewall-controller-manager").Object, "spec", "replicas"); n != 2 {
				t.Errorf("%d replicas, want 2", n)
			}
		},
	}, {
		name:   "metrics off",
		values: gw(map[string]any{"metrics": map[string]any{"enable": false}}),
		check: func(t *testing.T, r chartRendering) {
			if r.flags.opts.MetricsAddr != "0" {
				t.Errorf("--metrics-bind-address %q, want 0", r.flags.opts.MetricsAddr)
			}
			for _, o := range r.objs {
				if strings.Contains(o.GetName(), "metrics") {
					t.Errorf("%s %s without metrics", o.GetKind(), o.GetName())
				}
			}
		},
	}, {
		name:   "metrics over HTTP on another port",
		values: gw(map[string]any{"metrics": map[string]any{"secure": false, "port": 9090}}),
		check: func(t *testing.T, r chartRendering) {
			if !r.flags.opts.MetricsInsecure || r.flags.opts.MetricsAddr != ":9090" {
				t.Errorf("metrics at %q, insecure %v", r.flags.opts.MetricsAddr, r.flags.opts.MetricsInsecure)
			}
			ports, _, _ := unstructured.NestedSlice(r.object(t, "Service", "gatewall-metrics").Object, "spec", "ports")
			if want := []any{map[string]any{"name": "http", "port": int64(9090), "targetPort": "metrics"}}; !reflect.DeepEqual(ports, want) {
				t.Errorf("metrics Service ports %v, want %v", ports, want)
			}
		},
	}, {
		name: "agent server",
		values: gw(map[string]any{"agent": map[string]any{"port": 9443, "serverAddress": "agents.example.com:443",
			"tlsSecretName": "my-agent-tls", "podAddressCheck": false, "reloadMonitoringPeriod": "5s"}}),
		check: func(t *testing.T, r chartRendering) {
			a := r.flags.opts.Agent
			if a.ListenAddress != ":9443" || a.ServerAddress != "agents.example.com:443" || a.TLSSecret != "my-agent-tls" ||
				!a.AnyPeerAddress || a.ReloadMonitoringPeriod != 5*time.Second {
				t.Errorf("agent options %+v", a)
			}
			d := r.object(t, "Deployment", "gatewall-controller-manager")
			if got := volumeSecret(t, d, "agent-tls"); got != "my-agent-tls" {
				t.Errorf("the agent-tls volume mounts %q, want my-agent-tls", got)
			}
		},
	}, {
		name: "data-plane images and pull secrets",
		values: map[string]any{"nginx": map[string]any{
			"image":            map[string]any{"repository": "registry.example.com/dataplane", "tag": "v1"},
			"wafImage":         map[string]any{"repository": "registry.example.com/dataplane-waf", "tag": "v1"},
			"imagePullSecrets": []any{"regcred"}, "imagePullSecret": "other/regcred",
		}},
		check: func(t *testing.T, r chartRendering) {
			a := r.flags.opts.Agent
			if a.Images.NGINX != "registry.example.com/dataplane:v1" || a.Images.NGINXWAF != "registry.example.com/dataplane-waf:v1" {
				t.Errorf("data-plane images %+v", a.Images)
			}
			if want := []string{"regcred", "other/regcred"}; !slices.Equal(a.PullSecrets, want) {
				t.Errorf("--nginx-docker-secret %q, want %q", a.PullSecrets, want)
			}
		},
	}, {
		name: "PLM storage",
		values: gw(map[string]any{
			"plmStorage": map[string]any{"url": "https://plm.example.com:8333", "bucket": "bundles", "prefix": "waf/",
				"credentialsSecretName": "plm/creds", "tls": map[string]any{"caSecretName": "plm-ca",
					"clientSSLSecretName": "plm-client", "insecureSkipVerify": true}},
			"plm": map[string]any{"apiGroup": "waf.f5.com", "cacheMaxSize": "1Gi"},
		}),
		check: func(t *testing.T, r chartRendering) {
			p := r.flags.opts.PLM
			if p.StorageURL != "https://plm.example.com:8333" || p.Bucket != "bundles" || p.Prefix != "waf/" ||
				p.CredentialsSecret != "plm/creds" || p.CASecret != "plm-ca" || p.ClientSSLSecret != "plm-client" ||
				!p.SkipVerify || p.APIGroup != "waf.f5.com" || p.CacheMaxSize != 1<<30 {
				t.Errorf("PLM options %+v", p)
			}
			d := r.object(t, "Deployment", "gatewall-controller-manager")
			volumes, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "volumes")
			if limit := volumes[0].(map[string]any)["emptyDir"]; !reflect.DeepEqual(limit, map[string]any{"sizeLimit": "1Gi"}) {
				t.Errorf("plm-cache volume %v, want an emptyDir of 1Gi", limit)
			}
		},
	}, {
		name: "the manager's image, pull secrets and more flags",
		values: gw(map[string]any{
			"image":          map[string]any{"repository": "registry.example.com/gatewall", "tag": "v2", "pullPolicy": "IfNotPresent"},
			"serviceAccount": map[string]any{"imagePullSecrets": []any{"a"}, "imagePullSecret": "b"},
			"extraArgs":      []any{"--kube-api-qps=10", "--gatewayclass=overridden"},
		}),
		check: func(t *testing.T, r chartRendering) {
			if r.flags.values["kube-api-qps"] != "10" || r.flags.opts.GatewayClassName != "overridden" {
				t.Errorf("extraArgs: qps %s, class %q", r.flags.values["kube-api-qps"], r.flags.opts.GatewayClassName)
			}
			c := r.container(t)
			if c["image"] != "registry.example.com/gatewall:v2" || c["imagePullPolicy"] != "IfNotPresent" {
				t.Errorf("manager image %v (%v)", c["image"], c["imagePullPolicy"])
			}
			secrets, _, _ := unstructured.NestedSlice(r.object(t, "ServiceAccount", "gatewall-controller-manager").Object, "imagePullSecrets")
			if want := []any{map[string]any{"name": "a"}, map[string]any{"name": "b"}}; !reflect.DeepEqual(secrets, want) {
				t.Errorf("ServiceAccount imagePullSecrets %v, want %v", secrets, want)
			}
		},
	}, {
		name: "the class's NginxProxy",
		values: map[string]any{"nginx": map[string]any{"config": map[string]any{"workerConnections": 2048,
			"kubernetes": map[string]any{"deployment": map[string]any{"replicas": 3}}}}},
		check: func(t *testing.T, r chartRendering) {
			spec := r.object(t, "NginxProxy", "gatewall-proxy-config").Object["spec"]
			want := map[string]any{"workerConnections": int64(2048), "kubernetes": map[string]any{"deployment": map[string]any{"replicas": int64(3)}}}
			if !reflect.DeepEqual(spec, want) {
				t.Errorf("NginxProxy spec %v, want %v", spec, want)
			}
		},
	}, {
		name:   "no GatewayClass",
		values: gw(map[string]any{"createGatewayClass": false}),
		check: func(t *testing.T, r chartRendering) {
			for _, o := range r.objs {
				if o.GetKind() == "GatewayClass" || o.GetKind() == "NginxProxy" {
					t.Errorf("%s %s made with createGatewayClass false", o.GetKind(), o.GetName())
				}
			}
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			objs := renderChart(t, "gatewall", "gatewall-system", tc.values)
			r := chartRendering{objs: objs}
			args := managerArgs(t, canonical(r.object(t, "Deployment", "gatewall-controller-manager").Object).(map[string]any))
			flags, err := parseManagerFlags(args)
			if err != nil {
				t.Fatalf("the manager would not start with %q: %v", args, err)
			}
			r.flags = flags
			tc.check(t, r)
			dryRunChart(t, "gatewall-system", objs)
		})
	}
}

// TestChartRefusesBadValues: values the chart cannot honour fail the
// install, saying which.
func TestChartRefusesBadValues(t *testing.T) {
	root := testenv.RepoRoot()
	h := helm.Helm{Path: filepath.Join(root, helm.Binary), Home: t.TempDir()}
	for name, tc := range map[string]struct {
		values map[string]any
		want   string
	}{
		"a misspelt value": {gw(map[string]any{"replica": 2}), "'replica' not allowed"},
		// The admission policies would not apply to its manager.
		"a name that does not end in gatewall": {map[string]any{"fullnameOverride": "gw"}, "fullnameOverride"},
		"a controllerName without a path":      {gw(map[string]any{"gatewayControllerName": "gatewall"}), "gatewayControllerName"},
		"a flag that is not one":               {gw(map[string]any{"extraArgs": []any{"verbose"}}), "extraArgs"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := h.Template(context.Background(), helm.Release{Name: "gatewall", Namespace: "gatewall-system",
				Chart: filepath.Join(root, "charts", "gatewall"), Values: tc.values})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("helm template: %v, want an error naming %s", err, tc.want)
			}
		})
	}
}

// gw is values under nginxGateway.
func gw(v map[string]any) map[string]any { return map[string]any{"nginxGateway": v} }

// chartRendering is a rendering of the chart and what its manager makes of
// its arguments.
type chartRendering struct {
	objs  []*unstructured.Unstructured
	flags parsedFlags
}

func (r chartRendering) object(t *testing.T, kind, name string) *unstructured.Unstructured {
	t.Helper()
	for _, o := range r.objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	t.Fatalf("the chart makes no %s %s", kind, name)
	return nil
}

// container is the manager's container.
func (r chartRendering) container(t *testing.T) map[string]any {
	t.Helper()
	containers, _, _ := unstructured.NestedSlice(r.object(t, "Deployment", "gatewall-controller-manager").Object,
		"spec", "template", "spec", "containers")
	return containers[0].(map[string]any)
}

// volumeSecret is the Secret a Deployment's volume mounts.
func volumeSecret(t *testing.T, d *unstructured.Unstructured, volume string) string {
	t.Helper()
	volumes, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "volumes")
	for _, v := range volumes {
		if v := v.(map[string]any); v["name"] == volume {
			name, _, _ := unstructured.NestedString(v, "secret", "secretName")
			return name
		}
	}
	t.Fatalf("no volume %s", volume)
	return ""
}
