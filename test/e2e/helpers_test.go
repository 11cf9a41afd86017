package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/local/images"
	"github.com/gatewall/gatewall/internal/manager"
)

const echoImage = images.Echo

func eventually(t *testing.T, timeout time.Duration, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s: %v", timeout, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func create(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := rt.Client.Create(context.Background(), o); client.IgnoreAlreadyExists(err) != nil {
			t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
	}
}

// namespace creates a namespace for the test and deletes it at the end.
func namespace(t *testing.T, name string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	create(t, ns)
	t.Cleanup(func() { _ = rt.Client.Delete(context.Background(), ns) })
	return name
}

func gatewayClass(t *testing.T) {
	create(t, &gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "nginx"}, Spec: gatewayv1.GatewayClassSpec{ControllerName: manager.DefaultControllerName}})
}

func gateway(ns, name string) *gatewayv1.Gateway {
	return &gatewayv1.Gateway{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: gatewayv1.GatewaySpec{GatewayClassName: "nginx",
			Listeners: []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType}}},
	}
}

// echo is a Deployment of echo-basic and its Service on port 8080.
func echo(ns, name string, replicas int32) []client.Object {
	c := corev1.Container{
		Name: "echo", Image: echoImage, Env: podIdentityEnv(),
		Ports: []corev1.ContainerPort{{ContainerPort: 3000}},
	}
	return app(ns, name, replicas, c, nil, corev1.ServicePort{Name: "http", Port: 8080, TargetPort: intstr.FromInt32(3000)})
}

// podIdentityEnv tells echo-basic its pod's name and namespace.
func podIdentityEnv() []corev1.EnvVar {
	return []corev1.EnvVar{
		{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
		{Name: "NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}},
	}
}

// app is a Deployment of one container (with its volumes) and a Service
// with one port in front of it.
func app(ns, name string, replicas int32, c corev1.Container, vols []corev1.Volume, port corev1.ServicePort) []client.Object {
	labels := map[string]string{"app": name}
	return []client.Object{
		&appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: appsv1.DeploymentSpec{
				Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{c}, Volumes: vols},
				},
			},
		},
		&corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec:       corev1.ServiceSpec{Selector: labels, Ports: []corev1.ServicePort{port}},
		},
	}
}

func httpRoute(ns, name, gw, host, path, svc string) *gatewayv1.HTTPRoute {
	return &gatewayv1.HTTPRoute{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: gatewayv1.HTTPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: gatewayv1.ObjectName(gw)}}},
			Hostnames:       []gatewayv1.Hostname{gatewayv1.Hostname(host)},
			Rules: []gatewayv1.HTTPRouteRule{{
				Matches:     []gatewayv1.HTTPRouteMatch{{Path: &gatewayv1.HTTPPathMatch{Type: ptr.To(gatewayv1.PathMatchPathPrefix), Value: ptr.To(path)}}},
				BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{BackendObjectReference: gatewayv1.BackendObjectReference{Name: gatewayv1.ObjectName(svc), Port: ptr.To(gatewayv1.PortNumber(8080))}}}},
			}},
		},
	}
}

// programmedAddress waits until the Gateway is Programmed and has an address.
func programmedAddress(t *testing.T, key types.NamespacedName, timeout time.Duration) string {
	t.Helper()
	var addr string
	eventually(t, timeout, func() error {
		gw := &gatewayv1.Gateway{}
		if err := rt.Client.Get(context.Background(), key, gw); err != nil {
			return err
		}
		c := meta.FindStatusCondition(gw.Status.Conditions, "Programmed")
		if c == nil || c.Status != metav1.ConditionTrue || c.ObservedGeneration != gw.Generation {
			return fmt.Errorf("Programmed: %+v", c)
		}
		if len(gw.Status.Addresses) == 0 {
			return fmt.Errorf("no address")
		}
		addr = gw.Status.Addresses[0].Value
		return nil
	})
	return addr
}

var httpClient = &http.Client{Timeout: 5 * time.Second}

// get sends GET http://addr/path with Host host; it returns status and body.
func get(addr, host, path string) (int, string, error) {
	req, err := http.NewRequest(http.MethodGet, "http://"+addr+path, nil)
	if err != nil {
		return 0, "", err
	}
	req.Host = host
	resp, err := httpClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}

// serves waits until GET host/path through addr answers want with body containing sub.
func serves(t *testing.T, addr, host, path string, want int, sub string, timeout time.Duration) {
	t.Helper()
	eventually(t, timeout, func() error {
		code, body, err := get(addr, host, path)
		if err != nil {
			return err
		}
		if code != want || !strings.Contains(body, sub) {
			return fmt.Errorf("GET %s%s: %d %q, want %d with %q", host, path, code, trunc(body), want, sub)
		}
		return nil
	})
}

func trunc(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}

func errf(format string, args ...any) error { return fmt.Errorf(format, args...) }
