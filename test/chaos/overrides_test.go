package main

import (
	"strings"
	"testing"
	"time"
)

// What a member gets is its own: the version, with the OverridePolicy's
// suffix on the labelled members of the Deployments it selects; while the
// policy is deleted, what the Works kept.
func TestAMemberGetsTheVersionWithTheOverridesThatApplyThere(t *testing.T) {
	s := initialState(map[string]string{"web-a": "v1", configMap: "c1"})
	labelled := with(s, func(s *state) { s.Override, s.Labeled = "-o1", map[string]bool{"member2": true} })
	deleted := with(labelled, func(s *state) {
		frozen := s.clone()
		s.PolicyExists, s.Frozen = false, &frozen
		s.Override = "-o2"
	})
	for _, tc := range []struct {
		name             string
		s                state
		template, member string
		want             string
	}{
		{"no OverridePolicy", with(s, func(s *state) { s.Labeled = map[string]bool{"member2": true} }), "web-a", "member2", "v1"},
		{"an OverridePolicy, the member not labelled", with(s, func(s *state) { s.Override = "-o1" }), "web-a", "member2", "v1"},
		{"the member labelled", labelled, "web-a", "member2", "v1-o1"},
		{"another member", labelled, "web-a", "member1", "v1"},
		{"a template it does not select", labelled, configMap, "member2", "c1"},
		{"the policy deleted: what the Works kept", deleted, "web-a", "member2", "v1-o1"},
	} {
		if got := tc.s.versionFor(tc.template, tc.member); got != tc.want {
			t.Errorf("%s: versionFor(%s, %s) = %q, want %q", tc.name, tc.template, tc.member, got, tc.want)
		}
	}
}

// An override edit that changes only the last stage's copy still walks
// the stages: every cluster waits at a new revision, so the last stage
// starts only once the promoted stage was promoted after the edit. A copy
// rendered from the OverridePolicy of one write and the Cluster labels of
// the next, written close together, is each part the user's word.
func TestCheckerJudgesAnOverrideEditByTheStages(t *testing.T) {
	members := []string{"member1", "member2", "member3"}
	var history []intent
	s := initialState(map[string]string{"web-a": "v1"})
	add := func(ms int, what string, change func(*state)) {
		s = with(s, change)
		history = append(history, intent{Step: len(history), Op: what, Sent: at(ms), Done: at(ms + 10), State: s})
	}
	add(0, "setup", func(*state) {})
	add(1000, "rollout-create", func(s *state) { s.Rollout = &rolloutState{Stages: chaosStages(members)} })
	add(2000, "cluster-override-label member3", func(s *state) { s.Labeled = map[string]bool{"member3": true} })
	add(5000, "override-policy tag+-o1", func(s *state) { s.Override = "-o1" })
	add(20000, "rollout-promote", func(s *state) { s.Rollout.Promoted = map[string]time.Time{promotedStage: at(20000)} })
	add(30000, "override-policy tag+-o2", func(s *state) { s.Override = "-o2" })
	add(30500, "cluster-override-label member2", func(s *state) { s.Labeled = map[string]bool{"member2": true, "member3": true} })
	store := func(member, v string, ms int) stored {
		return stored{Template: "web-a", Member: member, Version: v, Written: at(ms), Observed: at(ms + 50)}
	}
	c := &checker{intents: history, grace: 2 * time.Second, stores: []stored{store("member1", "v1", 100), store("member2", "v1", 100)}}
	v := stageVerdict(t, c, store("member3", "v1-o1", 6000), members, true)
	if !strings.Contains(v.Why, "the earlier stage 'approve' pauses") {
		t.Fatalf("the violation does not name the promoted stage: %s", v.Why)
	}
	stageVerdict(t, c, store("member3", "v1-o1", 21000), members, false)
	if v := c.check(store("member2", "v1-o1", 31000)); v != nil {
		t.Fatalf("the OverridePolicy before the relabel with the labels after it:\n%s", c.report(v, members, t0))
	}
	if v := c.check(store("member1", "v1-o1", 31000)); v == nil {
		t.Fatal("member1 was never labelled, yet its copy with the override passed")
	}
}
