package main

import (
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

// with is s changed by change, s itself left as it was.
func with(s state, change func(*state)) state { s = s.clone(); change(&s); return s }

// storeCase is a version stored on a member and whether the checker must
// report it.
type storeCase struct {
	name      string
	store     stored
	violation bool
}

// judge checks each case's store of template against c.
func judge(t *testing.T, c *checker, template string, cases []storeCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.store.Template = template
			v := c.check(tc.store)
			if (v != nil) != tc.violation {
				t.Fatalf("violation = %v, want %v", v != nil, tc.violation)
			}
			if v != nil && len(v.Around) == 0 {
				t.Fatalf("the violation's report shows no writes around it")
			}
		})
	}
}

type removalCase struct {
	name      string
	removal   removal
	violation bool
	why       string // what a violation's Why must say
}

// judgeRemovals checks each case's removal of template against c.
func judgeRemovals(t *testing.T, c *checker, template string, cases []removalCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.removal.Template = template
			v := c.checkRemoval(tc.removal)
			if (v != nil) != tc.violation {
				t.Fatalf("violation = %+v, want %v", v, tc.violation)
			}
			if v != nil && !strings.Contains(v.Why, tc.why) {
				t.Fatalf("why = %q, want it to say %q", v.Why, tc.why)
			}
		})
	}
}

func TestCheckerJudgesStoredVersionsAgainstTheUsersWrites(t *testing.T) {
	released := initialState(map[string]string{"web": "v1"})
	withVersion := func(s state, v string) state {
		s = s.clone()
		s.Templates["web"] = templateState{Version: v, Suspended: s.Templates["web"].Suspended, Clusters: s.Templates["web"].Clusters}
		return s
	}
	suspended := func(s state) state { s = s.clone(); s.PolicySuspended = true; return s }
	clusterHeld := func(s state, m string) state { s = s.clone(); s.SuspendOn = map[string]bool{m: true}; return s }
	deleted := func(s state) state { n := s.clone(); f := s.clone(); n.PolicyExists, n.Frozen = false, &f; return n }
	templateSuspended := func(s state) state {
		s = s.clone()
		ts := s.Templates["web"]
		ts.Suspended = true
		s.Templates["web"] = ts
		return s
	}

	// History: v1 released (0 ms); suspended (1000); v2 written while
	// suspended (2000); member1 held by spec.suspension, the rest
	// released (10000); member2 frozen from 11000 to 30000; suspended
	// again (12000).
	history := []intent{
		{Step: 0, Op: "setup", Sent: at(0), Done: at(10), State: released},
		{Step: 1, Op: "suspend", Sent: at(1000), Done: at(1010), State: suspended(released)},
		{Step: 2, Op: "v2", Sent: at(2000), Done: at(2010), State: withVersion(suspended(released), "v2")},
		{Step: 3, Op: "resume but member1", Sent: at(10000), Done: at(10010), State: clusterHeld(withVersion(released, "v2"), "member1")},
		{Step: 4, Op: "suspend", Sent: at(12000), Done: at(12010), State: suspended(clusterHeld(withVersion(released, "v2"), "member1"))},
	}
	faults := []fault{{Kind: faultPauseMember, Member: "member2", From: at(11000), To: at(30000)},
		{Kind: faultRestartEtcd, Member: "member3", From: at(11500), To: at(20000)},
		{Kind: faultKillController, Member: "replica-1", From: at(11000), To: at(25000)}}
	c := &checker{intents: history, faults: faults, grace: 2 * time.Second}

	judge(t, c, "web", []storeCase{
		{"the first version, stored while released", stored{Member: "member1", Version: "v1", Written: at(0), Observed: at(500)}, false},
		{"the released version stored within the grace after a hold returned (in flight)",
			stored{Member: "member1", Version: "v1", Written: at(2000), Observed: at(2900)}, false},
		{"the released version stored after the grace that followed a hold",
			stored{Member: "member1", Version: "v1", Written: at(5000), Observed: at(5200)}, true},
		{"a version written while suspended, stored while suspended",
			stored{Member: "member3", Version: "v2", Written: at(3000), Observed: at(3100)}, true},
		{"a version stored after its release", stored{Member: "member3", Version: "v2", Written: at(10000), Observed: at(10300)}, false},
		{"a version stored on the one cluster still held", stored{Member: "member1", Version: "v2", Written: at(11000), Observed: at(11200)}, true},
		{"a version no one wrote", stored{Member: "member3", Version: "v-never", Written: at(10000), Observed: at(10300)}, true},
		{"a frozen member storing, once it runs again, what was released before the freeze",
			stored{Member: "member2", Version: "v2", Written: at(30000), Observed: at(30100)}, false},
		{"another member storing long after the hold (a controller kill stretches nothing)",
			stored{Member: "member1", Version: "v2", Written: at(30000), Observed: at(30100)}, true},
		{"a member whose etcd restarted storing, once etcd is back, what its API server took before",
			stored{Member: "member3", Version: "v2", Written: at(21000), Observed: at(21100)}, false},
		{"... or seconds later, while its etcd client retries",
			stored{Member: "member3", Version: "v2", Written: at(31000), Observed: at(31100)}, false},
		{"a member whose etcd restarted storing after the restart's recovery and grace",
			stored{Member: "member3", Version: "v2", Written: at(33000), Observed: at(33100)}, true},
		{"a store observed before its managedFields second ends is judged by the second",
			stored{Member: "member3", Version: "v2", Written: at(9000), Observed: at(10050)}, false},
	})

	t.Run("a deleted policy keeps the holds it had; the template's own hold still counts", func(t *testing.T) {
		h := []intent{
			{Step: 0, Sent: at(0), Done: at(10), State: released},
			{Step: 1, Sent: at(1000), Done: at(1010), State: deleted(released)},
			{Step: 2, Sent: at(2000), Done: at(2010), State: templateSuspended(deleted(released))},
		}
		c := &checker{intents: h, grace: 2 * time.Second}
		judge(t, c, "web", []storeCase{
			{"v1 while the deleted policy's last decision released it", stored{Member: "member1", Version: "v1", Written: at(1500), Observed: at(1600)}, false},
			{"v1 long after the template was suspended", stored{Member: "member1", Version: "v1", Written: at(9000), Observed: at(9100)}, true},
		})
	})
}

// A member's copy may be deleted only once the user deleted the template
// and the deletion delay in force then has passed since, and not at all
// when the template was created again early enough to take the countdown
// back; and nothing is stored while the template is deleted.
func TestCheckerJudgesDeletionsAgainstTheirDelay(t *testing.T) {
	base := initialState(map[string]string{"web": "v1"})
	delayed := with(base, func(s *state) { s.DeletionDelay = 10 * time.Second })
	gone := with(delayed, func(s *state) { s.Templates["web"] = templateState{Version: "v1", Deleted: true} })
	// History: a 10 s delay (1000 ms); web deleted (5000); created again
	// (8000); deleted again (20000), the delay lowered to none 500 ms
	// before that; member2 frozen from 7000 to 30000.
	history := []intent{
		{Step: 0, Op: "setup", Sent: at(0), Done: at(10), State: base},
		{Step: 1, Op: "policy-deletion-delay 10s", Sent: at(1000), Done: at(1010), State: delayed},
		{Step: 2, Op: "delete-template web", Sent: at(5000), Done: at(5010), State: gone},
		{Step: 3, Op: "recreate-template web v1", Sent: at(8000), Done: at(8010), State: delayed},
		{Step: 4, Op: "policy-deletion-delay 0s", Sent: at(19500), Done: at(19510), State: base},
		{Step: 5, Op: "delete-template web", Sent: at(20000), Done: at(20010),
			State: with(base, func(s *state) { s.Templates["web"] = templateState{Version: "v1", Deleted: true} })},
	}
	c := &checker{intents: history, grace: 2 * time.Second,
		faults: []fault{{Kind: faultPauseMember, Member: "member2", From: at(7000), To: at(30000)}}}
	for _, tc := range []struct {
		name      string
		removal   removal
		violation bool
	}{
		{"deleted before any deletion was written", removal{Member: "member1", Observed: at(4000)}, true},
		{"deleted before the delay passed", removal{Member: "member1", Observed: at(7000)}, true},
		{"deleted after the delay, though created again in time to take it back", removal{Member: "member1", Observed: at(15100)}, true},
		{"the take-back could not reach a frozen member before the delay passed", removal{Member: "member2", Observed: at(15100)}, false},
		{"deleted at once, the delay lowered to none just before", removal{Member: "member1", Observed: at(20300)}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.removal.Template = "web"
			v := c.checkRemoval(tc.removal)
			if (v != nil) != tc.violation {
				t.Fatalf("violation = %v, want %v", v, tc.violation)
			}
			if v != nil {
				if len(v.Around) == 0 || v.Why == "" {
					t.Fatalf("the violation says neither why nor what was written around it: %+v", v)
				}
				if r := c.report(v, []string{"member1", "member2"}, t0); !strings.Contains(r, "deleted its copy of web") {
					t.Fatalf("report: %s", r)
				}
			}
		})
	}

	// The delay is lowered to none within the grace before the second
	// deletion: the shorter one counts.
	if got := c.delayAround(5); got != 0 {
		t.Errorf("delay around the second deletion = %s, want 0s", got)
	}
	if got := c.delayAround(2); got != 10*time.Second {
		t.Errorf("delay around the first deletion = %s, want 10s", got)
	}
	judge(t, c, "web", []storeCase{
		{"stored while the template is deleted", stored{Member: "member1", Version: "v1", Written: at(7100), Observed: at(7900)}, true},
		{"stored once it is created again", stored{Member: "member1", Version: "v1", Written: at(9000), Observed: at(9100)}, false},
	})
}

// A freeze delays a due deletion until it ends: a copy deleted while a
// freeze of its member was in force is a violation, one deleted after the
// unfreeze (or in flight when the freeze was written) is not.
func TestCheckerJudgesDeletionsDuringAFreeze(t *testing.T) {
	base := initialState(map[string]string{"web": "v1"})
	gone := func(s state) state {
		return with(s, func(s *state) { s.Templates["web"] = templateState{Version: "v1", Deleted: true} })
	}
	frozen := func(s state, members ...string) state {
		return with(s, func(s *state) {
			s.Freezing = true
			if len(members) > 0 {
				s.Freeze = map[string]bool{}
				for _, m := range members {
					s.Freeze[m] = true
				}
			}
		})
	}
	// web deleted (no delay) at 1000; member1 frozen at 1200; every
	// member frozen at 5000; unfrozen at 10000.
	history := []intent{
		{Step: 0, Op: "setup", Sent: at(0), Done: at(10), State: base},
		{Step: 1, Op: "delete-template web", Sent: at(1000), Done: at(1010), State: gone(base)},
		{Step: 2, Op: "freeze member1", Sent: at(1200), Done: at(1210), State: frozen(gone(base), "member1")},
		{Step: 3, Op: "freeze", Sent: at(5000), Done: at(5010), State: frozen(gone(base))},
		{Step: 4, Op: "unfreeze", Sent: at(10000), Done: at(10010), State: gone(base)},
	}
	c := &checker{intents: history, grace: 2 * time.Second}
	judgeRemovals(t, c, "web", []removalCase{
		{"deleted in flight as member1 was frozen", removal{Member: "member1", Observed: at(2500)}, false, ""},
		{"deleted from member1 while its freeze held it", removal{Member: "member1", Observed: at(4000)}, true, "the freeze of step 2 (freeze member1) held member1"},
		{"deleted from member2, not frozen then", removal{Member: "member2", Observed: at(4000)}, false, ""},
		{"deleted from member2 while the fleet was frozen", removal{Member: "member2", Observed: at(8000)}, true, "the freeze of step 3"},
		{"deleted once unfrozen", removal{Member: "member1", Observed: at(10500)}, false, ""},
	})
}

// A member left out of the placement is held (nothing new stored there)
// and its copy deleted once the delay passed, unless it was placed again
// in time: the same rules as a deleted template.
func TestCheckerJudgesAMemberLeftOutOfThePlacement(t *testing.T) {
	delayed := with(initialState(map[string]string{"web": "v1"}), func(s *state) { s.DeletionDelay = 10 * time.Second })
	out := with(delayed, func(s *state) { s.Unplaced = map[string]bool{"member2": true} })
	outV2 := with(out, func(s *state) { s.Templates["web"] = templateState{Version: "v2"} })
	backV2 := with(outV2, func(s *state) { s.Unplaced = nil })
	// member2 left out (5000), v2 written (6000), member2 placed again
	// (8000), left out again (20000).
	history := []intent{
		{Step: 0, Op: "setup", Sent: at(0), Done: at(10), State: delayed},
		{Step: 1, Op: "change-placement member2", Sent: at(5000), Done: at(5010), State: out},
		{Step: 2, Op: "change-version web v2", Sent: at(6000), Done: at(6010), State: outV2},
		{Step: 3, Op: "change-placement member2", Sent: at(8000), Done: at(8010), State: backV2},
		{Step: 4, Op: "change-placement member2", Sent: at(20000), Done: at(20010), State: with(backV2, func(s *state) {
			s.Unplaced = map[string]bool{"member2": true}
		})},
	}
	c := &checker{intents: history, grace: 2 * time.Second}
	judge(t, c, "web", []storeCase{
		{"v2 on member1, placed", stored{Member: "member1", Version: "v2", Written: at(6500), Observed: at(6600)}, false},
		{"v2 on member2 while left out", stored{Member: "member2", Version: "v2", Written: at(7000), Observed: at(7100)}, true},
		{"v2 on member2 once placed again", stored{Member: "member2", Version: "v2", Written: at(8500), Observed: at(8600)}, false},
	})
	judgeRemovals(t, c, "web", []removalCase{
		{"deleted from a member never left out", removal{Member: "member1", Observed: at(31000)}, true, "nor a placement leaving member1 out"},
		{"deleted before the delay passed", removal{Member: "member2", Observed: at(9000)}, true, "the placement leaving member2 out (step 1)"},
		{"deleted after the delay, though placed again in time", removal{Member: "member2", Observed: at(15100)}, true, "put back (step 3"},
		{"deleted once the delay passed after it was left out again", removal{Member: "member2", Observed: at(30100)}, false, ""},
	})
}

// A policy deleted right after a placement change and a new version: only
// its holds are carried onto its bindings before it goes, so its Works may
// keep the placement and the version they had just before (within the
// grace before the deletion); a hold written then still holds, and one
// written long before the deletion leaves no room.
func TestADeletedPolicyKeepsItsHoldsButMayKeepAnEarlierPlacementAndVersion(t *testing.T) {
	v1 := initialState(map[string]string{"web": "v1"})
	v2 := with(v1, func(s *state) { s.Templates["web"] = templateState{Version: "v2"} })
	out := with(v2, func(s *state) { s.Unplaced = map[string]bool{"member2": true} })
	held := with(out, func(s *state) { s.SuspendOn = map[string]bool{"member3": true} })
	deletedAt := func(s state) state {
		frozen := s.clone()
		return with(s, func(n *state) { n.PolicyExists, n.Frozen = false, &frozen })
	}
	quick := []intent{
		{Step: 0, Op: "setup", Sent: at(0), Done: at(10), State: v1},
		{Step: 1, Op: "change-version web v2", Sent: at(1000), Done: at(1010), State: v2},
		{Step: 2, Op: "change-placement member2", Sent: at(1500), Done: at(1510), State: out},
		{Step: 3, Op: "spec.suspension.dispatchingOnClusters member3", Sent: at(1600), Done: at(1610), State: held},
		{Step: 4, Op: "delete-policy", Sent: at(1700), Done: at(1710), State: deletedAt(held)},
	}
	judge(t, &checker{intents: quick, grace: 2 * time.Second}, "web", []storeCase{
		{"v1 on member2 after the deletion: placement and version may be those of just before", stored{Member: "member2", Version: "v1", Written: at(5000), Observed: at(5100)}, false},
		{"v1 on member1 after the deletion", stored{Member: "member1", Version: "v1", Written: at(5000), Observed: at(5100)}, false},
		{"v1 on member3, whose hold was written before the deletion", stored{Member: "member3", Version: "v1", Written: at(5000), Observed: at(5100)}, true},
		{"v2 on member3 too", stored{Member: "member3", Version: "v2", Written: at(5000), Observed: at(5100)}, true},
	})
	slow := []intent{
		{Step: 0, Op: "setup", Sent: at(0), Done: at(10), State: v1},
		{Step: 1, Op: "change-version web v2", Sent: at(1000), Done: at(1010), State: v2},
		{Step: 2, Op: "delete-policy", Sent: at(9000), Done: at(9010), State: deletedAt(v2)},
	}
	judge(t, &checker{intents: slow, grace: 2 * time.Second}, "web", []storeCase{
		{"v1 long after v2 and the deletion", stored{Member: "member1", Version: "v1", Written: at(15000), Observed: at(15100)}, true},
		{"v2 after the deletion", stored{Member: "member1", Version: "v2", Written: at(15000), Observed: at(15100)}, false},
	})
}

// A countdown put back in time is not taken back when the controllers
// cannot act for the rest of its delay (found in a long run, seed 2026:
// member2 placed again 7 s before its countdown was due, then the hub's
// API server down for 4.6 s, three controller kills and member2 frozen for
// 3.5 s); a removal is judged against every write that took the template
// off the member, not only the last (the template was deleted 1 s before
// that countdown ended).
func TestATakeBackWaitsForControllersThatCanAct(t *testing.T) {
	delayed := with(initialState(map[string]string{"web": "v1"}), func(s *state) { s.DeletionDelay = 12 * time.Second })
	out := with(delayed, func(s *state) { s.Unplaced = map[string]bool{"member2": true} })
	history := []intent{
		{Step: 0, Op: "setup", Sent: at(0), Done: at(10), State: delayed},
		{Step: 1, Op: "change-placement member2", Sent: at(26556), Done: at(26566), State: out},
		{Step: 2, Op: "change-placement member2", Sent: at(31344), Done: at(31354), State: delayed},
		{Step: 3, Op: "delete-template web", Sent: at(43266), Done: at(43276), State: with(delayed, func(s *state) {
			s.Templates["web"] = templateState{Version: "v1", Deleted: true}
		})},
	}
	stalls := []fault{
		{Kind: faultPauseMember, Member: "member2", From: at(26556), To: at(31862)},
		{Kind: faultRestartHub, From: at(32754), To: at(37385)},
		{Kind: faultPauseMember, Member: "member2", From: at(38068), To: at(41601)},
		{Kind: faultKillController, From: at(38282), To: at(39211)},
		{Kind: faultKillController, From: at(40173), To: at(40897)},
		{Kind: faultKillController, From: at(41601), To: at(42936)},
	}
	removed := removal{Template: "web", Member: "member2", Observed: at(44335)}
	if v := (&checker{intents: history, faults: stalls, grace: 2 * time.Second}).checkRemoval(removed); v != nil {
		t.Errorf("the controllers could not act until after the countdown was due, yet: %s", v.Why)
	}
	calm := &checker{intents: history, faults: stalls[:1], grace: 2 * time.Second}
	if v := calm.checkRemoval(removed); v == nil || !strings.Contains(v.Why, "deletion delay of 12s") {
		t.Errorf("with nothing in the controllers' way the take-back was due in time: violation %+v", v)
	}
}
