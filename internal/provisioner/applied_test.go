package provisioner

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestAppliedSkipsOnlyWhatNobodyChanged: an object is skipped only when
// Apply wrote the same content before and the cached object still has the
// resourceVersion Apply got back.
func TestAppliedSkipsOnlyWhatNobodyChanged(t *testing.T) {
	key := appliedKey{kind: "ConfigMap", name: types.NamespacedName{Namespace: "apps", Name: "gw"}}
	digest := func(v string) [32]byte {
		d, err := digestOf(&unstructured.Unstructured{Object: map[string]any{"data": map[string]any{"k": v}}})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	cached := func(rv string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{ResourceVersion: rv}}
	}
	var none *Applied
	if none.unchanged(key, digest("a"), cached("1")) {
		t.Error("a nil Applied skipped an object")
	}
	a := NewApplied()
	if a.unchanged(key, digest("a"), cached("1")) {
		t.Error("an object never applied was skipped")
	}
	a.record(key, digest("a"), "7")
	for _, c := range []struct {
		name   string
		digest [32]byte
		have   client.Object
		skip   bool
	}{
		{"same content, nobody changed it", digest("a"), cached("7"), true},
		{"someone changed it (or the cache lags)", digest("a"), cached("8"), false},
		{"Gatewall wants other content", digest("b"), cached("7"), false},
		{"it was deleted", digest("a"), nil, false},
	} {
		if got := a.unchanged(key, c.digest, c.have); got != c.skip {
			t.Errorf("%s: skipped %v, want %v", c.name, got, c.skip)
		}
	}
	a.forget(key)
	if a.unchanged(key, digest("a"), cached("7")) {
		t.Error("a forgotten object (its apply failed) was skipped")
	}
}
