package render_test

import (
	"fmt"
	"hash/fnv"
	"math/rand"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/gatewall/gatewall/internal/endpoints"
	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/render"
	"github.com/gatewall/gatewall/internal/translate"
)

// TestEndpointRefreshMatchesTranslation changes the EndpointSlices of every
// golden case at random (endpoints added, removed, made not ready or
// terminating, refused addresses, DNS names, slices added and deleted,
// ports renumbered, an upstream past its bound) and checks the shortcut the
// Gateway reconciler takes for such a change against the whole
// translation: whenever translate.RefreshEndpoints keeps the last
// translation, translating the changed input gives the same files, the
// same statuses of every object, and the endpoint sets the shortcut gives.
func TestEndpointRefreshMatchesTranslation(t *testing.T) {
	cases, err := filepath.Glob("testdata/*.in.yaml")
	if err != nil || len(cases) == 0 {
		t.Fatalf("no golden cases: %v", err)
	}
	const rounds = 12
	refreshed, translated, untouched, incremental := 0, 0, 0, 0
	for _, path := range cases {
		name := strings.TrimSuffix(filepath.Base(path), ".in.yaml")
		for round := range rounds {
			before, _ := decodeCase(t, path)
			after, _ := decodeCase(t, path)
			h := fnv.New64a()
			h.Write([]byte(name))
			r := rand.New(rand.NewSource(int64(h.Sum64()) + int64(round)))
			change, touched := changeSlices(r, after)
			if change == "" {
				break // the case has no Services
			}
			all := true
			for _, key := range gatewayKeys(before) {
				last := translate.Gateway(before, key)
				if last == nil {
					continue
				}
				got, ok := translate.RefreshEndpoints(after, last)
				want := translate.Gateway(after, key)
				// A refresh of the unchanged input, then one given only the
				// changed Services' slices, as the reconciler reads them: the
				// same as reading all.
				if prior, priorOK := translate.RefreshEndpoints(before, last); priorOK {
					inc, incOK := translate.RefreshServices(slicesOf(after, touched), prior, touched)
					if incOK != ok || ok && !reflect.DeepEqual(inc.Endpoints, got.Endpoints) {
						t.Errorf("%s, round %d (%s), Gateway %s: refreshing the changed Services only gave %t %v, reading all %t %v",
							name, round, change, key, incOK, endpointsOrNil(inc), ok, endpointsOrNil(got))
					}
					incremental++
				}
				if !usesAny(last, touched) {
					// The manager does not wake a Gateway for the slices of a
					// Service its graph did not read (Graph.Services).
					untouched++
					if !reflect.DeepEqual(last.Endpoints, want.Endpoints) || !reflect.DeepEqual(last.Files, want.Files) {
						t.Errorf("%s, round %d (%s), Gateway %s: slices of Services its graph did not read change its translation", name, round, change, key)
					}
				}
				if !ok {
					translated++
					all = false
					continue
				}
				refreshed++
				where := fmt.Sprintf("%s, round %d (%s), Gateway %s", name, round, change, key)
				if !reflect.DeepEqual(got.Endpoints, want.Endpoints) {
					t.Errorf("%s: the refreshed endpoints differ from the translation's:\n got %v\nwant %v", where, got.Endpoints, want.Endpoints)
				}
				if !reflect.DeepEqual(last.Files, want.Files) || !slices.Equal(last.Held, want.Held) {
					t.Errorf("%s: the endpoints were refreshed, but the translation changes the files", where)
				}
			}
			if !all {
				continue
			}
			// Every Gateway kept its translation: every status must be the same.
			was, err := render.MarshalStatuses(render.Render(before, goldenTime).Statuses)
			if err != nil {
				t.Fatal(err)
			}
			is, err := render.MarshalStatuses(render.Render(after, goldenTime).Statuses)
			if err != nil {
				t.Fatal(err)
			}
			if string(was) != string(is) {
				t.Errorf("%s, round %d (%s): the endpoints were refreshed, but the statuses change:\n%s", name, round, change, firstDifference(string(was), string(is)))
			}
		}
	}
	t.Logf("%d translations kept with new endpoints, %d translated again; %d changes of Services a Gateway did not read; %d refreshes of the changed Services only",
		refreshed, translated, untouched, incremental)
	// Both ways must be taken, or the test proves nothing.
	if refreshed < 100 || translated < 50 || untouched < 20 || incremental < 100 {
		t.Errorf("refreshed %d, translated %d: the changes do not exercise both ways", refreshed, translated)
	}
}

// slicesOf is an input holding only the EndpointSlices of the Services.
func slicesOf(in *graph.Input, services map[types.NamespacedName]bool) *graph.Input {
	out := graph.NewInput(in.ControllerName)
	for _, s := range in.EndpointSlices {
		if services[types.NamespacedName{Namespace: s.Namespace, Name: s.Labels[discoveryv1.LabelServiceName]}] {
			out.Add(s)
		}
	}
	return out
}

// endpointsOrNil are a translation's endpoint sets, nil for none.
func endpointsOrNil(t *translate.Translation) any {
	if t == nil {
		return nil
	}
	return t.Endpoints
}

func gatewayKeys(in *graph.Input) []types.NamespacedName {
	var keys []types.NamespacedName
	for k := range in.Gateways {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b types.NamespacedName) int { return strings.Compare(a.String(), b.String()) })
	return keys
}

// usesAny says whether a translation's graph read the slices of any of
// the Services.
func usesAny(t *translate.Translation, services map[types.NamespacedName]bool) bool {
	for _, svc := range t.Graph.Services() {
		if services[svc] {
			return true
		}
	}
	return false
}

// changeSlices changes the input's EndpointSlices in one to three ways at
// random and says how ("" when the input has no Service to change), and
// the Services whose slices it changed.
func changeSlices(r *rand.Rand, in *graph.Input) (string, map[types.NamespacedName]bool) {
	var services []*corev1.Service
	for _, s := range in.Services {
		services = append(services, s)
	}
	if len(services) == 0 {
		return "", nil
	}
	touched := map[types.NamespacedName]bool{}
	slices.SortFunc(services, func(a, b *corev1.Service) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	var done []string
	for range 1 + r.Intn(3) {
		ss := sortedSlices(in)
		var s *discoveryv1.EndpointSlice
		if len(ss) > 0 {
			s = ss[r.Intn(len(ss))]
			touched[types.NamespacedName{Namespace: s.Namespace, Name: s.Labels[discoveryv1.LabelServiceName]}] = true
		}
		switch k := r.Intn(10); {
		case s == nil || k == 0:
			svc := services[r.Intn(len(services))]
			in.EndpointSlices[types.NamespacedName{Namespace: svc.Namespace, Name: svc.Name + "-new"}] = newSlice(r, svc)
			touched[types.NamespacedName{Namespace: svc.Namespace, Name: svc.Name}] = true
			done = append(done, "a slice added to "+svc.Name)
		case k == 1:
			delete(in.EndpointSlices, types.NamespacedName{Namespace: s.Namespace, Name: s.Name})
			done = append(done, "slice "+s.Name+" deleted")
		case k == 2 && len(s.Endpoints) > 0:
			i := r.Intn(len(s.Endpoints))
			s.Endpoints = slices.Delete(s.Endpoints, i, i+1)
			done = append(done, "an endpoint removed from "+s.Name)
		case k == 3 && len(s.Endpoints) > 0:
			s.Endpoints[r.Intn(len(s.Endpoints))].Conditions = discoveryv1.EndpointConditions{Ready: ptr.To(false)}
			done = append(done, "an endpoint of "+s.Name+" not ready")
		case k == 4 && len(s.Endpoints) > 0:
			s.Endpoints[r.Intn(len(s.Endpoints))].Conditions = discoveryv1.EndpointConditions{Ready: ptr.To(false), Serving: ptr.To(true), Terminating: ptr.To(true)}
			done = append(done, "an endpoint of "+s.Name+" terminating")
		case k == 5:
			s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{refusedAddress(r, s.AddressType)}})
			done = append(done, "a refused address in "+s.Name)
		case k == 6 && len(s.Ports) > 0:
			s.Ports[r.Intn(len(s.Ports))].Port = ptr.To(int32(1 + r.Intn(65535)))
			done = append(done, "a port of "+s.Name+" renumbered")
		case k == 7 && r.Intn(4) == 0:
			for i := range endpoints.MaxEndpointsPerUpstream + 1 {
				s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{address(s.AddressType, 1+i)}})
			}
			done = append(done, s.Name+" past an upstream's bound")
		default:
			for range 1 + r.Intn(3) {
				s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{address(s.AddressType, 2000+r.Intn(50000))}})
			}
			done = append(done, "endpoints added to "+s.Name)
		}
	}
	return strings.Join(done, ", "), touched
}

func sortedSlices(in *graph.Input) []*discoveryv1.EndpointSlice {
	var out []*discoveryv1.EndpointSlice
	for _, s := range in.EndpointSlices {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b *discoveryv1.EndpointSlice) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	return out
}

// newSlice is an EndpointSlice of a Service's ports (a DNS name's when
// the dice say so), with one to three endpoints.
func newSlice(r *rand.Rand, svc *corev1.Service) *discoveryv1.EndpointSlice {
	t := []discoveryv1.AddressType{discoveryv1.AddressTypeIPv4, discoveryv1.AddressTypeIPv6, discoveryv1.AddressTypeFQDN}[r.Intn(3)]
	s := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: svc.Namespace, Name: svc.Name + "-new", Labels: map[string]string{discoveryv1.LabelServiceName: svc.Name}},
		AddressType: t,
	}
	for _, p := range svc.Spec.Ports {
		s.Ports = append(s.Ports, discoveryv1.EndpointPort{Name: ptr.To(p.Name), Port: ptr.To(int32(8000 + r.Intn(100))), Protocol: ptr.To(p.Protocol)})
	}
	for range 1 + r.Intn(3) {
		s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{address(t, 3000+r.Intn(50000))}})
	}
	return s
}

// address is the i-th address of a slice's type.
func address(t discoveryv1.AddressType, i int) string {
	switch t {
	case discoveryv1.AddressTypeIPv6:
		return fmt.Sprintf("fd00::%x", i)
	case discoveryv1.AddressTypeFQDN:
		return fmt.Sprintf("n%d.example.net", i)
	}
	return fmt.Sprintf("10.%d.%d.%d", 100+i>>16, i>>8&0xff, i&0xff)
}

// refusedAddress is an address Gatewall refuses, of a slice's type.
func refusedAddress(r *rand.Rand, t discoveryv1.AddressType) string {
	switch t {
	case discoveryv1.AddressTypeIPv6:
		return "::1"
	case discoveryv1.AddressTypeFQDN:
		return "-bad-.example.net"
	}
	return []string{"127.0.0.5", "169.254.1.1", "not-an-ip"}[r.Intn(3)]
}

// firstDifference shows where two texts start to differ.
func firstDifference(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			return fmt.Sprintf("line %d:\n- %s\n+ %s", i+1, al[i], bl[i])
		}
	}
	return fmt.Sprintf("lengths %d and %d", len(al), len(bl))
}
