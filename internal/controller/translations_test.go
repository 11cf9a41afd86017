package controller

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/graph"
)

func translationInput(generation int64) *graph.Input {
	in := graph.NewInput("example.com/ctrl")
	in.Add(&gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "c", Generation: 1},
		Spec: gatewayv1.GatewayClassSpec{ControllerName: "example.com/ctrl"}})
	in.Add(&gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "gw", Generation: generation},
		Spec: gatewayv1.GatewaySpec{GatewayClassName: "c", Listeners: []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType}}}})
	return in
}

// TestPolicyReconcilersReuseTheGatewaysTranslation: a policy reconciler
// whose snapshot is the Gateway reconciler's gets the Gateway reconciler's
// translation, not a second one; a different snapshot is translated anew
// and does not replace what the Gateway reconciler keeps.
func TestPolicyReconcilersReuseTheGatewaysTranslation(t *testing.T) {
	key := types.NamespacedName{Namespace: "ns", Name: "gw"}
	cache := NewTranslations()
	r := &GatewayReconciler{Config: Config{Translations: cache}}
	kept, _ := r.translate(translationInput(1), key)
	if kept == nil {
		t.Fatal("the Gateway did not translate")
	}
	if got := cache.Cached(translationInput(1), key); got != kept {
		t.Error("the same input was translated again instead of reusing the Gateway reconciler's translation")
	}
	newer := cache.Cached(translationInput(2), key)
	if newer == nil || newer == kept {
		t.Fatalf("a changed input got %p, want a new translation (kept %p)", newer, kept)
	}
	if again, _ := r.translate(translationInput(1), key); again != kept {
		t.Error("a policy reconciler's translation replaced the Gateway reconciler's")
	}
	var none *Translations
	if none.Cached(translationInput(1), key) == nil {
		t.Error("without a cache, nothing was translated")
	}
}
