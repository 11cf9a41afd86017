package controller

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/endpoints"
	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/nginx/config"
	"github.com/gatewall/gatewall/internal/scheme"
	"github.com/gatewall/gatewall/internal/status"
	"github.com/gatewall/gatewall/internal/translate"
	"github.com/gatewall/gatewall/test/certgen"
)

// failingDataPlane is a data plane whose pods rejected every version,
// with NGINX's message about a file.
type failingDataPlane struct{ message string }

func (f failingDataPlane) Publish(types.NamespacedName, []config.File) string { return "v" }
func (f failingDataPlane) PublishEndpoints(types.NamespacedName, endpoints.Set, endpoints.Resolver, endpoints.KeySources) {
}
func (f failingDataPlane) Forget(types.NamespacedName) {}
func (f failingDataPlane) State(types.NamespacedName, string) status.DataPlane {
	return status.DataPlane{State: status.Failed, Message: f.message}
}

// TestFailedApplyNamesTheObject: when NGINX on the data plane fails on a
// file of a pushed configuration, the Gateway's Programmed condition and
// its ApplyFailed event name the object the file was written from, not
// only the file, also when NGINX's messages (one per pod) are longer than
// an event's note.
func TestFailedApplyNamesTheObject(t *testing.T) {
	c, err := certgen.Issue(certgen.Spec{Name: "leaf", Key: certgen.Key(certgen.P256, 0), Digest: certgen.SHA256})
	if err != nil {
		t.Fatal(err)
	}
	in := graph.NewInput("gatewall.test/controller")
	class := &gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "nginx"}, Spec: gatewayv1.GatewayClassSpec{ControllerName: "gatewall.test/controller"}}
	in.Add(class)
	objs := certgen.Objects("team", "nginx", certgen.Material{Cert: c.PEM(), Key: certgen.KeyPEM(c.Key, certgen.PKCS8), CA: c.PEM()})
	for _, o := range objs {
		in.Add(o)
	}
	key := types.NamespacedName{Namespace: "team", Name: "gw"}
	tr := translate.Gateway(in, key)
	var certPath string
	for path, origins := range tr.FileOrigins {
		if strings.Join(origins, ", ") == "Secret team/cert" {
			certPath = path
		}
	}
	if certPath == "" {
		t.Fatalf("no file is written from Secret team/cert: %v", tr.FileOrigins)
	}
	gw := in.Gateways[key]
	rec := events.NewFakeRecorder(10)
	r := &GatewayReconciler{
		Client:    fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(gw).WithStatusSubresource(gw).Build(),
		DataPlane: failingDataPlane{message: `pod gw-1 rejected it and keeps its last good configuration: nginx: [emerg] cannot load certificate "` + certPath + `": PEM lib; ` + strings.Repeat("pod gw-2 rejected it too: [emerg] ... ", 40)},
		Recorder:  rec,
	}
	job := &statusJob{gw: gw, in: in, t: tr, version: "v", published: true, statusesHanded: true}
	if err := r.writeStatuses(context.Background(), job); err != nil {
		t.Fatal(err)
	}
	want := "NGINX failed on a file written from Secret team/cert (" + certPath + ")"
	got := &gatewayv1.Gateway{}
	if err := r.Get(context.Background(), key, got); err != nil {
		t.Fatal(err)
	}
	var programmed string
	for _, c := range got.Status.Conditions {
		if c.Type == string(gatewayv1.GatewayConditionProgrammed) {
			programmed = c.Message
		}
	}
	if !strings.Contains(programmed, want) {
		t.Errorf("Programmed: %q\nwant it to say %q", programmed, want)
	}
	select {
	case e := <-rec.Events:
		if !strings.Contains(e, "ApplyFailed") || !strings.Contains(e, want) {
			t.Errorf("event %q, want ApplyFailed saying %q", e, want)
		}
	default:
		t.Error("no event")
	}
}
