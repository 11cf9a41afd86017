package envtest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
			if !hasCause(err, c.Field, c.Message) {
				t.Fatalf("want rejection of %s with %q, got: %v", c.Field, c.Message, err)
			}
			// A rule that overflows rejects for the wrong reason, and Go,
			// which wraps around, would not agree.
			if strings.Contains(err.Error(), "overflow") {
				t.Fatalf("a rule overflowed: %v", err)
			}
		})
	}
}

// hasCause says whether the API server's rejection has one cause for field
// whose message contains message: the expected words must be about the
// expected field, not anywhere in the error.
func hasCause(err error, field, message string) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Details == nil {
		return false
	}
	for _, cause := range status.Status().Details.Causes {
		if cause.Field == field && strings.Contains(cause.Message, message) {
			return true
		}
	}
	return false
}
