package manager

import (
	"context"
	"crypto/rand"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gatewall/gatewall/internal/podseal"
)

// agentTLSSealKey is the key of the agent TLS Secret that holds the pod
// seal key: the manager seals each data plane's pod template with it, and
// the agent server checks with it that a pod is one the manager rendered
// for its Gateway (package podseal). Whoever holds it can seal any pod
// spec: it stays in the manager's namespace, beside the agent server's
// private key, and is never handed to a data plane.
//
// Every replica reads it at start, and the first to find none adds one
// (the others read it back). To replace it, remove it from the Secret and
// restart the manager: every data plane rolls to a template sealed with
// the new key, and until it has, its pods are refused (they keep serving
// their configuration; new ones do not reach them).
const agentTLSSealKey = "pod-seal.key"

// newSealKey makes a pod seal key.
func newSealKey() []byte {
	key := make([]byte, podseal.KeySize)
	_, _ = rand.Read(key) // crypto/rand.Read never fails (Go 1.24+)
	return key
}

// ensureSealKey returns the pod seal key kept in the agent TLS Secret s,
// adding candidate when the Secret has none. Replicas starting together
// each propose theirs: the Secret's resourceVersion lets one win, and the
// others read its key back.
func ensureSealKey(ctx context.Context, c client.Client, s *corev1.Secret, candidate []byte) ([]byte, error) {
	for range 5 {
		if key, ok := s.Data[agentTLSSealKey]; ok {
			if len(key) != podseal.KeySize {
				return nil, fmt.Errorf("the agent TLS Secret %s/%s holds a %s of %d bytes, want %d: remove it, and the manager makes a new one",
					s.Namespace, s.Name, agentTLSSealKey, len(key), podseal.KeySize)
			}
			return key, nil
		}
		patch := client.MergeFromWithOptions(s.DeepCopy(), client.MergeFromWithOptimisticLock{})
		if s.Data == nil {
			s.Data = map[string][]byte{}
		}
		s.Data[agentTLSSealKey] = candidate
		err := c.Patch(ctx, s, patch)
		if err == nil {
			return candidate, nil
		}
		if !apierrors.IsConflict(err) {
			return nil, fmt.Errorf("adding the pod seal key to the agent TLS Secret %s/%s: %w", s.Namespace, s.Name, err)
		}
		// Read into a new object: decoding into s would merge its Data,
		// the candidate included, with the Secret's.
		fresh := &corev1.Secret{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(s), fresh); err != nil {
			return nil, fmt.Errorf("reading the agent TLS Secret %s/%s: %w", s.Namespace, s.Name, err)
		}
		s = fresh
	}
	return nil, fmt.Errorf("the agent TLS Secret %s/%s keeps changing: no pod seal key could be added", s.Namespace, s.Name)
}
