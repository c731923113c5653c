package main

import (
	"slices"
	"testing"
)

// A Freeze holds the members it names, every member when it names none,
// whatever the policy says, and while the policy is deleted too.
func TestAFreezeHoldsWhatItNamesWhateverThePolicySays(t *testing.T) {
	s := initialState(map[string]string{"web-a": "v1"})
	all := with(s, func(s *state) { s.Freezing = true })
	two := with(s, func(s *state) { s.Freezing, s.Freeze = true, map[string]bool{"member2": true} })
	deleted := with(two, func(s *state) {
		frozen := s.clone()
		s.PolicyExists, s.Frozen = false, &frozen
	})
	for _, tc := range []struct {
		name   string
		s      state
		member string
		held   bool
	}{
		{"no freeze", s, "member2", false},
		{"every member", all, "member1", true},
		{"a member it names", two, "member2", true},
		{"a member it does not name", two, "member1", false},
		{"the policy deleted", deleted, "member2", true},
	} {
		holds, _ := tc.s.decide("web-a", tc.member, t0, 0)
		if got := slices.Contains(holds, "frozen"); got != tc.held {
			t.Errorf("%s: %s held by a freeze = %v (holds %v), want %v", tc.name, tc.member, got, holds, tc.held)
		}
	}
}
