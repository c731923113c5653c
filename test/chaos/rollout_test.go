package main

import (
	"math/rand"
	"strings"
	"testing"
	"time"
)

// A version reaches a cluster of a later stage only once every placed
// cluster of the earlier stages stored it, their soak passed and, for a
// stage that pauses, after a promote; a paused Rollout releases nothing
// new; the first revision and a deleted Rollout hold nothing.
func TestCheckerJudgesStoresAgainstTheRolloutsStages(t *testing.T) {
	members := []string{"member1", "member2", "member3"}
	version := func(v string) func(*state) {
		return func(s *state) {
			ts := s.Templates["web"]
			ts.Version = v
			s.Templates["web"] = ts
		}
	}
	promoted := func(ms int) func(*state) {
		return func(s *state) {
			if s.Rollout.Promoted == nil {
				s.Rollout.Promoted = map[string]time.Time{}
			}
			s.Rollout.Promoted[promotedStage] = at(ms)
		}
	}
	// History: the Rollout created over v1 (1 s); v2 (2 s); stage
	// 'approve' promoted (8 s); paused (20 s); v3 while paused (21 s);
	// promoted (25 s); resumed (30 s); member1 suspended (40 s); v4 (41 s); member1 left
	// out of the placement (50 s); promoted again (52 s); v6 (55 s);
	// member1 resumed and put back (56 s); the Rollout deleted (60 s);
	// v5 (61 s).
	var history []intent
	s := initialState(map[string]string{"web": "v1"})
	add := func(ms int, what string, change func(*state)) {
		s = with(s, change)
		history = append(history, intent{Step: len(history), Op: what, Sent: at(ms), Done: at(ms + 10), State: s})
	}
	add(0, "setup", func(*state) {})
	add(1000, "rollout-create", func(s *state) { s.Rollout = &rolloutState{Stages: chaosStages(members)} })
	add(2000, "v2", version("v2"))
	add(8000, "rollout-promote", promoted(8000))
	add(20000, "rollout pause", func(s *state) { s.Rollout.Paused = true })
	add(21000, "v3", version("v3"))
	add(25000, "rollout-promote", promoted(25000))
	add(30000, "rollout resume", func(s *state) { s.Rollout.Paused = false })
	add(40000, "suspend member1", func(s *state) { s.SuspendOn = map[string]bool{"member1": true} })
	add(41000, "v4", version("v4"))
	add(50000, "member1 left out", func(s *state) { s.Unplaced = map[string]bool{"member1": true} })
	add(52000, "rollout-promote", promoted(52000))
	add(55000, "v6", version("v6"))
	add(56000, "resume member1, put it back", func(s *state) { s.SuspendOn, s.Unplaced = nil, nil })
	add(60000, "rollout-delete", func(s *state) { s.Rollout = nil })
	add(61000, "v5", version("v5"))

	store := func(member, v string, ms int) stored {
		return stored{Template: "web", Member: member, Version: v, Written: at(ms), Observed: at(ms + 50)}
	}
	c := &checker{intents: history, grace: 2 * time.Second, stores: []stored{
		store("member1", "v2", 3000), store("member2", "v2", 9000), store("member1", "v3", 30500), store("member2", "v4", 53000),
		store("member1", "v6", 56500)}}
	for _, tc := range []struct {
		name  string
		store stored
		// stage: the Rollout had not released it (the holds had).
		stage bool
	}{
		{"the first revision, on the last stage at once", store("member3", "v1", 1500), false},
		{"a stage-2 cluster before stage 1 stored the version", store("member2", "v2", 2500), true},
		{"a stage-2 cluster after stage 1 soaked, but before its promote", store("member2", "v2", 6000), true},
		{"a stage-2 cluster after stage 1 soaked and its promote", store("member2", "v2", 8500), false},
		{"the last stage before stage 2 stored it", store("member3", "v2", 8700), true},
		{"the last stage after stage 2 stored it", store("member3", "v2", 9500), false},
		{"a release decided before the pause, stored after it", store("member3", "v2", 20500), false},
		{"the first stage, a version written while paused", store("member1", "v3", 22000), true},
		{"the first stage, once resumed", store("member1", "v3", 30500), false},
		{"a promoted stage-2 cluster before stage 1 stored the version", store("member2", "v3", 30200), true},
		{"a promoted stage-2 cluster before stage 1 soaked", store("member2", "v3", 31500), true},
		{"a promoted stage-2 cluster once stage 1 soaked", store("member2", "v3", 33000), false},
		{"the last stage, while stage 1 is held by a suspension (the rollout waits)", store("member3", "v4", 45000), true},
		{"the last stage, stage 1 left out of the placement and stage 2 promoted and stored", store("member3", "v4", 54000), false},
		{"a stage-2 cluster after stage 1 stored and soaked, promoted only before the version was written", store("member2", "v6", 59000), true},
		{"anywhere once the Rollout is deleted", store("member3", "v5", 61500), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := stageVerdict(t, c, tc.store, members, tc.stage)
			if v != nil {
				if r := c.report(v, members, t0); !strings.Contains(r, "no Rollout the user wrote had released") || !strings.Contains(r, "| rollout ") {
					t.Fatalf("the report does not say the Rollout held it:\n%s", r)
				}
			}
		})
	}
}

// The version a Rollout's first revision takes in is released to every
// cluster at once and stays so: a cluster held by something else meanwhile
// gets it once that lifts, whatever its stage.
func TestCheckerReleasesTheFirstRevisionEverywhere(t *testing.T) {
	members := []string{"member1", "member2", "member3"}
	s0 := initialState(map[string]string{"web": "v1"})
	s1 := with(s0, func(s *state) { s.SuspendOn = map[string]bool{"member3": true} })
	s2 := with(s1, func(s *state) { s.Rollout = &rolloutState{Stages: chaosStages(members)} })
	s3 := with(s2, func(s *state) { s.SuspendOn = nil })
	c := &checker{grace: 2 * time.Second, intents: []intent{
		{Step: 0, Op: "setup", Sent: at(0), Done: at(10), State: s0},
		{Step: 1, Op: "suspend member3", Sent: at(1000), Done: at(1010), State: s1},
		{Step: 2, Op: "rollout-create", Sent: at(2000), Done: at(2010), State: s2},
		{Step: 3, Op: "resume member3", Sent: at(9000), Done: at(9010), State: s3},
	}}
	judge(t, c, "web", []storeCase{
		{"the last stage gets the first revision once it is resumed", stored{Member: "member3", Version: "v1", Written: at(10000), Observed: at(10100)}, false},
	})
}

// Rollout operations come only while the policy exists: a create without
// a Rollout, a pause (or resume), a promote or a delete with one.
func TestRolloutOperationsAreChosenOnlyWhereTheyCanBeWritten(t *testing.T) {
	counts := map[string]int{}
	members := []string{"member1", "member2", "member3"}
	for seed := int64(1); seed <= 20; seed++ {
		g := &generator{rng: rand.New(rand.NewSource(seed)), seed: seed, members: members, gates: true, deletions: true, placement: true, rollouts: true}
		s := initialState(map[string]string{"web-a": "v0", "web-b": "v0", configMap: "v0"})
		for range 300 {
			o, n := g.next(s)
			switch o.Kind {
			case opRolloutCreate:
				if s.Rollout != nil || n.Rollout == nil || len(n.Rollout.Stages) != 2 || n.Rollout.Paused {
					t.Fatalf("seed %d: %s with %+v left %+v", seed, o, s.Rollout, n.Rollout)
				}
			case opRolloutPause:
				if s.Rollout == nil || n.Rollout.Paused == s.Rollout.Paused {
					t.Fatalf("seed %d: %s with %+v left %+v", seed, o, s.Rollout, n.Rollout)
				}
			case opRolloutPromote:
				if s.Rollout == nil || o.Stage != promotedStage {
					t.Fatalf("seed %d: %s with %+v", seed, o, s.Rollout)
				}
			case opRolloutDelete:
				if s.Rollout == nil || n.Rollout != nil {
					t.Fatalf("seed %d: %s with %+v left %+v", seed, o, s.Rollout, n.Rollout)
				}
			}
			if strings.HasPrefix(o.Kind, "rollout-") && !s.PolicyExists {
				t.Fatalf("seed %d: %s while the policy is deleted", seed, o)
			}
			counts[o.Kind]++
			s = n
		}
	}
	for _, k := range []string{opRolloutCreate, opRolloutPause, opRolloutPromote, opRolloutDelete} {
		if counts[k] == 0 {
			t.Errorf("%s never chosen in 6000 operations", k)
		}
	}
}

// A stage with gates starts only while they are open: a version reaches
// its cluster only if the gate was open at some instant between the
// version's first write and the store; a deleted gate holds.
func TestCheckerJudgesAStageByItsGates(t *testing.T) {
	members := []string{"member1", "member2", "member3"}
	var history []intent
	s := initialState(map[string]string{"web": "v1"})
	add := func(ms int, what string, change func(*state)) {
		s = with(s, change)
		history = append(history, intent{Step: len(history), Op: what, Sent: at(ms), Done: at(ms + 10), State: s})
	}
	version := func(v string) func(*state) {
		return func(s *state) { ts := s.Templates["web"]; ts.Version = v; s.Templates["web"] = ts }
	}
	promote := func(ms int) func(*state) {
		return func(s *state) { s.Rollout.Promoted = map[string]time.Time{promotedStage: at(ms)} }
	}
	// t0 is on a minute: the scheduled gate is open in [0, 20 s) and
	// [60 s, 80 s) by its schedule.
	add(0, "setup", func(*state) {})
	add(1000, "gate-create scheduled", func(s *state) { s.Gates = map[string]gateState{stageGate: {Scheduled: true}} })
	add(1500, "rollout-create", func(s *state) { s.Rollout = &rolloutState{Stages: gatedStages(members)} })
	add(25000, "v2", version("v2"))
	add(30000, "rollout-promote", promote(30000))
	add(40000, "gate-open scheduled", func(s *state) { s.Gates[stageGate] = s.Gates[stageGate].request(true, at(40000), 0) })
	add(45000, "gate-delete scheduled", func(s *state) { delete(s.Gates, stageGate) })
	add(46000, "v3", version("v3"))
	add(50000, "rollout-promote", promote(50000))
	store := func(member, v string, ms int) stored {
		return stored{Template: "web", Member: member, Version: v, Written: at(ms), Observed: at(ms + 50)}
	}
	c := &checker{intents: history, grace: 2 * time.Second, stores: []stored{store("member1", "v2", 27500), store("member1", "v3", 46500)}}
	for _, tc := range []struct {
		name  string
		store stored
		stage bool
	}{
		{"promoted, but its gate closed since the version was written", store("member2", "v2", 31000), true},
		{"promoted, and its gate opened by a request", store("member2", "v2", 40500), false},
		{"promoted, the gate's schedule window come, but the gate deleted", store("member2", "v3", 61000), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := stageVerdict(t, c, tc.store, members, tc.stage)
			if v != nil && !strings.Contains(v.Why, "waits for gate 'scheduled'") {
				t.Fatalf("the violation does not name the stage's gate: %s", v.Why)
			}
		})
	}
	// Without the gate on the stage, the first store was the promote's.
	c.intents[2].State.Rollout.Stages[1].Gates = nil
	for i := 3; i < len(c.intents); i++ {
		c.intents[i].State.Rollout.Stages[1].Gates = nil
	}
	if v := c.check(store("member2", "v2", 31000)); v != nil {
		t.Fatalf("without the stage's gate: %s", v.Why)
	}
}

// stageVerdict is the checker's verdict on store, which the holds released:
// a violation by the Rollout's stages exactly when stage.
func stageVerdict(t *testing.T, c *checker, store stored, members []string, stage bool) *violation {
	t.Helper()
	v := c.check(store)
	if v != nil && v.Why == "" {
		t.Fatalf("the holds did not release it; the case is wrong:\n%s", c.report(v, members, t0))
	}
	if (v != nil) != stage {
		why := ""
		if v != nil {
			why = v.Why
		}
		t.Fatalf("stage violation = %v (%s), want %v", v != nil, why, stage)
	}
	return v
}
