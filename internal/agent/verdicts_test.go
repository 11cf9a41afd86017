package agent

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// TestVerdicts: acceptances are reused for acceptedTTL, refusals for the
// shorter refusedTTL; a token's newer verdict replaces the older; a flood
// of refusals never evicts acceptances, and neither cache grows past
// maxVerdicts.
func TestVerdicts(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	v := newVerdicts(func() time.Time { return now })
	sum := func(s string) [32]byte { return sha256.Sum256([]byte(s)) }
	id := Identity{Pod: types.NamespacedName{Namespace: "ns", Name: "gw-0"}, Gateway: Key{Namespace: "ns", Name: "gw"}}
	refused := errors.New("token refused: unknown token")

	v.accept(sum("good"), id)
	v.refuse(sum("bad"), refused)
	check := func(when, token string, wantID Identity, wantErr error, wantOK bool) {
		t.Helper()
		got, err, ok := v.get(sum(token))
		if got != wantID || !errors.Is(err, wantErr) || ok != wantOK {
			t.Fatalf("%s, %s: got %+v %v %v; want %+v %v %v", when, token, got, err, ok, wantID, wantErr, wantOK)
		}
	}
	check("at once", "good", id, nil, true)
	check("at once", "bad", Identity{}, refused, true)
	check("at once", "never seen", Identity{}, nil, false)

	now = now.Add(refusedTTL)
	check("after refusedTTL", "good", id, nil, true)
	check("after refusedTTL", "bad", Identity{}, nil, false)
	now = now.Add(acceptedTTL - refusedTTL)
	check("after acceptedTTL", "good", Identity{}, nil, false)

	v.accept(sum("flip"), id)
	v.refuse(sum("flip"), refused)
	check("refused after accepted", "flip", Identity{}, refused, true)
	v.accept(sum("flip"), id)
	check("accepted after refused", "flip", id, nil, true)

	for i := range 3 * maxVerdicts {
		v.refuse(sum(fmt.Sprint("flood-", i)), refused)
	}
	check("after a flood of refusals", "flip", id, nil, true)
	if len(v.refused) > maxVerdicts || len(v.accepted) > maxVerdicts {
		t.Fatalf("caches hold %d refusals and %d acceptances, more than %d", len(v.refused), len(v.accepted), maxVerdicts)
	}
}
