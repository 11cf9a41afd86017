package manager_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gatewall/gatewall/internal/manager"
	"github.com/gatewall/gatewall/internal/podseal"
	"github.com/gatewall/gatewall/test/testenv"
)

// TestSealKeyInAgentTLSSecret (a real API server): the pod seal key lives
// in the agent TLS Secret; a Secret made before the key existed gets one;
// replicas starting together, each proposing its own, end with one key, the
// Secret's; a key of the wrong size is refused.
func TestSealKeyInAgentTLSSecret(t *testing.T) {
	env, err := testenv.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	ctx := context.Background()
	c := env.Client
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "gatewall-system"}}); err != nil {
		t.Fatal(err)
	}
	const controller = "example.com/seal-keys"
	names := []string{"gatewall-agent.test"}
	secretKey := func(i int) types.NamespacedName {
		return types.NamespacedName{Namespace: "gatewall-system", Name: fmt.Sprint("agent-tls-", i)}
	}
	stored := func(k types.NamespacedName) []byte {
		t.Helper()
		s := &corev1.Secret{}
		if err := c.Get(ctx, k, s); err != nil {
			t.Fatal(err)
		}
		return s.Data[manager.AgentTLSSealKey]
	}

	// A new Secret is made with the key.
	candidate := manager.NewSealKey()
	s, err := manager.EnsureAgentTLS(ctx, c, secretKey(0), names, controller, candidate)
	if err != nil {
		t.Fatal(err)
	}
	key, err := manager.EnsureSealKey(ctx, c, s, candidate)
	if err != nil || !bytes.Equal(key, candidate) || !bytes.Equal(stored(secretKey(0)), candidate) {
		t.Fatalf("a new Secret: key %x (%v), stored %x; want %x", key, err, stored(secretKey(0)), candidate)
	}
	// Started again, the manager keeps it.
	s, _ = manager.EnsureAgentTLS(ctx, c, secretKey(0), names, controller, manager.NewSealKey())
	if again, err := manager.EnsureSealKey(ctx, c, s, manager.NewSealKey()); err != nil || !bytes.Equal(again, key) {
		t.Fatalf("restarted: key %x (%v), want the stored %x", again, err, key)
	}

	// A Secret of an older Gatewall, without the key, and replicas
	// starting together.
	old, err := manager.EnsureAgentTLS(ctx, c, secretKey(1), names, controller, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := old.Data[manager.AgentTLSSealKey]; ok {
		t.Fatal("the Secret was made with a key")
	}
	const replicas = 4
	keys := make([][]byte, replicas)
	var wg sync.WaitGroup
	for i := range replicas {
		wg.Go(func() {
			s := &corev1.Secret{}
			if err := c.Get(ctx, secretKey(1), s); err != nil {
				t.Error(err)
				return
			}
			k, err := manager.EnsureSealKey(ctx, c, s, manager.NewSealKey())
			if err != nil {
				t.Error(err)
			}
			keys[i] = k
		})
	}
	wg.Wait()
	want := stored(secretKey(1))
	if len(want) != podseal.KeySize {
		t.Fatalf("the Secret's key has %d bytes", len(want))
	}
	for i, k := range keys {
		if !bytes.Equal(k, want) {
			t.Fatalf("replica %d uses key %x, the Secret holds %x", i, k, want)
		}
	}

	// A key of the wrong size is not used.
	bad := &corev1.Secret{}
	if err := c.Get(ctx, secretKey(1), bad); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(bad.DeepCopy())
	bad.Data[manager.AgentTLSSealKey] = []byte("short")
	if err := c.Patch(ctx, bad, patch); err != nil {
		t.Fatal(err)
	}
	if _, err := manager.EnsureSealKey(ctx, c, bad, manager.NewSealKey()); err == nil || !strings.Contains(err.Error(), "remove it") {
		t.Fatalf("a short key: %v", err)
	}
}
