package testenv

import (
	"context"
	"fmt"
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

// The objects the tests on a local runtime share: a GatewayClass of
// Gatewall's default controller name, Gateways, echo backends and routes.

// Eventually calls cond every 100 ms until it returns nil; after timeout it
// fails the test with cond's last error.
func Eventually(t *testing.T, timeout time.Duration, cond func() error) {
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

// Create creates objects (those that exist already are left alone).
func (l *Local) Create(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := l.Client.Create(context.Background(), o); client.IgnoreAlreadyExists(err) != nil {
			t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
	}
}

// Namespace creates a namespace for the test and deletes it at the end.
func (l *Local) Namespace(t *testing.T, name string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	l.Create(t, ns)
	t.Cleanup(func() { _ = l.Client.Delete(context.Background(), ns) })
	return name
}

// GatewayClass creates the GatewayClass "nginx" of Gatewall's default
// controller name.
func (l *Local) GatewayClass(t *testing.T) {
	t.Helper()
	l.Create(t, &gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "nginx"}, Spec: gatewayv1.GatewayClassSpec{ControllerName: manager.DefaultControllerName}})
}

// Gateway is a Gateway of class "nginx" with one HTTP listener on port 80.
func Gateway(ns, name string) *gatewayv1.Gateway {
	return &gatewayv1.Gateway{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: gatewayv1.GatewaySpec{GatewayClassName: "nginx",
			Listeners: []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType}}},
	}
}

// Echo is a Deployment of echo-basic and its Service on port 8080.
func Echo(ns, name string, replicas int32) []client.Object {
	c := corev1.Container{
		Name: "echo", Image: images.Echo, Env: PodIdentityEnv(),
		Ports: []corev1.ContainerPort{{ContainerPort: 3000}},
	}
	return App(ns, name, replicas, c, nil, corev1.ServicePort{Name: "http", Port: 8080, TargetPort: intstr.FromInt32(3000)})
}

// PodIdentityEnv tells echo-basic its pod's name and namespace.
func PodIdentityEnv() []corev1.EnvVar {
	return []corev1.EnvVar{
		{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
		{Name: "NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}},
	}
}

// App is a Deployment of one container (with its volumes) and a Service
// with one port in front of it.
func App(ns, name string, replicas int32, c corev1.Container, vols []corev1.Volume, port corev1.ServicePort) []client.Object {
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

// HTTPRoute routes host, path prefix path, to port 8080 of Service svc,
// through Gateway gw.
func HTTPRoute(ns, name, gw, host, path, svc string) *gatewayv1.HTTPRoute {
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

// ProgrammedAddress waits until the Gateway is Programmed (for its current
// generation) and has an address, and returns the address.
func (l *Local) ProgrammedAddress(t *testing.T, key types.NamespacedName, timeout time.Duration) string {
	t.Helper()
	var addr string
	Eventually(t, timeout, func() error {
		gw := &gatewayv1.Gateway{}
		if err := l.Client.Get(context.Background(), key, gw); err != nil {
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
