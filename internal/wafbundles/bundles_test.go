package wafbundles

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	plmapi "github.com/gatewall/gatewall/api/plm"
	appprotectv1 "github.com/gatewall/gatewall/api/plm/appprotect/v1"
	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/plm"
)

func shaHex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// wafInput is a snapshot with one WAF policy on APPolicy default/base, whose
// status PLM reports as bundle sha at loc, processed at datetime; inForce,
// when set, is the bundle the policy's status records as in force.
func wafInput(sha, loc, datetime string, inForce *v1alpha1.BundleReferenceStatus) *graph.Input {
	in := graph.NewInput("gateway.nginx.org/nginx-gateway-controller")
	in.PLMGroup = plmapi.GroupAppProtect
	in.Add(&appprotectv1.APPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "base"}, Status: plmapi.Status{
		Bundle:     &plmapi.Bundle{State: plmapi.BundleStateReady, Location: loc, Sha256: sha},
		Processing: &plmapi.Processing{Datetime: datetime},
	}})
	in.Add(&v1alpha1.WAFGatewayBindingPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "protect"},
		Spec: v1alpha1.WAFGatewayBindingPolicySpec{
			TargetRefs:     []gatewayv1.LocalPolicyTargetReference{{Group: gatewayv1.GroupName, Kind: "Gateway", Name: "gw"}},
			APPolicySource: v1alpha1.PLMObjectReference{Name: "base"},
		},
		Status: v1alpha1.WAFGatewayBindingPolicyStatus{APPolicyStatus: inForce},
	})
	return in
}

// recordingFetcher records what Declare asks of a fetcher.
type recordingFetcher struct {
	wants  [][]plm.BundleRef
	prunes [][]string
}

func (f *recordingFetcher) Want(refs []plm.BundleRef) { f.wants = append(f.wants, refs) }
func (f *recordingFetcher) Result(string) plm.Result {
	return plm.Result{State: plm.Pending, Message: "waiting for the first fetch"}
}
func (f *recordingFetcher) Prune(keep []string) (int, error) {
	f.prunes = append(f.prunes, slices.Sorted(slices.Values(keep)))
	return 0, nil
}

// TestDeclareWantsPLMRevision: the fetcher learns PLM's processing datetime
// with each bundle, so a new one (PLM processed the object again, same
// location and sha256) can retry an IntegrityError.
func TestDeclareWantsPLMRevision(t *testing.T) {
	f := &recordingFetcher{}
	b := newBundles(f, clocktesting.NewFakeClock(time.Now()), time.Hour, logr.Discard())
	sha := shaHex([]byte("bundle"))
	for _, datetime := range []string{"2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z"} {
		b.Declare(wafInput(sha, "s3://plm/base.tgz", datetime, nil))
	}
	want := [][]plm.BundleRef{
		{{Location: "s3://plm/base.tgz", Sha256: sha, Revision: "2026-01-01T00:00:00Z"}},
		{{Location: "s3://plm/base.tgz", Sha256: sha, Revision: "2026-01-02T00:00:00Z"}},
	}
	if !slices.EqualFunc(f.wants, want, slices.Equal) {
		t.Errorf("Want calls = %+v; want %+v", f.wants, want)
	}
}

// TestDeclarePrunesAfterGrace: a bundle no longer wanted leaves the cache only
// once it has not been wanted for the grace period, and nothing is pruned
// in the grace period after start.
func TestDeclarePrunesAfterGrace(t *testing.T) {
	const grace = time.Hour
	clock := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	f := &recordingFetcher{}
	b := newBundles(f, clock, grace, logr.Discard())
	v1, v2 := shaHex([]byte("v1")), shaHex([]byte("v2"))

	b.Declare(wafInput(v1, "s3://plm/v1.tgz", "1", nil))
	clock.Step(grace / 2)
	b.Declare(wafInput(v1, "s3://plm/v1.tgz", "1", nil))
	clock.Step(time.Second)
	b.Declare(wafInput(v2, "s3://plm/v2.tgz", "2", nil)) // v1 no longer wanted
	if len(f.prunes) != 0 {
		t.Fatalf("pruned during the grace period after start: %v", f.prunes)
	}
	clock.Step(grace / 2) // past start's grace; v1 was wanted half a grace ago
	b.Declare(wafInput(v2, "s3://plm/v2.tgz", "2", nil))
	if got := f.prunes; len(got) != 1 || !slices.Equal(got[0], slices.Sorted(slices.Values([]string{v1, v2}))) {
		t.Fatalf("Prune calls = %v; want one keeping v1 (within its grace) and v2", got)
	}
	clock.Step(pruneEvery / 2)
	b.Declare(wafInput(v2, "s3://plm/v2.tgz", "2", nil))
	if len(f.prunes) != 1 {
		t.Fatalf("pruned again within %s: %v", pruneEvery, f.prunes)
	}
	clock.Step(grace / 2)
	b.Declare(wafInput(v2, "s3://plm/v2.tgz", "2", nil))
	if got := f.prunes; len(got) != 2 || !slices.Equal(got[1], []string{v2}) {
		t.Fatalf("Prune calls = %v; want the second keeping v2 only", got)
	}
}

// TestBundleInForceSurvivesRestartAndPrune: with a real fetcher's cache, a
// manager that restarts while storage is unreachable still has the bundle
// its policy's status records as in force (PLM now reports another, not
// fetched), however long storage stays away; bundles nobody refers to are
// pruned once the grace period is over.
func TestBundleInForceSurvivesRestartAndPrune(t *testing.T) {
	dir := t.TempDir()
	inForce, orphan := []byte("bundle in force"), []byte("bundle nobody refers to")
	for _, data := range [][]byte{inForce, orphan} {
		if err := os.WriteFile(filepath.Join(dir, shaHex(data)), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// The restarted manager: a fetcher on the same cache, never run (storage unreachable).
	f, err := plm.New(plm.Options{Endpoint: "http://127.0.0.1:1", CacheDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	const grace = time.Hour
	clock := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	b := newBundles(f, clock, grace, logr.Discard())
	record := &v1alpha1.BundleReferenceStatus{Name: "base", Namespace: "default",
		Bundle: v1alpha1.BundleSummary{State: "ready", Location: "s3://plm/v1.tgz", Sha256: shaHex(inForce)}}
	update := shaHex([]byte("update PLM compiled"))
	for i := 0; i < 4; i++ {
		in := wafInput(update, "s3://plm/v2.tgz", "2", record)
		b.Declare(in)
		b.Fill(in)
		if got := in.Bundles[shaHex(inForce)]; got.State != graph.BundleFetched || string(got.Data) != string(inForce) {
			t.Fatalf("after %s: the bundle in force is %+v; want it fetched from the cache", time.Duration(i)*grace, got)
		}
		clock.Step(grace)
	}
	if _, err := os.Stat(filepath.Join(dir, shaHex(inForce))); err != nil {
		t.Errorf("the bundle in force left the cache: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, shaHex(orphan))); !os.IsNotExist(err) {
		t.Errorf("the bundle nobody refers to is still cached (%v)", err)
	}
}

// TestDeclareListedDeclaresInListingOrder: a snapshot listed while another
// caller declares waits its turn, so an older listing is never declared
// after a newer one (the fetcher would forget the newer one's failures).
func TestDeclareListedDeclaresInListingOrder(t *testing.T) {
	f := &recordingFetcher{}
	b := newBundles(f, clocktesting.NewFakePassiveClock(time.Now()), time.Hour, logr.Discard())
	older := wafInput(shaHex([]byte("old")), "s3://plm/old.tgz", "1", nil)
	newer := wafInput(shaHex([]byte("new")), "s3://plm/new.tgz", "2", nil)

	listing, release, done := make(chan struct{}), make(chan struct{}), make(chan error, 2)
	go func() {
		done <- b.DeclareListed(older, func() error { close(listing); <-release; return nil })
	}()
	<-listing
	go func() { done <- b.DeclareListed(newer, func() error { return nil }) }()
	// Without the ordering, the newer listing is declared during this pause.
	time.Sleep(100 * time.Millisecond)
	close(release)
	for range 2 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if len(f.wants) != 2 {
		t.Fatalf("%d declarations, want 2", len(f.wants))
	}
	if got := f.wants[1][0].Location; got != "s3://plm/new.tgz" {
		t.Errorf("the last declaration wants %s; the newer listing must be declared last", got)
	}
}
