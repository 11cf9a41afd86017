package coalesce

import "sync"

// Keys is a set of pending keys: a key added any number of times before
// Take is taken once. The zero value is ready to use; it is safe for
// concurrent use.
type Keys[K comparable] struct {
	mu      sync.Mutex
	pending map[K]struct{}
}

// Add records keys.
func (s *Keys[K]) Add(keys ...K) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.addLocked(keys)
}

func (s *Keys[K]) addLocked(keys []K) {
	if s.pending == nil {
		s.pending = make(map[K]struct{}, len(keys))
	}
	for _, k := range keys {
		s.pending[k] = struct{}{}
	}
}

// Take returns the pending keys, in no order, and clears them.
func (s *Keys[K]) Take() []K {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.takeLocked()
}

func (s *Keys[K]) takeLocked() []K {
	keys := make([]K, 0, len(s.pending))
	for k := range s.pending {
		keys = append(keys, k)
	}
	clear(s.pending)
	return keys
}
