package main

import (
	"maps"
	"math/rand"
	"slices"
	"strings"
	"testing"
)

func TestASeedReplaysTheSameOperations(t *testing.T) {
	run := func(seed int64) []string {
		g := &generator{rng: rand.New(rand.NewSource(seed)), seed: seed, members: []string{"member1", "member2", "member3"}, gates: true}
		s := initialState(map[string]string{"web-a": "v0", "web-b": "v0", configMap: "v0"})
		var ops []string
		for range 500 {
			var o op
			o, s = g.next(s)
			ops = append(ops, o.String())
			if s.SuspendAll && len(s.SuspendOn) > 0 {
				t.Fatalf("after %s the policy would carry dispatching: true beside dispatchingOnClusters, which the hub refuses", o)
			}
		}
		return ops
	}
	if a, b := run(7), run(7); !slices.Equal(a, b) {
		t.Fatalf("seed 7 chose different operations on a second run")
	}
	if a, b := run(7), run(8); slices.Equal(a, b) {
		t.Fatalf("seeds 7 and 8 chose the same operations")
	}
}

// Seed 7's first operations as the generator chose them before Gate
// operations were added: --gates=false must choose them still, so a seed
// recorded then replays.
var seed7WithoutGates = []string{
	"change-version web-a chaos.local/web:s7-v1",
	"policy-suspended-annotation",
	"policy-suspended-annotation",
	"template-cluster-annotation web-b member2",
	"template-cluster-annotation web-b member2",
	"template-cluster-annotation conf member2",
	"policy-suspended-annotation",
	"change-version web-a chaos.local/web:s7-v2",
	"change-version web-a chaos.local/web:s7-v3",
	"policy-suspended-annotation",
	"template-cluster-annotation web-b member3",
	"template-cluster-annotation conf member2",
	"policy-cluster-annotation member2",
	"change-version web-b chaos.local/web:s7-v4",
	"template-cluster-annotation web-b member3",
	"change-version web-b chaos.local/web:s7-v5",
	"policy-suspended-annotation",
	"policy-cluster-annotation member2",
	"change-version web-a chaos.local/web:s7-v6",
	"policy-suspended-annotation",
	"delete-policy",
	"recreate-policy",
	"spec.suspension.dispatchingOnClusters member3",
	"change-version web-b chaos.local/web:s7-v7",
	"change-version conf s7-v8",
	"spec.suspension.dispatchingOnClusters member1 (proposal spelling)",
	"change-version conf s7-v9",
	"spec.suspension.dispatchingOnClusters member3 (proposal spelling)",
	"policy-cluster-annotation member1",
	"change-version web-b chaos.local/web:s7-v10",
	"change-version web-b chaos.local/web:s7-v11",
	"spec.suspension.dispatching (proposal spelling)",
	"policy-cluster-annotation member1",
	"spec.suspension.dispatching (proposal spelling)",
	"change-version web-a chaos.local/web:s7-v12",
	"template-cluster-annotation web-b member2",
	"change-version web-b chaos.local/web:s7-v13",
	"change-version conf s7-v14",
	"change-version conf s7-v15",
	"policy-cluster-annotation member3",
}

// Seed 7's first operations as the generator chose them before placement
// changes were added (with Gates and deletions).
var seed7WithoutPlacement = []string{
	"spec.suspension.dispatching (proposal spelling)",
	"delete-policy",
	"recreate-policy",
	"spec.suspension.dispatching (proposal spelling)",
	"template-suspended-annotation web-b",
	"template-suspended-annotation web-b",
	"gate-create scheduled",
	"change-version web-a chaos.local/web:s7-v1",
	"spec.suspension.dispatchingOnClusters member3",
	"template-suspended-annotation web-b",
	"change-version web-b chaos.local/web:s7-v2",
	"policy-suspended-annotation",
	"spec.suspension.dispatchingOnClusters member2",
	"change-version web-a chaos.local/web:s7-v3",
	"template-suspended-annotation web-b",
	"policy-suspended-annotation",
	"policy-suspended-annotation",
	"change-version web-b chaos.local/web:s7-v4",
	"spec.suspension.dispatching",
	"change-version web-a chaos.local/web:s7-v5",
	"template-suspended-annotation conf",
	"policy-suspended-annotation",
	"spec.suspension.dispatching",
	"gate-close scheduled",
	"template-cluster-annotation conf member2",
	"policy-deletion-delay 3s",
	"policy-deletion-delay 3s",
	"change-version web-b chaos.local/web:s7-v6",
	"delete-template web-a",
	"spec.suspension.dispatching (proposal spelling)",
	"change-version conf s7-v7",
	"change-version web-b chaos.local/web:s7-v8",
	"change-version conf s7-v9",
	"policy-cluster-annotation member1",
	"template-suspended-annotation conf",
	"policy-cluster-annotation member1",
	"delete-template conf",
	"delete-policy",
	"change-version web-b chaos.local/web:s7-v10",
	"recreate-policy",
}

// Seed 7's first operations, with every other kind of operation and the
// Job, as the generator chose them before cluster lists were added:
// --cluster-lists=false must choose them still.
var seed7WithoutClusterLists = []string{
	"change-version conf s7-v1",
	"gate-create approval",
	"change-version web-a chaos.local/web:s7-v2",
	"policy-cluster-annotation member2",
	"policy-cluster-annotation member3",
	"change-version conf s7-v3",
	"policy-cluster-annotation member2",
	"policy-cluster-annotation member3",
	"policy-cluster-annotation member1",
	"change-version web-b chaos.local/web:s7-v4",
	"gate-list windowed",
	"gate-unlist windowed",
	"policy-cluster-annotation member1",
	"delete-policy",
	"gate-close approval",
	"recreate-policy",
	"spec.suspension.dispatching (proposal spelling)",
	"change-version web-b chaos.local/web:s7-v5",
	"policy-suspended-annotation",
	"spec.suspension.dispatching (proposal spelling)",
	"rollout-create",
	"policy-suspended-annotation",
	"policy-suspended-annotation",
	"template-suspended-annotation batch",
	"policy-suspended-annotation",
	"policy-deletion-delay 3s",
	"spec.suspension.dispatchingOnClusters member2",
	"template-suspended-annotation batch",
	"rollout-paused-annotation",
	"spec.suspension.dispatching (proposal spelling)",
	"rollout-paused-annotation",
	"spec.suspension.dispatching (proposal spelling)",
	"spec.suspension.dispatchingOnClusters member1",
	"delete-template web-b",
	"recreate-template web-b chaos.local/web:s7-v5",
	"change-version web-a chaos.local/web:s7-v6",
	"template-suspended-annotation web-b",
	"spec.suspension.dispatchingOnClusters member1 (proposal spelling)",
	"delete-policy",
	"template-suspended-annotation web-b",
}

// A seed without the operations added since chooses the operations it
// chose before they were, so a seed recorded then replays.
func TestWithoutNewerOperationsASeedChoosesTheOperationsItChoseBefore(t *testing.T) {
	members := []string{"member1", "member2", "member3"}
	for _, tc := range []struct {
		name string
		g    generator
		// withJob: the run uses the Job template.
		withJob bool
		want    []string
	}{
		{"--gates=false --deletions=false", generator{}, false, seed7WithoutGates},
		{"--deletions=false", generator{gates: true}, false, seed7WithoutDeletions},
		{"--placement=false", generator{gates: true, deletions: true}, false, seed7WithoutPlacement},
		{"--cluster-lists=false", generator{gates: true, deletions: true, placement: true, rollouts: true}, true, seed7WithoutClusterLists},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := tc.g
			g.rng, g.seed, g.members = rand.New(rand.NewSource(7)), 7, members
			versions := map[string]string{"web-a": "v0", "web-b": "v0", configMap: "v0"}
			if tc.withJob {
				versions[job] = "v0"
			}
			s := initialState(versions)
			for i, want := range tc.want {
				var o op
				o, s = g.next(s)
				if o.String() != want {
					t.Fatalf("operation %d is %q, want %q", i+1, o, want)
				}
			}
		})
	}
}

func TestGateOperationsAreChosenOnlyWhereTheyCanBeWritten(t *testing.T) {
	counts := map[string]int{}
	withFor := 0
	for seed := int64(1); seed <= 20; seed++ {
		g := &generator{rng: rand.New(rand.NewSource(seed)), seed: seed, members: []string{"member1", "member2", "member3"}, gates: true}
		s := initialState(map[string]string{"web-a": "v0", "web-b": "v0", configMap: "v0"})
		for range 300 {
			o, n := g.next(s)
			_, exists := s.Gates[o.Gate]
			switch o.Kind {
			case opGateCreate:
				if exists {
					t.Fatalf("seed %d: %s, but the Gate exists", seed, o)
				}
			case opGateOpen, opGateClose, opGateDelete:
				if !exists {
					t.Fatalf("seed %d: %s, but no such Gate exists", seed, o)
				}
			case opGateList, opGateUnlist:
				if !s.PolicyExists {
					t.Fatalf("seed %d: %s while the policy is deleted", seed, o)
				}
				if s.PolicyGates[o.Gate] != (o.Kind == opGateUnlist) || n.PolicyGates[o.Gate] == s.PolicyGates[o.Gate] {
					t.Fatalf("seed %d: %s: listed before %v, after %v", seed, o, s.PolicyGates[o.Gate], n.PolicyGates[o.Gate])
				}
			}
			if o.For > 0 {
				withFor++
				if o.Kind != opGateOpen && o.Kind != opGateClose {
					t.Fatalf("seed %d: %s carries --for", seed, o)
				}
			}
			counts[o.Kind]++
			s = n
		}
	}
	for _, k := range []string{opGateCreate, opGateDelete, opGateList, opGateUnlist, opGateOpen, opGateClose} {
		if counts[k] == 0 {
			t.Errorf("%s never chosen in 6000 operations", k)
		}
	}
	if withFor == 0 || withFor == counts[opGateOpen]+counts[opGateClose] {
		t.Errorf("%d of %d gate requests with --for; want some with and some without", withFor, counts[opGateOpen]+counts[opGateClose])
	}
	t.Logf("operations chosen: %v", counts)
	if counts[opVersion] < counts[opGateOpen] {
		t.Errorf("%d version changes, %d gate opens: gate operations crowd the others out", counts[opVersion], counts[opGateOpen])
	}
}

func TestSuspensionsAreWrittenInBothSpellings(t *testing.T) {
	g := &generator{rng: rand.New(rand.NewSource(7)), seed: 7, members: []string{"member1", "member2", "member3"}}
	s := initialState(map[string]string{"web-a": "v0", "web-b": "v0", configMap: "v0"})
	spellings := map[bool]int{}
	for range 500 {
		var o op
		o, s = g.next(s)
		if o.Kind == opSuspendAll || o.Kind == opSuspendOn {
			spellings[o.Alias]++
		} else if o.Alias {
			t.Fatalf("%s carries a spelling; only spec.suspension writes do", o)
		}
	}
	if spellings[true] == 0 || spellings[false] == 0 {
		t.Fatalf("spec.suspension written %d times in Karmada's spelling and %d in the proposal's; want both", spellings[false], spellings[true])
	}
}

// Seed 7's first operations, with Gates, as the generator chose them
// before template deletions were added: --deletions=false must choose
// them still.
var seed7WithoutDeletions = []string{
	"policy-cluster-annotation member1",
	"policy-cluster-annotation member1",
	"policy-suspended-annotation",
	"policy-suspended-annotation",
	"spec.suspension.dispatching (proposal spelling)",
	"change-version conf s7-v1",
	"change-version web-a chaos.local/web:s7-v2",
	"spec.suspension.dispatching (proposal spelling)",
	"policy-suspended-annotation",
	"gate-list scheduled",
	"change-version web-b chaos.local/web:s7-v3",
	"change-version web-a chaos.local/web:s7-v4",
	"gate-create windowed",
	"change-version web-b chaos.local/web:s7-v5",
	"policy-suspended-annotation",
	"template-cluster-annotation web-b member3",
	"change-version conf s7-v6",
	"spec.suspension.dispatchingOnClusters member3",
	"gate-unlist scheduled",
	"spec.suspension.dispatchingOnClusters member3 (proposal spelling)",
	"gate-create approval",
	"delete-policy",
	"template-cluster-annotation web-b member3",
	"gate-close windowed",
	"change-version conf s7-v7",
	"recreate-policy",
	"change-version web-b chaos.local/web:s7-v8",
	"gate-close approval",
	"spec.suspension.dispatchingOnClusters member1",
	"gate-list scheduled",
	"template-cluster-annotation web-a member2",
	"change-version web-b chaos.local/web:s7-v9",
	"change-version conf s7-v10",
	"spec.suspension.dispatching",
	"delete-policy",
	"change-version web-a chaos.local/web:s7-v11",
	"recreate-policy",
	"template-cluster-annotation conf member3",
	"template-cluster-annotation conf member3",
	"spec.suspension.dispatching",
}

// Templates are changed and deleted only while they exist, created again
// only while deleted and with the version they had, and neither deleted
// nor created again while no policy claims them; one always exists.
func TestDeletionsAreChosenOnlyWhereTheyCanBeWritten(t *testing.T) {
	counts := map[string]int{}
	for seed := int64(1); seed <= 20; seed++ {
		g := &generator{rng: rand.New(rand.NewSource(seed)), seed: seed, members: []string{"member1", "member2", "member3"},
			gates: true, deletions: true}
		s := initialState(map[string]string{"web-a": "v0", "web-b": "v0", configMap: "v0"})
		for range 300 {
			o, n := g.next(s)
			before := s.Templates[o.Template]
			switch o.Kind {
			case opVersion, opTemplateSuspend, opTemplateCluster, opDeleteTemplate:
				if before.Deleted {
					t.Fatalf("seed %d: %s, but the template is deleted", seed, o)
				}
			case opRecreateTemplate:
				if !before.Deleted || o.Version != before.Version || n.Templates[o.Template].Deleted {
					t.Fatalf("seed %d: %s: deleted before %v, version %s before", seed, o, before.Deleted, before.Version)
				}
			case opDeletionDelay:
				if n.DeletionDelay != o.Delay {
					t.Fatalf("seed %d: %s left a deletion delay of %s", seed, o, n.DeletionDelay)
				}
			}
			if (o.Kind == opDeleteTemplate || o.Kind == opRecreateTemplate) && !s.PolicyExists {
				t.Fatalf("seed %d: %s while the policy is deleted", seed, o)
			}
			if o.Kind == opDeleteTemplate {
				if d := n.Templates[o.Template]; !d.Deleted || d.Suspended || len(d.Clusters) > 0 {
					t.Fatalf("seed %d: %s left %+v: its annotations go with it", seed, o, d)
				}
			}
			if len(n.existing()) == 0 {
				t.Fatalf("seed %d: after %s no template exists", seed, o)
			}
			counts[o.Kind]++
			s = n
		}
	}
	for _, k := range []string{opDeleteTemplate, opRecreateTemplate, opDeletionDelay} {
		if counts[k] == 0 {
			t.Errorf("%s never chosen in 6000 operations", k)
		}
	}
	t.Logf("operations chosen: %v", counts)
}

func TestPlacementChangesNeverLeaveEveryMemberOut(t *testing.T) {
	counts := map[string]int{}
	members := []string{"member1", "member2", "member3"}
	for seed := int64(1); seed <= 20; seed++ {
		g := &generator{rng: rand.New(rand.NewSource(seed)), seed: seed, members: members, gates: true, deletions: true, placement: true}
		s := initialState(map[string]string{"web-a": "v0", "web-b": "v0", configMap: "v0"})
		for range 300 {
			o, n := g.next(s)
			if o.Kind == opPlacement {
				if !s.PolicyExists {
					t.Fatalf("seed %d: %s while the policy is deleted", seed, o)
				}
				if n.Unplaced[o.Member] == s.Unplaced[o.Member] {
					t.Fatalf("seed %d: %s changed nothing", seed, o)
				}
				if n.Unplaced[o.Member] {
					counts["out"]++
				} else {
					counts["back"]++
				}
			}
			if len(n.placed(members)) == 0 {
				t.Fatalf("seed %d: after %s no member is placed", seed, o)
			}
			if p := policyFor(n, members); len(p.Spec.Placement.ClusterAffinity.ClusterNames) != len(n.placed(members)) {
				t.Fatalf("seed %d: after %s the policy lists %v", seed, o, p.Spec.Placement.ClusterAffinity.ClusterNames)
			}
			s = n
		}
	}
	if counts["out"] == 0 || counts["back"] == 0 {
		t.Errorf("members left out %d times and put back %d times in 6000 operations", counts["out"], counts["back"])
	}
	t.Logf("placement changes: %v", counts)
}

// With the Job, a run's operations change it too, its versions plain (an
// annotation, not an image); without, a state never names it.
func TestTheJobIsChangedOnlyInARunThatUsesIt(t *testing.T) {
	members := []string{"member1", "member2", "member3"}
	for _, withJob := range []bool{true, false} {
		versions := map[string]string{"web-a": "v0", "web-b": "v0", configMap: "v0"}
		if withJob {
			versions[job] = "v0"
		}
		g := &generator{rng: rand.New(rand.NewSource(3)), seed: 3, members: members, gates: true, deletions: true, placement: true}
		s := initialState(versions)
		changed := 0
		for range 500 {
			o, n := g.next(s)
			if o.Template == job {
				if !withJob {
					t.Fatalf("%s in a run without the Job", o)
				}
				if o.Kind == opVersion {
					changed++
					if strings.Contains(o.Version, ":") {
						t.Fatalf("%s: a Job's version is an annotation, not an image", o)
					}
				}
			}
			if _, ok := n.Templates[job]; ok != withJob {
				t.Fatalf("after %s the state names the Job: %v", o, ok)
			}
			s = n
		}
		if withJob && changed == 0 {
			t.Fatalf("the Job's version never changed in 500 operations")
		}
	}
}

// allOperations are the kinds of operation the generator chooses with
// every option on.
var allOperations = []string{opVersion, opTemplateSuspend, opTemplateCluster, opPolicySuspend, opPolicyCluster, opPolicyClusterList,
	opSuspendAll, opSuspendOn, opDeletePolicy, opRecreatePolicy, opGateCreate, opGateDelete, opGateList, opGateUnlist, opGateOpen,
	opGateClose, opDeleteTemplate, opRecreateTemplate, opDeletionDelay, opPlacement, opRolloutCreate, opRolloutPause,
	opRolloutPromote, opRolloutDelete}

// everything is a generator with every option on, as a run has it by
// default.
func everything(seed int64, members []string) *generator {
	return &generator{rng: rand.New(rand.NewSource(seed)), seed: seed, members: members, gates: true, deletions: true, placement: true,
		rollouts: true, clusterLists: true}
}

// With every option on, a run chooses every kind of operation.
func TestEveryOperationIsChosen(t *testing.T) {
	counts := map[string]int{}
	for seed := int64(1); seed <= 20; seed++ {
		g := everything(seed, []string{"member1", "member2", "member3"})
		s := initialState(map[string]string{"web-a": "v0", "web-b": "v0", configMap: "v0", job: "v0"})
		for range 300 {
			var o op
			o, s = g.next(s)
			counts[o.Kind]++
		}
	}
	for _, k := range allOperations {
		if counts[k] == 0 {
			t.Errorf("%s never chosen in 6000 operations", k)
		}
	}
	for k := range counts {
		if !slices.Contains(allOperations, k) {
			t.Errorf("%s chosen, but allOperations does not name it", k)
		}
	}
	t.Logf("operations chosen: %v", counts)
}

// A list suspends or resumes two or more members, named once each in the
// order of the members, in one write, only while the policy exists; the
// state then holds exactly the listed members it suspends and none it
// resumes, the others as they were. Lists are resumed both when drawn and
// as the lift of two or more per-cluster holds; without --cluster-lists
// no list is ever chosen.
func TestClusterListsAreChosenOnlyWhereTheyCanBeWritten(t *testing.T) {
	members := []string{"member1", "member2", "member3"}
	counts := map[string]int{}
	for seed := int64(1); seed <= 20; seed++ {
		g := everything(seed, members)
		s := initialState(map[string]string{"web-a": "v0", "web-b": "v0", configMap: "v0", job: "v0"})
		for range 300 {
			o, n := g.next(s)
			if o.Kind != opPolicyClusterList {
				if len(o.Clusters) > 0 || o.Resume {
					t.Fatalf("seed %d: %s carries a cluster list", seed, o)
				}
				s = n
				continue
			}
			if !s.PolicyExists {
				t.Fatalf("seed %d: %s while the policy is deleted", seed, o)
			}
			if len(o.Clusters) < 2 {
				t.Fatalf("seed %d: %s names fewer than two members", seed, o)
			}
			for i, m := range o.Clusters {
				if !slices.Contains(members, m) || i > 0 && slices.Index(members, o.Clusters[i-1]) >= slices.Index(members, m) {
					t.Fatalf("seed %d: %s: not members, each once, in their order", seed, o)
				}
			}
			if want := "--clusters " + strings.Join(o.Clusters, ","); !strings.Contains(o.String(), want) {
				t.Fatalf("%q does not say %q", o, want)
			}
			changed := false
			for _, m := range members {
				switch {
				case slices.Contains(o.Clusters, m):
					if n.PolicyClusters[m] == o.Resume {
						t.Fatalf("seed %d: %s left %s held: %v", seed, o, m, n.PolicyClusters[m])
					}
					changed = changed || n.PolicyClusters[m] != s.PolicyClusters[m]
				case n.PolicyClusters[m] != s.PolicyClusters[m]:
					t.Fatalf("seed %d: %s changed the hold of %s, which it does not name", seed, o, m)
				}
			}
			if !changed {
				t.Fatalf("seed %d: %s changed no hold (held before: %v)", seed, o, s.PolicyClusters)
			}
			switch {
			case !o.Resume:
				counts["suspend"]++
			case slices.Equal(o.Clusters, slices.Sorted(maps.Keys(s.PolicyClusters))):
				counts["resume every member held"]++
			default:
				counts["resume"]++
			}
			s = n
		}
	}
	for _, k := range []string{"suspend", "resume", "resume every member held"} {
		if counts[k] == 0 {
			t.Errorf("no list chosen to %s in 6000 operations", k)
		}
	}
	t.Logf("lists: %v", counts)

	g := everything(7, members)
	g.clusterLists = false
	s := initialState(map[string]string{"web-a": "v0", "web-b": "v0", configMap: "v0", job: "v0"})
	for range 3000 {
		var o op
		if o, s = g.next(s); o.Kind == opPolicyClusterList {
			t.Fatalf("%s chosen without --cluster-lists", o)
		}
	}
}

// Two or more members the policy holds by per-cluster annotations are
// lifted in one write too, as `federator resume pp NAME --clusters a,b`
// does, beside one at a time; one member held is lifted alone; without
// --cluster-lists the lifts are those chosen before lists were added.
func TestTwoOrMorePerClusterHoldsAreLiftedInOneWrite(t *testing.T) {
	s := initialState(map[string]string{"web": "v1"})
	s.PolicyClusters = map[string]bool{"member3": true, "member1": true}
	lists := func(lifts []op) []op {
		return slices.DeleteFunc(lifts, func(o op) bool { return o.Kind != opPolicyClusterList })
	}
	got := lists(liftable(s, true))
	if len(got) != 1 || !got[0].Resume || !slices.Equal(got[0].Clusters, []string{"member1", "member3"}) {
		t.Fatalf("lifts of a policy holding member1 and member3: %v; want one resume of both", got)
	}
	if without := liftable(s, false); len(lists(without)) != 0 || len(without) != len(liftable(s, true))-1 {
		t.Fatalf("without lists, the lifts are %v", without)
	}
	s.PolicyClusters = map[string]bool{"member2": true}
	if got := lists(liftable(s, true)); len(got) != 0 {
		t.Fatalf("one member held is lifted by a list: %v", got)
	}
}
