package controller

import (
	"fmt"
	"os"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/plm"
	"github.com/gatewall/gatewall/internal/policy"
)

// BundleFetcher is what the controllers need of the PLM bundle fetcher.
type BundleFetcher interface {
	Want(refs []plm.BundleRef)
	Result(sha256 string) plm.Result
}

// Bundles brings fetched WAF bundles into snapshots. Bundles are immutable
// (named by sha256), so their bytes are read once and kept while wanted.
type Bundles struct {
	fetcher BundleFetcher
	mu      sync.Mutex
	data    map[string][]byte
}

// NewBundles adapts a fetcher.
func NewBundles(f BundleFetcher) *Bundles {
	return &Bundles{fetcher: f, data: map[string][]byte{}}
}

// Sync declares every bundle the snapshot's WAF policies need (the full set:
// the snapshot holds every WAF policy and PLM object) and fills the
// snapshot's Bundles with what the fetcher has of each.
func (b *Bundles) Sync(in *graph.Input) {
	wanted := policy.WantedBundles(in)
	refs := make([]plm.BundleRef, 0, len(wanted))
	keep := map[string]bool{}
	for _, r := range wanted {
		refs = append(refs, plm.BundleRef{Location: r.Location, Sha256: r.Sha256})
		keep[r.Sha256] = true
	}
	b.fetcher.Want(refs)
	b.mu.Lock()
	defer b.mu.Unlock()
	for sha := range b.data {
		if !keep[sha] {
			delete(b.data, sha)
		}
	}
	for sha := range keep {
		in.Bundles[sha] = b.lookupLocked(sha)
	}
}

func (b *Bundles) lookupLocked(sha string) graph.Bundle {
	r := b.fetcher.Result(sha)
	switch r.State {
	case plm.Fetched:
		data, ok := b.data[sha]
		if !ok {
			var err error
			if data, err = os.ReadFile(r.Path); err != nil {
				return graph.Bundle{State: graph.BundleFailed, Reason: string(plm.ReasonFetchError), Message: fmt.Sprintf("reading the cached bundle: %v", err)}
			}
			b.data[sha] = data
		}
		return graph.Bundle{State: graph.BundleFetched, Data: data, FetchedAt: metav1.NewTime(r.FetchedAt)}
	case plm.Failed:
		return graph.Bundle{State: graph.BundleFailed, Reason: failureReason(r.Reason), Message: r.Message}
	}
	return graph.Bundle{State: graph.BundlePending, Message: r.Message}
}

// failureReason maps the fetcher's reasons to the policy's Programmed reasons.
func failureReason(r plm.Reason) string {
	if r == plm.ReasonIntegrityError {
		return string(plm.ReasonIntegrityError)
	}
	return string(plm.ReasonFetchError)
}

// NoStorage is the fetcher of a manager started without --plm-storage-url:
// every bundle fails with a message saying so.
type NoStorage struct{}

// Want does nothing: there is nowhere to fetch from.
func (NoStorage) Want([]plm.BundleRef) {}

// Result reports the missing configuration.
func (NoStorage) Result(string) plm.Result {
	return plm.Result{State: plm.Failed, Reason: plm.ReasonFetchError, Message: "no PLM storage is configured: start Gatewall with --plm-storage-url"}
}
