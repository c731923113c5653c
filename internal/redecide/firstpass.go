package redecide

import (
	"slices"
	"sync"
)

// FirstPass closes (Done) once every binding present when listing began was
// decided once: a pass that stopped before it decided (a cache behind, a
// read that failed) does not count. A binding that keeps failing reports
// its own error; GiveUp ends the wait for it, so it does not hold the
// others back for ever.
type FirstPass struct {
	mu         sync.Mutex
	reconciled map[string]bool
	pending    map[string]bool
	listed     bool
	done       chan struct{}
}

// NewFirstPass is a FirstPass not yet done.
func NewFirstPass() *FirstPass {
	return &FirstPass{reconciled: map[string]bool{}, done: make(chan struct{})}
}

// Done is closed once the first pass is over; nil FirstPass: already closed.
func (s *FirstPass) Done() <-chan struct{} {
	if s == nil {
		closed := make(chan struct{})
		close(closed)
		return closed
	}
	return s.done
}

// Reconciled records that a pass decided the binding key.
func (s *FirstPass) Reconciled(key string) {
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
func (s *FirstPass) Listed(keys []string) {
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

func (s *FirstPass) closeIfDone() {
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
func (s *FirstPass) GiveUp() []string {
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
