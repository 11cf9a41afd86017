package controller

import (
	"fmt"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/translate"
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

// TestReadersShareOneTranslation: policy reconcilers woken by one change
// before the Gateway reconciler translated it make one translation of it
// between them, however many ask at once, and the Gateway reconciler then
// takes that one (with its routes' statuses still to hand) instead of
// translating again.
func TestReadersShareOneTranslation(t *testing.T) {
	key := types.NamespacedName{Namespace: "ns", Name: "gw"}
	cache := NewTranslations()
	got := make([]*translate.Translation, 8)
	var wg sync.WaitGroup
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i] = cache.Cached(translationInput(3), key)
		}()
	}
	wg.Wait()
	for i, tr := range got {
		if tr == nil || tr != got[0] {
			t.Fatalf("reader %d got translation %p, reader 0 %p: want one translation shared", i, tr, got[0])
		}
	}
	r := &GatewayReconciler{Config: Config{Translations: cache}}
	kept, handed := r.translate(translationInput(3), key)
	if kept != got[0] || handed {
		t.Errorf("the Gateway reconciler got %p (statuses handed: %v), want the readers' %p with its statuses still to hand", kept, handed, got[0])
	}
	if newer := cache.Cached(translationInput(4), key); newer == kept {
		t.Error("a changed input reused the translation of the old one")
	}
	if again, _ := r.translate(translationInput(5), key); again == nil || again == kept {
		t.Error("the Gateway reconciler did not translate a new input")
	}
	if len(cache.read) != 0 {
		t.Errorf("readers' translations kept after the Gateway reconciler kept its own: %d", len(cache.read))
	}
}

// BenchmarkReadersAfterChange: six policy reconcilers (one per policy kind)
// ask for the translation of a Gateway with 1,000 routes whose input just
// changed; they share one translation.
func BenchmarkReadersAfterChange(b *testing.B) {
	key := types.NamespacedName{Namespace: "ns", Name: "gw"}
	in := translationInput(1)
	in.Add(&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "svc", ResourceVersion: "1"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}})
	for i := range 1000 {
		in.Add(&gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("r%d", i), Generation: 1},
			Spec: gatewayv1.HTTPRouteSpec{
				CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "gw"}}},
				Hostnames:       []gatewayv1.Hostname{gatewayv1.Hostname(fmt.Sprintf("h%d.example.com", i))},
				Rules: []gatewayv1.HTTPRouteRule{{BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{
					BackendObjectReference: gatewayv1.BackendObjectReference{Name: "svc", Port: ptr.To(gatewayv1.PortNumber(80))}}}}}},
			}})
	}
	if _, ok := in.Fingerprint(); !ok {
		b.Fatal("the input has no fingerprint: nothing would be shared")
	}
	for range b.N {
		cache := NewTranslations() // the change: nothing translated yet
		var wg sync.WaitGroup
		for range 6 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if cache.Cached(in, key) == nil {
					b.Error("no translation")
				}
			}()
		}
		wg.Wait()
	}
}
