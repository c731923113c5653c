package rollout

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/federator-dev/federator/apis/rollouts/v1alpha1"
	"github.com/federator-dev/federator/config/argocd"
	"github.com/federator-dev/federator/internal/revision"
)

// TestAGitOpsToolReadsWhereTheRolloutStands: the status the controller
// writes for each kind of step, read by kstatus (as Flux reads it) and by
// the Argo CD health check shipped in config/argocd. A rollout held on
// purpose is done for a GitOps tool (Current; Suspended in Argo CD), not
// a sync that never ends; one that needs a person is Failed (Degraded).
func TestAGitOpsToolReadsWhereTheRolloutStands(t *testing.T) {
	stages := threeStages()
	now := t0.Add(time.Minute)
	// released is revision 2 after its first step: member1 (canary)
	// released and not yet healthy.
	released := func(edit func(in *Input)) Input {
		in := revision2(stages)
		in.Now = t0
		in.Prior = statusAfter(Step(in))
		in.Now = now
		if edit != nil {
			edit(&in)
		}
		return in
	}
	cases := []struct {
		name string
		in   Input
		want string // kstatus/Argo CD health
	}{
		{"a stage being released", released(nil), "InProgress/Progressing"},
		{"a stage soaking", released(func(in *Input) {
			in.Stages = threeStages()
			in.Stages[0].MinSuccessTime = time.Hour
			in.Healthy = map[string]bool{"member1": true}
		}), "InProgress/Progressing"},
		{"every stage done", Input{Now: now, Revision: 1, Stages: stages, Prior: settled(1, stages),
			Healthy: map[string]bool{"member1": true, "member2": true, "member3": true, "member4": true}}, "Current/Healthy"},
		{"paused by its annotation", released(func(in *Input) { in.Paused = "true" }), "Current/Suspended"},
		{"paused while a stage soaks", released(func(in *Input) {
			in.Stages = threeStages()
			in.Stages[0].MinSuccessTime = time.Hour
			in.Healthy = map[string]bool{"member1": true}
			in.Paused = "look at the canary first"
		}), "Current/Suspended"},
		{"a stage waiting for promotion", with(revision2(stages), func(in *Input) {
			in.Now = now
			in.Stages = threeStages()
			in.Stages[0].Pause = true
		}), "Current/Suspended"},
		{"a stage waiting for a closed gate", with(revision2(stages), func(in *Input) {
			in.Now = now
			in.Stages = threeStages()
			in.Stages[0].GateHold = "gate shop/approval is closed"
		}), "Current/Suspended"},
		{"its released cluster held by a freeze", released(func(in *Input) {
			in.HeldElsewhere = map[string]string{"member1": "frozen by freeze 'incident-42'"}
		}), "Current/Suspended"},
		{"a stage failed", released(func(in *Input) { in.Now = t0.Add(11 * time.Minute) }), "Failed/Degraded"},
		{"aborted", released(func(in *Input) { in.Aborted = true }), "Failed/Degraded"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got, why := gitOpsReads(t, Step(c.in), c.in.Paused, 3); got != c.want || why == "" {
				t.Errorf("read as %s (%q), want %s with a message", got, why, c.want)
			}
		})
	}
}

// TestAGitOpsToolWaitsForAGenerationNotObserved: a spec the controller has
// not seen yet is in progress, whatever the conditions say.
func TestAGitOpsToolWaitsForAGenerationNotObserved(t *testing.T) {
	stages := threeStages()
	in := Input{Now: t0, Revision: 1, Stages: stages, Prior: settled(1, stages),
		Healthy: map[string]bool{"member1": true, "member2": true, "member3": true, "member4": true}}
	if got, _ := gitOpsReads(t, Step(in), "", 4); got != "InProgress/Progressing" {
		t.Errorf("generation 4 observed at 3: read as %s, want InProgress/Progressing", got)
	}
}

// gitOpsReads is what Flux and Argo CD make of the status the controller
// writes from out, for a Rollout at generation whose status was written
// at generation 3.
func gitOpsReads(t *testing.T, out Output, paused string, generation int64) (string, string) {
	t.Helper()
	ro := &v1.Rollout{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", Generation: 3}}
	ro.Status = out.Status
	(&Reconciler{}).setOutcome(revision.Rollout{Obj: ro, Spec: &ro.Spec, Status: &ro.Status, Kind: "Rollout"}, out, paused)
	ro.Generation = generation
	got, why, err := argocd.Reads(ro, v1.GroupVersion.WithKind("Rollout"))
	if err != nil {
		t.Fatal(err)
	}
	return got, why
}
