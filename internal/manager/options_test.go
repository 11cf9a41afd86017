package manager

import (
	"flag"
	"io"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

func validOptions() Options {
	return Options{ControllerName: DefaultControllerName, GatewayClassName: DefaultGatewayClassName, Namespace: DefaultNamespace}
}

func TestOptionsValidate(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*Options)
		want   string // substring of the error; empty when valid
	}{
		{name: "defaults", mutate: func(*Options) {}},
		{name: "https storage and secrets", mutate: func(o *Options) {
			o.PLM = PLMOptions{StorageURL: "https://plm-storage.plm-system.svc:8333", Bucket: "plm", Prefix: "bundles/", CacheDir: "/var/cache/gatewall/plm", CredentialsSecret: "plm-creds",
				CASecret: "plm-system/plm-ca", ClientSSLSecret: "plm-client", APIGroup: PLMGroupWAF}
		}},
		{name: "controller name without domain", mutate: func(o *Options) { o.ControllerName = "nginx" }, want: "--gateway-ctlr-name"},
		{name: "class name with capitals", mutate: func(o *Options) { o.GatewayClassName = "NGINX" }, want: "--gatewayclass"},
		{name: "storage URL scheme", mutate: func(o *Options) { o.PLM.StorageURL = "s3://bucket" }, want: "--plm-storage-url"},
		{name: "storage URL without host", mutate: func(o *Options) { o.PLM.StorageURL = "http://" }, want: "--plm-storage-url"},
		{name: "secret with two slashes", mutate: func(o *Options) { o.PLM.CASecret = "a/b/c" }, want: "--plm-storage-ca-secret"},
		{name: "secret namespace invalid", mutate: func(o *Options) { o.PLM.CredentialsSecret = "Bad_NS/creds" }, want: "--plm-storage-credentials-secret"},
		{name: "unknown PLM group", mutate: func(o *Options) { o.PLM.APIGroup = "f5.com" }, want: "--plm-api-group"},
		{name: "image pull Secret name invalid", mutate: func(o *Options) { o.Agent.PullSecrets = []string{"F5_Registry"} },
			want: "--nginx-docker-secret"},
		{name: "backoff max below initial", mutate: func(o *Options) { o.PLM.BackoffInitial, o.PLM.BackoffMax = time.Minute, time.Second },
			want: "--plm-fetch-backoff-initial"},
		{name: "storage without bucket", mutate: func(o *Options) {
			o.PLM = PLMOptions{StorageURL: "http://plm-storage:8333", CacheDir: "/var/cache/gatewall/plm"}
		}, want: "--plm-storage-bucket is required"},
		{name: "bucket name invalid", mutate: func(o *Options) {
			o.PLM = PLMOptions{StorageURL: "http://plm-storage:8333", Bucket: "PLM_Bundles", CacheDir: "/var/cache/gatewall/plm"}
		}, want: "--plm-storage-bucket"},
		{name: "prefix leaves its folder", mutate: func(o *Options) {
			o.PLM = PLMOptions{StorageURL: "http://plm-storage:8333", Bucket: "plm", Prefix: "../other", CacheDir: "/var/cache/gatewall/plm"}
		}, want: "--plm-storage-prefix"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := validOptions()
			c.mutate(&o)
			err := o.Validate()
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("error %v, want one mentioning %s", err, c.want)
			}
		})
	}
}

func TestOptionsValidateReportsEveryProblem(t *testing.T) {
	o := Options{ControllerName: "x", GatewayClassName: "X", Namespace: "default", PLM: PLMOptions{StorageURL: "ftp://x"}}
	err := o.Validate()
	for _, flag := range []string{"--gateway-ctlr-name", "--gatewayclass", "--plm-storage-url"} {
		if err == nil || !strings.Contains(err.Error(), flag) {
			t.Errorf("error %v does not mention %s", err, flag)
		}
	}
}

func TestSecretName(t *testing.T) {
	got, err := SecretName("plm-ca", "gatewall-system")
	if err != nil || got != (types.NamespacedName{Namespace: "gatewall-system", Name: "plm-ca"}) {
		t.Errorf("bare name: %v, %v", got, err)
	}
	got, err = SecretName("plm-system/plm-ca", "gatewall-system")
	if err != nil || got != (types.NamespacedName{Namespace: "plm-system", Name: "plm-ca"}) {
		t.Errorf("namespaced: %v, %v", got, err)
	}
}

// TestMetricsOptions: metrics are served over HTTPS behind the API server's
// authentication and authorization unless --metrics-secure=false, with the
// certificate of --metrics-cert-dir when given.
func TestMetricsOptions(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	var opts Options
	BindFlags(fs, &opts)
	if err := fs.Parse([]string{"--metrics-cert-dir=/certs"}); err != nil {
		t.Fatal(err)
	}
	o := metricsOptions(opts)
	if !o.SecureServing || o.FilterProvider == nil || o.CertDir != "/certs" {
		t.Errorf("default: secure %v, filter set %v, cert dir %q; want secure, filtered, /certs", o.SecureServing, o.FilterProvider != nil, o.CertDir)
	}
	if err := fs.Parse([]string{"--metrics-secure=false"}); err != nil {
		t.Fatal(err)
	}
	if o := metricsOptions(opts); o.SecureServing || o.FilterProvider != nil {
		t.Errorf("--metrics-secure=false: secure %v, filter set %v; want plain HTTP", o.SecureServing, o.FilterProvider != nil)
	}
}

// TestPLMFlags: the PLM flags parse into the options, and refuse values
// that cannot be used, naming the flag.
func TestPLMFlags(t *testing.T) {
	cases := []struct {
		name  string
		args  []string
		check func(Options) bool
		want  string // substring of the parse error; empty when valid
	}{
		{name: "cache size default", args: nil, check: func(o Options) bool { return o.PLM.CacheMaxSize == 0 }},
		{name: "cache size", args: []string{"--plm-cache-max-size=1Gi"}, check: func(o Options) bool { return o.PLM.CacheMaxSize == 1<<30 }},
		{name: "cache size not a quantity", args: []string{"--plm-cache-max-size=lots"}, want: "plm-cache-max-size"},
		{name: "cache size zero", args: []string{"--plm-cache-max-size=0"}, want: "plm-cache-max-size"},
		{name: "backoff defaults", args: nil,
			check: func(o Options) bool { return o.PLM.BackoffInitial == time.Second && o.PLM.BackoffMax == 2*time.Minute }},
		{name: "backoff", args: []string{"--plm-fetch-backoff-initial=5s", "--plm-fetch-backoff-max=10m"}, check: func(o Options) bool {
			f := fetcherOptions(o.PLM, nil)
			return f.MinBackoff == 5*time.Second && f.MaxBackoff == 10*time.Minute
		}},
		{name: "backoff not a duration", args: []string{"--plm-fetch-backoff-max=often"}, want: "plm-fetch-backoff-max"},
		{name: "endpoint changes refreshed by default", args: nil, check: func(o Options) bool { return !o.TranslateEndpointChanges }},
		{name: "endpoint changes translated", args: []string{"--translate-endpoint-changes"}, check: func(o Options) bool { return o.TranslateEndpointChanges }},
		{name: "image pull Secrets", args: []string{"--nginx-docker-secret=f5-registry", "--nginx-docker-secret=registries/mirror"},
			check: func(o Options) bool { return strings.Join(o.Agent.PullSecrets, ",") == "f5-registry,registries/mirror" }},
		{name: "storage scope", args: []string{"--plm-storage-bucket=plm", "--plm-storage-prefix=bundles/"},
			check: func(o Options) bool { return o.PLM.Scope().String() == `bucket "plm", keys under "bundles/"` }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fs := flag.NewFlagSet("t", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			var opts Options
			BindFlags(fs, &opts)
			err := fs.Parse(c.args)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("error %v, want one mentioning %s", err, c.want)
			case c.want == "" && !c.check(opts):
				t.Fatalf("options %+v", opts.PLM)
			}
		})
	}
}

// TestAgentPodAddressCheckFlag: agents' tokens are accepted only from their
// pods' addresses unless --agent-pod-address-check=false.
func TestAgentPodAddressCheckFlag(t *testing.T) {
	for args, anyAddress := range map[string]bool{"": false, "--agent-pod-address-check=true": false, "--agent-pod-address-check=false": true} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		var opts Options
		BindFlags(fs, &opts)
		var list []string
		if args != "" {
			list = []string{args}
		}
		if err := fs.Parse(list); err != nil {
			t.Fatal(err)
		}
		if opts.Agent.AnyPeerAddress != anyAddress {
			t.Errorf("%q: any peer address %v, want %v", args, opts.Agent.AnyPeerAddress, anyAddress)
		}
	}
}
