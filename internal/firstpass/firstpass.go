// Package firstpass owns the signal that the binding controller has
// decided every binding once since this replica began to lead. The
// dispatcher applies nothing before it: the Works a previous leader left
// (or that no leader updated while none led) may be behind their template
// and its holds, and must be decided again before they reach a member.
package firstpass

import "sync"

// Signal is closed once every binding present when listing began was
// reconciled once (whatever the outcome: a binding that keeps failing
// reports its own error and does not hold the others back).
type Signal struct {
	mu         sync.Mutex
	reconciled map[string]bool
	pending    map[string]bool
	listed     bool
	done       chan struct{}
}

// New is a Signal not yet done.
func New() *Signal {
	return &Signal{reconciled: map[string]bool{}, done: make(chan struct{})}
}

// Done is closed once the first pass is over; nil Signal: already closed.
func (s *Signal) Done() <-chan struct{} {
	if s == nil {
		closed := make(chan struct{})
		close(closed)
		return closed
	}
	return s.done
}

// Reconciled records one pass over the binding key.
func (s *Signal) Reconciled(key string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.listed {
		s.reconciled[key] = true
		return
	}
	delete(s.pending, key)
	s.closeIfDone()
}

// Listed records the bindings present at the start; the signal closes once
// each was reconciled (at once when there are none).
func (s *Signal) Listed(keys []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.listed {
		return
	}
	s.listed = true
	s.pending = map[string]bool{}
	for _, k := range keys {
		if !s.reconciled[k] {
			s.pending[k] = true
		}
	}
	s.reconciled = nil
	s.closeIfDone()
}

func (s *Signal) closeIfDone() {
	if len(s.pending) == 0 {
		select {
		case <-s.done:
		default:
			close(s.done)
		}
	}
}
