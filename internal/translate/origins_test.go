package translate_test

import (
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/manifest"
	"github.com/gatewall/gatewall/internal/nginx/config"
	"github.com/gatewall/gatewall/internal/render"
	"github.com/gatewall/gatewall/internal/translate"
	"github.com/gatewall/gatewall/test/certgen"
)

// TestNameFilesNamesTheObjects: when a data plane's NGINX fails on a file
// of a pushed configuration, it names the file; the message Gatewall
// reports names, first, the objects the file was written from: the Secret of a
// listener's certificate, the ConfigMap of a client validation CA, the
// BackendTLSPolicy and ConfigMap of a backend CA.
func TestNameFilesNamesTheObjects(t *testing.T) {
	root, err := certgen.Issue(certgen.Spec{Name: "root", Key: certgen.Key(certgen.P256, 0), Digest: certgen.SHA256, CA: true})
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := certgen.Issue(certgen.Spec{Name: "leaf", Key: certgen.Key(certgen.P256, 1), Issuer: root, Digest: certgen.SHA256})
	if err != nil {
		t.Fatal(err)
	}
	in := graph.NewInput(graph.DefaultControllerName)
	in.Add(&gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "nginx"}, Spec: gatewayv1.GatewayClassSpec{ControllerName: graph.DefaultControllerName}})
	for _, o := range certgen.Objects("team", "nginx", certgen.Material{Cert: leaf.PEM(), Key: certgen.KeyPEM(leaf.Key, certgen.PKCS8), CA: root.PEM()}) {
		in.Add(o)
	}
	tr := translate.Gateway(in, types.NamespacedName{Namespace: "team", Name: "gw"})
	if tr == nil || tr.Files == nil {
		t.Fatal("the Gateway does not render")
	}
	// The files, by what they are written from.
	byOrigin := map[string]string{}
	for path, origins := range tr.FileOrigins {
		byOrigin[strings.Join(origins, ", ")] = path
	}
	cert, clientCA, backendCA := byOrigin["Secret team/cert"], byOrigin["ConfigMap team/ca"], byOrigin["BackendTLSPolicy team/tls, ConfigMap team/ca"]
	if cert == "" || clientCA == "" || backendCA == "" || cert == clientCA {
		t.Fatalf("the files' origins: %v", tr.FileOrigins)
	}
	failed := func(path string) string {
		return fmt.Sprintf(`pod gw-1 rejected it and keeps its last good configuration: nginx: [emerg] cannot load certificate "%s": PEM_read_bio_X509_AUX() failed`, path)
	}
	cases := []struct {
		name, msg, want string
	}{
		{"a listener's certificate", failed(cert), "NGINX failed on a file written from Secret team/cert (" + cert + "): " + failed(cert)},
		{"a client validation CA", failed(clientCA), "NGINX failed on a file written from ConfigMap team/ca (" + clientCA + "): " + failed(clientCA)},
		{"a backend CA", failed(backendCA), "NGINX failed on a file written from BackendTLSPolicy team/tls, ConfigMap team/ca (" + backendCA + "): " + failed(backendCA)},
		{"no file of the configuration", "pod gw-1: nginx: [emerg] bind() to 0.0.0.0:443 failed", "pod gw-1: nginx: [emerg] bind() to 0.0.0.0:443 failed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tr.NameFiles(tc.msg); got != tc.want {
				t.Errorf("NameFiles:\n got %s\nwant %s", got, tc.want)
			}
		})
	}
	t.Run("two pods, two files", func(t *testing.T) {
		got := tr.NameFiles(failed(cert) + "; " + failed(clientCA))
		for _, want := range []string{"Secret team/cert (" + cert + ")", "ConfigMap team/ca (" + clientCA + ")"} {
			if !strings.Contains(got, want) {
				t.Errorf("NameFiles: %s\nwant it to say %s", got, want)
			}
		}
	})
}

// TestNameFilesNamesSnippets: a snippet that passes the allow-list is
// written into a file of its object's, so that when NGINX fails on the
// whole configuration (a data plane's own error, which the allow-list
// cannot foresee) the Gateway's message names the SnippetsPolicy or
// SnippetsFilter first.
func TestNameFilesNamesSnippets(t *testing.T) {
	objs, err := manifest.ReadFiles("../render/testdata/snippets.in.yaml")
	if err != nil {
		t.Fatal(err)
	}
	in, err := render.Decode(objs, graph.DefaultControllerName, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	in.Snippets = true
	tr := translate.Gateway(in, types.NamespacedName{Namespace: "default", Name: "gateway"})
	if tr == nil || tr.Files == nil {
		t.Fatal("the Gateway does not render")
	}
	for _, c := range []struct {
		kind, name string
		ctx        v1alpha1.NginxContext
	}{
		{graph.KindSnippetsPolicy, "one-per-client", v1alpha1.NginxContextHTTP},
		{graph.KindSnippetsPolicy, "one-per-client", v1alpha1.NginxContextHTTPServerLocation},
		{graph.KindSnippetsPolicy, "gzip", v1alpha1.NginxContextHTTPServer},
		{graph.KindSnippetsFilter, "get-only", v1alpha1.NginxContextHTTPServerLocation},
		{graph.KindSnippetsFilter, "per-client", v1alpha1.NginxContextHTTP},
	} {
		path := config.SnippetIncludePath(c.kind, types.NamespacedName{Namespace: "default", Name: c.name}, c.ctx)
		msg := fmt.Sprintf(`pod gateway-1 rejected it and keeps its last good configuration: nginx: [emerg] ... in %s:2`, path)
		want := fmt.Sprintf("NGINX failed on a file written from %s default/%s (%s): %s", c.kind, c.name, path, msg)
		if got := tr.NameFiles(msg); got != want {
			t.Errorf("NameFiles:\n got %s\nwant %s", got, want)
		}
	}
}
