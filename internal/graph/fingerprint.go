package graph

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewall/gatewall/api/plm"
)

// Fingerprint is a digest of everything in the input that translation
// reads: two inputs with the same fingerprint build the same graph and
// configuration. An object counts by its kind, key and UID, and by its
// resourceVersion (the API server gives every change a new one) or, for
// the kinds whose status Gatewall writes and translation never reads (nor
// their labels or annotations), by its generation, so that Gatewall's own
// status writes do not change the fingerprint. PLM statuses, bundles,
// unreadable objects and the part of a policy's status translation reads
// (statusRead) count by their content. ok is false when an object has
// no resourceVersion or generation (an input not read from the API server,
// whose content would not count).
func (in *Input) Fingerprint() (sum [sha256.Size]byte, ok bool) {
	sum, _, ok = in.Fingerprints()
	return sum, ok
}

// Fingerprints are the input's Fingerprint, and the digest of the same
// input without its EndpointSlices: two inputs with the same second digest
// differ in their endpoints at most (graph.RefreshEndpoints).
func (in *Input) Fingerprints() (sum, withoutSlices [sha256.Size]byte, ok bool) {
	f := &fingerprint{ok: true}
	objects(f, "GatewayClass", in.GatewayClasses, byGeneration)
	objects(f, "Gateway", in.Gateways, byGeneration)
	objects(f, "ListenerSet", in.ListenerSets, byGeneration)
	for kind, routes := range in.Routes {
		objects(f, kind, routes, byGeneration)
	}
	objects(f, KindBackendTLSPolicy, in.BackendTLSPolicies, byGeneration)
	objects(f, "NginxProxy", in.NginxProxies, byGeneration)
	for kind, ps := range in.Policies {
		objects(f, kind, ps, byGeneration)
	}
	// Gatewall writes filters' statuses and translation never reads them.
	for kind, fs := range in.Filters {
		objects(f, kind, fs, byGeneration)
	}
	// Translation reads a WAFGatewayBindingPolicy's records of the bundles
	// in force (statusRead), Namespaces' and EndpointSlices' labels, and
	// the content of the others.
	for kind, read := range statusRead {
		for k, p := range in.Policies[kind] {
			f.add("%s status\x00%s\x00%s", kind, k, statusDigest(read, p))
		}
	}
	objects(f, "ReferenceGrant", in.ReferenceGrants, byResourceVersion)
	objects(f, "Namespace", in.Namespaces, byResourceVersion)
	objects(f, "Service", in.Services, byResourceVersion)
	objects(f, sliceKind, in.EndpointSlices, byResourceVersion)
	objects(f, "Secret", in.Secrets, byResourceVersion)
	objects(f, "ConfigMap", in.ConfigMaps, byResourceVersion)
	f.plm("APPolicy", in.APPolicies)
	f.plm("APLogConf", in.APLogConfs)
	for sha, b := range in.Bundles {
		f.add("Bundle\x00%s\x00%d\x00%s\x00%s\x00%x\x00%s", sha, b.State, b.Reason, b.Message, sha256.Sum256(b.Data),
			b.FetchedAt.UTC().Format(time.RFC3339Nano))
	}
	for ref, why := range in.unreadable {
		f.add("Unreadable\x00%s\x00%s\x00%s", ref.Kind, ref.Key, why)
	}
	f.add("Input\x00%s\x00%s\x00%s\x00%s\x00%s\x00%t", in.ControllerName, in.PLMGroup, in.WAFModule, in.PLMScope.Bucket, in.PLMScope.Prefix, in.Snippets)
	slices.Sort(f.lines)
	all, rest := sha256.New(), sha256.New()
	for _, l := range f.lines {
		all.Write([]byte(l))
		all.Write([]byte{'\n'})
		if !strings.HasPrefix(l, sliceKind+"\x00") {
			rest.Write([]byte(l))
			rest.Write([]byte{'\n'})
		}
	}
	copy(sum[:], all.Sum(nil))
	copy(withoutSlices[:], rest.Sum(nil))
	return sum, withoutSlices, f.ok
}

// sliceKind begins an EndpointSlice's line of a fingerprint.
const sliceKind = "EndpointSlice"

type fingerprint struct {
	lines []string
	ok    bool
}

func (f *fingerprint) add(format string, args ...any) {
	f.lines = append(f.lines, fmt.Sprintf(format, args...))
}

func (f *fingerprint) plm(kind string, m map[types.NamespacedName]*plm.Status) {
	for k, st := range m {
		b, err := json.Marshal(st)
		if err != nil {
			f.ok = false
		}
		f.add("%s\x00%s\x00%s", kind, k, b)
	}
}

// What of an object counts in the fingerprint.
const (
	byResourceVersion = false
	byGeneration      = true
)

func objects[K comparable, O metav1.Object](f *fingerprint, kind string, m map[K]O, generation bool) {
	for _, o := range m {
		version := o.GetResourceVersion()
		if generation {
			version = "g" + strconv.FormatInt(o.GetGeneration(), 10)
			if o.GetGeneration() == 0 {
				version = ""
			}
		}
		if version == "" {
			f.ok = false
		}
		// Concatenated, not formatted: at 5,000 routes and their Services
		// and slices, every reconcile writes 15,000 of these lines.
		f.lines = append(f.lines, kind+"\x00"+o.GetNamespace()+"/"+o.GetName()+"\x00"+string(o.GetUID())+"\x00"+version)
	}
}
