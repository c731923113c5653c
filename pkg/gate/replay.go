package gate

import (
	"sync"
	"time"
)

// seenSignatures remembers the signatures of accepted webhook calls until
// their timestamps are too old to pass, so each signed call is accepted
// once. The zero value is ready.
type seenSignatures struct {
	mu sync.Mutex
	// until is when each signature may be forgotten: its call's timestamp
	// plus MaxSkew, after which the timestamp alone refuses it.
	until map[string]time.Time
	// pruned is when the signatures past their time were last dropped.
	pruned time.Time
}

// pruneEvery spaces the walks over the signatures remembered: a signature
// kept a little past its time costs nothing but memory (its call would be
// refused as stale anyway), and the bound makes room when needed.
const pruneEvery = time.Minute

type claimResult int

const (
	claimOK claimResult = iota
	claimReplayed
	claimFull
)

// claim records signature as used until forgetAt: claimReplayed when it is
// used already, claimFull when MaxSeenSignatures are remembered and none can
// be forgotten yet.
func (s *seenSignatures) claim(signature string, forgetAt, now time.Time) claimResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.until == nil {
		s.until = map[string]time.Time{}
	}
	if len(s.until) >= MaxSeenSignatures || now.Sub(s.pruned) >= pruneEvery {
		for sig, until := range s.until {
			if !until.After(now) {
				delete(s.until, sig)
			}
		}
		s.pruned = now
	}
	if _, ok := s.until[signature]; ok {
		return claimReplayed
	}
	if len(s.until) >= MaxSeenSignatures {
		return claimFull
	}
	s.until[signature] = forgetAt
	return claimOK
}

// forget takes back a claim whose call did nothing; "" is no claim.
func (s *seenSignatures) forget(signature string) {
	if signature == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.until, signature)
}
