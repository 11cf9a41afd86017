package snapshot

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/gatewall/gatewall/internal/scheme"
)

// countingReader counts the reads that reach the API server.
type countingReader struct {
	client.Reader
	gets int
}

func (c *countingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	c.gets++
	return c.Reader.Get(ctx, key, obj, opts...)
}

// TestReferencedKeepsWhatGatewaysRead: Referenced reads a referenced
// object's content from the API server once per resourceVersion the cache
// has, and holds it only while some Gateway's last snapshot read it. The
// cache and the API server are one fake client here (the bookkeeping is
// under test; test/manager runs Referenced on a real API server).
func TestReferencedKeepsWhatGatewaysRead(t *testing.T) {
	ctx := context.Background()
	secret := func(name, value string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}, Data: map[string][]byte{"k": []byte(value)}}
	}
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(secret("s1", "one"), secret("s2", "two"),
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cm"}, Data: map[string]string{"k": "v"}}).Build()
	api := &countingReader{Reader: c}
	r := NewReferenced(c, api)
	gw1, gw2 := types.NamespacedName{Namespace: "ns", Name: "gw1"}, types.NamespacedName{Namespace: "ns", Name: "gw2"}
	key := func(name string) types.NamespacedName { return types.NamespacedName{Namespace: "ns", Name: name} }
	// snap reads Secrets as one snapshot of gw does, and returns their values.
	snap := func(gw types.NamespacedName, names ...string) []string {
		t.Helper()
		reads := r.reads()
		defer reads.done(gw)
		var values []string
		for _, n := range names {
			s, err := reads.secret(ctx, key(n))
			switch {
			case apierrors.IsNotFound(err):
				values = append(values, "<none>")
			case err != nil:
				t.Fatal(err)
			default:
				values = append(values, string(s.Data["k"]))
			}
		}
		return values
	}
	step := func(name string, gets, held int) {
		t.Helper()
		if api.gets != gets || r.held() != held {
			t.Errorf("%s: %d reads from the API server, %d objects held; want %d and %d", name, api.gets, r.held(), gets, held)
		}
	}

	if got := snap(gw1, "s1", "missing"); got[0] != "one" || got[1] != "<none>" {
		t.Errorf("first snapshot read %v", got)
	}
	step("a first snapshot reads its Secret from the API server", 1, 1)
	snap(gw1, "s1")
	snap(gw2, "s1", "s2")
	step("unchanged, it is not read again; another Secret is", 2, 2)

	s1 := &corev1.Secret{}
	if err := c.Get(ctx, key("s1"), s1); err != nil {
		t.Fatal(err)
	}
	s1.Data["k"] = []byte("rotated")
	if err := c.Update(ctx, s1); err != nil {
		t.Fatal(err)
	}
	if got := snap(gw1, "s1"); got[0] != "rotated" {
		t.Errorf("after rotation, read %v", got)
	}
	step("a changed Secret is read again", 3, 2)

	snap(gw2, "s1")
	step("a Secret no Gateway reads any more is forgotten", 3, 1)
	r.Forget(gw1)
	step("a deleted Gateway's Secret is kept while another Gateway reads it", 3, 1)
	r.Forget(gw2)
	step("nothing is held when no Gateway reads anything", 3, 0)

	reads := r.reads()
	if cm, err := reads.configMap(ctx, key("cm")); err != nil || cm.Data["k"] != "v" {
		t.Errorf("reading a ConfigMap: %v, %v", cm, err)
	}
	reads.done(gw1)
	step("ConfigMaps are read the same way", 4, 1)
}
