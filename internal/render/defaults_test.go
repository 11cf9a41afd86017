package render

import (
	"bytes"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewall/gatewall/internal/manifest"
)

// TestSecretStringData: a Secret written with stringData (as a guide's
// htpasswd Secret often is) reads as the API server would store it:
// stringData merged into data, its value winning for a key in both.
func TestSecretStringData(t *testing.T) {
	objs, err := manifest.Decode([]byte(`
apiVersion: v1
kind: Secret
metadata: {name: users, namespace: apps}
type: Opaque
data:
  auth: b2xk
  other: eA==
stringData:
  auth: "alice:$apr1$abc"
`))
	if err != nil {
		t.Fatal(err)
	}
	var warnings bytes.Buffer
	in, err := Decode(objs, "ctrl", "", &warnings)
	if err != nil {
		t.Fatal(err)
	}
	s := in.Secrets[types.NamespacedName{Namespace: "apps", Name: "users"}]
	if s == nil {
		t.Fatalf("the Secret is not read; warnings: %s", warnings.String())
	}
	if got := string(s.Data["auth"]); got != "alice:$apr1$abc" {
		t.Errorf("data.auth = %q, want stringData's value", got)
	}
	if got := string(s.Data["other"]); got != "x" {
		t.Errorf("data.other = %q, want data's own value kept", got)
	}
	if len(s.StringData) != 0 {
		t.Errorf("stringData %v kept, want it merged away", s.StringData)
	}
}
