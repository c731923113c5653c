// Package firstpass owns the signal that the binding controller has
// decided every binding once since this replica began to lead. The
// dispatcher applies nothing before it: the Works a previous leader left
// (or that no leader updated while none led) may be behind their template
// and its holds, and must be decided again before they reach a member.
package firstpass

import (
	"slices"
	"sync"
)

// Signal is closed once every binding present when listing began was
// decided once: a pass that stopped before it decided (a cache behind, a
// read that failed) does not count. A binding that keeps failing reports
// its own error; GiveUp ends the wait for it, so it does not hold the
// others back for ever.
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

// Reconciled records that a pass decided the binding key.
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

// GiveUp closes the signal although some bindings were not decided yet,
// and returns those, sorted; none once it is done.
func (s *Signal) GiveUp() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var pending []string
	select {
	case <-s.done:
		return nil
	default:
	}
	for k := range s.pending {
		pending = append(pending, k)
	}
	slices.Sort(pending)
	s.pending = map[string]bool{}
	s.listed = true
	close(s.done)
	return pending
}
