package envtest

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gatewall/gatewall/test/apicases"
)

// TestCRDRules creates every case of the shared table in the real API server:
// accepted objects must be stored (with their defaults), rejected ones must
// fail with the rule's message for the right field.
func TestCRDRules(t *testing.T) {
	ctx := context.Background()
	for i, c := range apicases.All() {
		t.Run(c.Name, func(t *testing.T) {
			obj := c.Object.DeepCopyObject().(client.Object)
			obj.SetName(fmt.Sprintf("cel-case-%03d", i))
			err := env.Client.Create(ctx, obj)
			if c.Accepted() {
				if err != nil {
					t.Fatalf("rejected: %v", err)
				}
				t.Cleanup(func() { _ = env.Client.Delete(ctx, obj) })
				if c.Stored != nil {
					if err := c.Stored(obj); err != nil {
						t.Fatal(err)
					}
				}
				return
			}
			if err == nil {
				_ = env.Client.Delete(ctx, obj)
				t.Fatalf("accepted; want rejection of %s with %q", c.Field, c.Message)
			}
			if !strings.Contains(err.Error(), c.Field+":") || !strings.Contains(err.Error(), c.Message) {
				t.Fatalf("want rejection of %s with %q, got: %v", c.Field, c.Message, err)
			}
		})
	}
}
