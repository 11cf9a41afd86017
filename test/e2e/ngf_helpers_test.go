package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gatewall/gatewall/internal/local/images"
	"github.com/gatewall/gatewall/test/ngf"
)

// ngfRun is one scenario of test/ngf applied in namespaces of its own.
type ngfRun struct {
	ns     string
	objs   []*unstructured.Unstructured
	issued ngf.Issued
	// addr is the address of the scenario's Gateway, once Programmed.
	addr string
}

// applyNGFScenario applies a scenario of test/ngf as a user would apply
// the NGF example of its shape: its namespace "default" is a namespace of
// the test, its others are the test's namespace with their name appended;
// the Secrets cert-manager would issue are created; each Service with a
// selector gets a Deployment of the backend the scenario needs (echo-basic,
// over gRPC for an h2c port, over TLS on 8443); edit, when given, changes
// objects first (what the local runtime needs in place of the internet),
// and leaves out those it returns false for. It waits until the
// scenario's Gateway is Programmed.
func applyNGFScenario(t *testing.T, name string, edit func(*unstructured.Unstructured) bool) *ngfRun {
	t.Helper()
	run := &ngfRun{ns: namespace(t, "e2e-ngf-"+name)}
	nsOf := func(n string) string {
		if n == "default" {
			return run.ns
		}
		return run.ns + "-" + n
	}
	objs, err := ngf.Objects(name, nsOf)
	if err != nil {
		t.Fatal(err)
	}
	run.objs = objs
	if run.issued, err = ngf.Issue(name, nsOf); err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if o.GetKind() == "Namespace" {
			namespace(t, o.GetName())
		}
	}
	for _, s := range run.issued.Secrets {
		create(t, s)
	}
	var gw types.NamespacedName
	for _, o := range objs {
		switch o.GetKind() {
		case "Namespace":
			continue
		case "Service":
			if d := ngfBackend(t, run, o); d != nil {
				create(t, d)
			}
		case "Gateway":
			gw = types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}
		}
		if edit == nil || edit(o) {
			create(t, o)
		}
	}
	run.addr = programmedAddress(t, gw, 180*time.Second)
	return run
}

// ngfBackend is the Deployment behind a scenario's Service, by what its
// port says: gRPC (h2c), TLS (8443), the external authorization server
// (authz), else echo-basic; none for a Service without a selector.
func ngfBackend(t *testing.T, run *ngfRun, svc *unstructured.Unstructured) client.Object {
	t.Helper()
	app, _, _ := unstructured.NestedString(svc.Object, "spec", "selector", "app")
	if app == "" {
		return nil
	}
	ns := svc.GetNamespace()
	ports, _, _ := unstructured.NestedSlice(svc.Object, "spec", "ports")
	port := ports[0].(map[string]any)
	switch {
	case app == "authz":
		return authzServer(t, ns)
	case port["appProtocol"] == "kubernetes.io/h2c":
		return grpcBackend(ns, app)[0]
	case fmt.Sprint(port["targetPort"]) == "8443":
		kp := run.issued.Backend
		create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: app + "-serving"}, Type: corev1.SecretTypeTLS,
			Data: map[string][]byte{corev1.TLSCertKey: kp.CertPEM, corev1.TLSPrivateKeyKey: kp.KeyPEM}})
		return tlsEcho(ns, app, app+"-serving")[0]
	}
	return echo(ns, app, 1)[0]
}

// authzConf is the external authorization server of the
// external-authentication scenario: NGINX answering /verify/... with 200
// and an X-Account header when the request carries the token it accepts,
// 401 otherwise.
const authzConf = `daemon off;
pid /tmp/authz.pid;
error_log stderr;
events {}
http {
    access_log off;
    client_body_temp_path /tmp/body;
    proxy_temp_path /tmp/proxy;
    fastcgi_temp_path /tmp/fastcgi;
    uwsgi_temp_path /tmp/uwsgi;
    scgi_temp_path /tmp/scgi;
    server {
        listen 3000;
        location /verify/ {
            if ($http_x_api_token != "let-me-in") {
                return 401;
            }
            add_header X-Account account-7;
            return 200;
        }
    }
}
`

// authzServer is a Deployment of NGINX (from the data-plane image the
// runtime has) serving authzConf, with its ConfigMap created.
func authzServer(t *testing.T, ns string) client.Object {
	t.Helper()
	create(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "authz"}, Data: map[string]string{"nginx.conf": authzConf}})
	c := corev1.Container{
		Name: "authz", Image: images.DataPlaneTest, Command: []string{"/usr/sbin/nginx", "-e", "stderr", "-c", "/etc/authz/nginx.conf"},
		Ports:        []corev1.ContainerPort{{ContainerPort: 3000}},
		VolumeMounts: []corev1.VolumeMount{{Name: "conf", MountPath: "/etc/authz"}},
	}
	vols := []corev1.Volume{{Name: "conf", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: "authz"}}}}}
	return app(ns, "authz", 1, c, vols, corev1.ServicePort{Port: 80, TargetPort: intstr.FromInt32(3000)})[0]
}

// exchange is one request's answer: its status, headers, and the request
// echo-basic saw (when it answered).
type exchange struct {
	status int
	header http.Header
	body   string
	echo   echoed
}

// echoed is the request echo-basic received, as it answers it.
type echoed struct {
	Path      string              `json:"path"`
	Host      string              `json:"host"`
	Method    string              `json:"method"`
	Headers   map[string][]string `json:"headers"`
	Namespace string              `json:"namespace"`
	Pod       string              `json:"pod"`
}

// noRedirects is a client that returns redirects as they are.
var noRedirects = &http.Client{Timeout: 5 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// send sends method host/path through addr (port 80) with the headers.
func send(addr, method, host, path string, header http.Header) (exchange, error) {
	req, err := http.NewRequest(method, "http://"+addr+path, strings.NewReader("a small body"))
	if err != nil {
		return exchange{}, err
	}
	req.Host = host
	for k, vs := range header {
		req.Header[k] = vs
	}
	resp, err := noRedirects.Do(req)
	if err != nil {
		return exchange{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	x := exchange{status: resp.StatusCode, header: resp.Header, body: string(body)}
	_ = json.Unmarshal(body, &x.echo)
	return x, err
}

// answers waits until the request is answered want by a pod whose name
// starts with pod (any pod when empty), and returns that exchange.
func answers(t *testing.T, addr, method, host, path string, header http.Header, want int, pod string) exchange {
	t.Helper()
	var x exchange
	eventually(t, 60*time.Second, func() error {
		var err error
		if x, err = send(addr, method, host, path, header); err != nil {
			return err
		}
		if x.status != want || !strings.HasPrefix(x.echo.Pod, pod) {
			return fmt.Errorf("%s %s%s %v: %d from pod %q (%s), want %d from %s...", method, host, path, header, x.status, x.echo.Pod, trunc(x.body), want, pod)
		}
		return nil
	})
	return x
}

// basicAuth is an Authorization header of HTTP Basic.
func basicAuth(user, password string) http.Header {
	r, _ := http.NewRequest("GET", "/", nil)
	r.SetBasicAuth(user, password)
	return http.Header{"Authorization": r.Header.Values("Authorization")}
}

// scaleDeployment sets a Deployment's replicas and waits until it has no
// more pods than that ready.
func scaleDeployment(t *testing.T, key types.NamespacedName, replicas int32) {
	t.Helper()
	d := &appsv1.Deployment{}
	if err := rt.Client.Get(context.Background(), key, d); err != nil {
		t.Fatal(err)
	}
	d.Spec.Replicas = ptr.To(replicas)
	if err := rt.Client.Update(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, func() error {
		if err := rt.Client.Get(context.Background(), key, d); err != nil {
			return err
		}
		if d.Status.Replicas > replicas {
			return fmt.Errorf("%d replicas", d.Status.Replicas)
		}
		return nil
	})
}

// testHTTPSTermination: plain HTTP redirects to HTTPS; HTTPS is served
// with the listener's certificate from the granted namespace, TLS 1.2 and
// 1.3 as its options say; then, the options changed to TLSv1.3 only, a
