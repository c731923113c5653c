package rollout

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	v1 "github.com/federator-dev/federator/apis/rollouts/v1alpha1"
)

// t0 is the fake clock's origin; steps say when they run as an offset
// from it.
var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// step is one call of Step in a scenario: the clock is at t0+at, the
// clusters named in healthy are healthy at the current revision (and no
// other), edit changes the input the way the controller would (a pause, a
// promotion, a gate, a new revision), and want is what must come out.
type step struct {
	at      time.Duration
	healthy []string
	edit    func(in *Input)
	want    want
}

// want is the observable result of one step. Events, Completed, Failed,
// CurrentStage and WaitingReason are always checked; the rest only when
// set.
type want struct {
	stage         string
	completed     bool
	failed        string
	waitingReason string
	// waiting, when set, is a part of Output.Waiting.
	waiting string
	// events are the reasons of the events, in order.
	events []string
	// clusters maps a cluster to "State rev Reason", e.g.
	// "Progressing 2 Released"; clusters not named are not checked.
	clusters map[string]string
	// messages maps a cluster to a part of its message.
	messages map[string]string
	// since maps a cluster to when it entered its state (offset from t0).
	since map[string]time.Duration
	// requeue is checked when checkRequeue is set (0 is a valid want).
	requeue      time.Duration
	checkRequeue bool
	// soakAt and pausedAt are offsets from t0; nil wants the field unset.
	// They are checked when checkSoak / checkPaused are set.
	soakAt, pausedAt       *time.Duration
	checkSoak, checkPaused bool
}

func at(d time.Duration) *time.Duration { return &d }

// statusAfter is the status the controller writes from a step and the
// next step reads as Prior: the machine's status plus the Completed and
// Failed conditions the controller derives from the output.
func statusAfter(out Output) v1.RolloutStatus {
	st := *out.Status.DeepCopy()
	cond := func(t string, ok bool) metav1.Condition {
		c := metav1.Condition{Type: t, Status: metav1.ConditionFalse, Reason: "No"}
		if ok {
			c.Status, c.Reason = metav1.ConditionTrue, "Yes"
		}
		return c
	}
	st.Conditions = []metav1.Condition{
		cond(v1.ConditionCompleted, out.Completed),
		cond(v1.ConditionFailed, out.Failed != ""),
	}
	return st
}

// newRevision is what the controller does when a template's content
// changes: the next revision, and the per-revision fields of the last
// status reset.
func newRevision(in *Input) {
	in.Revision++
	in.Prior.CurrentStage = ""
	in.Prior.SoakStartedAt = nil
}

// settled is the status of a revision that reached every cluster: each
// healthy at rev, the Completed condition True.
func settled(rev int64, stages []Stage) v1.RolloutStatus {
	var out Output
	out.Completed = true
	out.Status.Revision = rev
	for _, s := range stages {
		for _, c := range s.Clusters {
			out.Status.Clusters = append(out.Status.Clusters, v1.ClusterStatus{Name: c, Stage: s.Name, State: v1.StateHealthy,
				Revision: rev, Reason: v1.ReasonHealthy, Since: metav1.NewTime(t0.Add(-time.Hour))})
		}
	}
	return statusAfter(out)
}

// threeStages is canary: member1; mid: member2; rest: member3, member4.
func threeStages() []Stage {
	return []Stage{
		{Name: "canary", Clusters: []string{"member1"}, MaxConcurrency: 1},
		{Name: "mid", Clusters: []string{"member2"}, MaxConcurrency: 1},
		{Name: "rest", Clusters: []string{"member3", "member4"}, MaxConcurrency: 2},
	}
}

// revision2 is revision 2 of a rollout whose revision 1 reached every
// cluster, with a progress deadline of 10m.
func revision2(stages []Stage) Input {
	return Input{Revision: 2, Stages: stages, Prior: settled(1, stages), ProgressDeadline: 10 * time.Minute}
}

func with(in Input, edit func(in *Input)) Input {
	edit(&in)
	return in
}

func intOrStr(s string) *intstr.IntOrString {
	v := intstr.Parse(s)
	return &v
}

var (
	started   = v1.EventReasonStageStarted
	completed = v1.EventReasonStageCompleted
	clFailed  = v1.EventReasonClusterFailed
	roFailed  = v1.EventReasonRolloutFailed
	roDone    = v1.EventReasonRolloutCompleted
)

func TestStep(t *testing.T) {
	cases := []struct {
		name  string
		in    Input
		steps []step
	}{
		{
			name: "the first revision is released to every cluster at once, with no stage events, soaks, gates or pauses",
			in: Input{Revision: 1, Initial: true, ProgressDeadline: 10 * time.Minute, Stages: with(Input{Stages: threeStages()}, func(in *Input) {
				in.Stages[0].MinSuccessTime = time.Hour
				in.Stages[1].Pause = true
				in.Stages[2].GateHold = "gate 'smoke' is closed"
			}).Stages},
			steps: []step{
				{at: 0, want: want{waitingReason: v1.ReasonStageProgressing, clusters: map[string]string{
					"member1": "Progressing 1 Released", "member2": "Progressing 1 Released",
					"member3": "Progressing 1 Released", "member4": "Progressing 1 Released",
				}, requeue: 10 * time.Minute, checkRequeue: true}},
				{at: time.Minute, healthy: []string{"member1"}, want: want{waitingReason: v1.ReasonStageProgressing, clusters: map[string]string{
					"member1": "Healthy 1 Healthy", "member2": "Progressing 1 Released",
				}, requeue: 9 * time.Minute, checkRequeue: true, checkSoak: true}},
				{at: 2 * time.Minute, healthy: []string{"member1", "member2", "member3", "member4"}, want: want{completed: true, clusters: map[string]string{
					"member1": "Healthy 1 Healthy", "member4": "Healthy 1 Healthy",
				}, checkRequeue: true, checkSoak: true}},
				{at: 3 * time.Minute, healthy: []string{"member1", "member2", "member3", "member4"}, want: want{completed: true}},
			},
		},
		{
			name: "a new revision goes stage by stage, each stage starting when the one before is healthy, and says it completed once",
			in:   revision2(threeStages()),
			steps: []step{
				{at: 0, want: want{stage: "canary", waitingReason: v1.ReasonStageProgressing, events: []string{started},
					clusters: map[string]string{
						"member1": "Progressing 2 Released", "member2": "Pending 1 WaitingForStage",
						"member3": "Pending 1 WaitingForStage", "member4": "Pending 1 WaitingForStage",
					},
					messages: map[string]string{
						"member2": "stage 'mid' waits for stage 'canary' to be healthy",
						"member3": "stage 'rest' waits for stage 'canary' to be healthy",
					},
					requeue: 10 * time.Minute, checkRequeue: true}},
				{at: time.Minute, want: want{stage: "canary", waitingReason: v1.ReasonStageProgressing, waiting: "0 of 1 clusters healthy",
					clusters: map[string]string{"member1": "Progressing 2 Released", "member2": "Pending 1 WaitingForStage"},
					since:    map[string]time.Duration{"member1": 0, "member2": 0},
					requeue:  9 * time.Minute, checkRequeue: true}},
				{at: 2 * time.Minute, healthy: []string{"member1"}, want: want{stage: "mid", waitingReason: v1.ReasonStageProgressing,
					events: []string{completed, started},
					clusters: map[string]string{
						"member1": "Healthy 2 Healthy", "member2": "Progressing 2 Released",
						"member3": "Pending 1 WaitingForStage", "member4": "Pending 1 WaitingForStage",
					},
					messages: map[string]string{"member3": "stage 'rest' waits for stage 'mid' to be healthy"}}},
				{at: 3 * time.Minute, healthy: []string{"member1", "member2"}, want: want{stage: "rest", waitingReason: v1.ReasonStageProgressing,
					events: []string{completed, started},
					clusters: map[string]string{
						"member2": "Healthy 2 Healthy", "member3": "Progressing 2 Released", "member4": "Progressing 2 Released",
					}}},
				{at: 4 * time.Minute, healthy: []string{"member1", "member2", "member3"}, want: want{stage: "rest", waitingReason: v1.ReasonStageProgressing,
					waiting: "1 of 2 clusters healthy"}},
				{at: 5 * time.Minute, healthy: []string{"member1", "member2", "member3", "member4"}, want: want{completed: true,
					events: []string{completed, roDone},
					clusters: map[string]string{
						"member1": "Healthy 2 Healthy", "member2": "Healthy 2 Healthy",
						"member3": "Healthy 2 Healthy", "member4": "Healthy 2 Healthy",
					},
					checkRequeue: true, checkSoak: true}},
				{at: 6 * time.Minute, healthy: []string{"member1", "member2", "member3", "member4"}, want: want{completed: true,
					since: map[string]time.Duration{"member4": 5 * time.Minute}}},
			},
		},
		{
			name: "a stage with maxConcurrency 1 releases its second cluster when the first is healthy",
			in: revision2([]Stage{
				{Name: "one", Clusters: []string{"member1", "member2"}, MaxConcurrency: 1},
				{Name: "two", Clusters: []string{"member3"}, MaxConcurrency: 1},
			}),
			steps: []step{
				{at: 0, want: want{stage: "one", waitingReason: v1.ReasonStageProgressing, events: []string{started},
					clusters: map[string]string{"member1": "Progressing 2 Released", "member2": "Pending 1 WaitingForConcurrency", "member3": "Pending 1 WaitingForStage"},
					messages: map[string]string{"member2": "stage 'one' releases 1 cluster(s) at a time"}}},
				{at: time.Minute, want: want{stage: "one", waitingReason: v1.ReasonStageProgressing,
					clusters: map[string]string{"member1": "Progressing 2 Released", "member2": "Pending 1 WaitingForConcurrency"}}},
				{at: 2 * time.Minute, healthy: []string{"member1"}, want: want{stage: "one", waitingReason: v1.ReasonStageProgressing,
					clusters: map[string]string{"member1": "Healthy 2 Healthy", "member2": "Progressing 2 Released", "member3": "Pending 1 WaitingForStage"},
					requeue:  10 * time.Minute, checkRequeue: true}},
				{at: 3 * time.Minute, healthy: []string{"member1", "member2"}, want: want{stage: "two", waitingReason: v1.ReasonStageProgressing,
					events:   []string{completed, started},
					clusters: map[string]string{"member3": "Progressing 2 Released"}}},
			},
		},
		{
			name: "a stage with maxConcurrency 2 of 3 releases two, then the third",
			in: revision2([]Stage{
				{Name: "all", Clusters: []string{"member1", "member2", "member3"}, MaxConcurrency: scaled(intOrStr("50%"), 3, 3, true)},
			}),
			steps: []step{
				{at: 0, want: want{stage: "all", waitingReason: v1.ReasonStageProgressing, events: []string{started},
					clusters: map[string]string{"member1": "Progressing 2 Released", "member2": "Progressing 2 Released", "member3": "Pending 1 WaitingForConcurrency"},
					messages: map[string]string{"member3": "releases 2 cluster(s) at a time"}}},
				{at: time.Minute, healthy: []string{"member2"}, want: want{stage: "all", waitingReason: v1.ReasonStageProgressing,
					clusters: map[string]string{"member1": "Progressing 2 Released", "member2": "Healthy 2 Healthy", "member3": "Progressing 2 Released"}}},
				{at: 2 * time.Minute, healthy: []string{"member1", "member2", "member3"}, want: want{completed: true, events: []string{completed, roDone}}},
			},
		},
		{
			name: "a healthy stage soaks for its minSuccessTime before the next starts, and a stage that soaked does not soak again",
			in: revision2(with(Input{Stages: threeStages()}, func(in *Input) {
				in.Stages[0].MinSuccessTime = 30 * time.Minute
			}).Stages),
			steps: []step{
				{at: 0, want: want{stage: "canary", waitingReason: v1.ReasonStageProgressing, events: []string{started}}},
				{at: 5 * time.Minute, healthy: []string{"member1"}, want: want{stage: "canary", waitingReason: v1.ReasonStageSoaking,
					waiting: "soaks for 30m0s more", soakAt: at(5 * time.Minute), checkSoak: true, requeue: 30 * time.Minute, checkRequeue: true,
					clusters: map[string]string{"member2": "Pending 1 WaitingForStage"},
					messages: map[string]string{"member2": "stage 'mid' waits for stage 'canary' to soak"}}},
				{at: 20 * time.Minute, healthy: []string{"member1"}, want: want{stage: "canary", waitingReason: v1.ReasonStageSoaking,
					waiting: "soaks for 15m0s more", soakAt: at(5 * time.Minute), checkSoak: true, requeue: 15 * time.Minute, checkRequeue: true,
					clusters: map[string]string{"member2": "Pending 1 WaitingForStage"}}},
				{at: 35*time.Minute - time.Second, healthy: []string{"member1"}, want: want{stage: "canary", waitingReason: v1.ReasonStageSoaking,
					requeue: time.Second, checkRequeue: true, clusters: map[string]string{"member2": "Pending 1 WaitingForStage"}}},
				{at: 35 * time.Minute, healthy: []string{"member1"}, want: want{stage: "mid", waitingReason: v1.ReasonStageProgressing,
					events: []string{completed, started}, checkSoak: true,
					clusters: map[string]string{"member2": "Progressing 2 Released"}}},
				{at: 36 * time.Minute, healthy: []string{"member1"}, want: want{stage: "mid", waitingReason: v1.ReasonStageProgressing,
					checkSoak: true, clusters: map[string]string{"member2": "Progressing 2 Released"}}},
				{at: 40 * time.Minute, healthy: []string{"member1", "member2"}, want: want{stage: "rest", waitingReason: v1.ReasonStageProgressing,
					events: []string{completed, started}, checkSoak: true,
					clusters: map[string]string{"member3": "Progressing 2 Released", "member4": "Progressing 2 Released"}}},
				{at: 41 * time.Minute, healthy: []string{"member1", "member2", "member3", "member4"}, want: want{completed: true,
					events: []string{completed, roDone}, checkSoak: true}},
			},
		},
		{
			name: "a cluster that turns unhealthy during the soak starts the soak over once it is healthy again, and its progress deadline does not apply again",
			in: revision2(with(Input{Stages: threeStages()}, func(in *Input) {
				in.Stages[0].MinSuccessTime = 30 * time.Minute
			}).Stages),
			steps: []step{
				{at: 0, want: want{stage: "canary", waitingReason: v1.ReasonStageProgressing, events: []string{started}}},
				{at: 5 * time.Minute, healthy: []string{"member1"}, want: want{stage: "canary", waitingReason: v1.ReasonStageSoaking,
					soakAt: at(5 * time.Minute), checkSoak: true}},
				{at: 10 * time.Minute, want: want{stage: "canary", waitingReason: v1.ReasonStageProgressing, checkSoak: true,
					clusters: map[string]string{"member1": "Progressing 2 UnhealthyAgain"}, since: map[string]time.Duration{"member1": 10 * time.Minute},
					requeue: 0, checkRequeue: true}},
				// Past the progress deadline of 10m: a blip is no failure.
				{at: 11 * time.Minute, want: want{stage: "canary", waitingReason: v1.ReasonStageProgressing,
					clusters: map[string]string{"member1": "Progressing 2 UnhealthyAgain"}}},
				{at: 25 * time.Minute, healthy: []string{"member1"}, want: want{stage: "canary", waitingReason: v1.ReasonStageSoaking,
					soakAt: at(25 * time.Minute), checkSoak: true, requeue: 30 * time.Minute, checkRequeue: true}},
				{at: 50 * time.Minute, healthy: []string{"member1"}, want: want{stage: "canary", waitingReason: v1.ReasonStageSoaking,
					clusters: map[string]string{"member2": "Pending 1 WaitingForStage"}}},
				{at: 55 * time.Minute, healthy: []string{"member1"}, want: want{stage: "mid", waitingReason: v1.ReasonStageProgressing,
					events: []string{completed, started}}},
			},
		},
		{
			name: "a released cluster that a suspension holds waits as Held without its progress deadline running, and goes on once released",
			in:   revision2(threeStages()),
			steps: []step{
				{at: 0, edit: func(in *Input) { in.HeldElsewhere = map[string]string{"member1": "suspended by annotation"} },
					// Released in this step: the hold is seen from the next.
					want: want{stage: "canary", waitingReason: v1.ReasonStageProgressing, events: []string{started},
						clusters: map[string]string{"member1": "Progressing 2 Released", "member2": "Pending 1 WaitingForStage"}}},
				{at: time.Minute, want: want{stage: "canary", waitingReason: v1.ReasonStageProgressing,
					clusters: map[string]string{"member1": "Held 2 HeldElsewhere"},
					messages: map[string]string{"member1": "suspended by annotation"}}},
				{at: 15 * time.Minute, want: want{stage: "canary", waitingReason: v1.ReasonStageProgressing,
					clusters: map[string]string{"member1": "Held 2 HeldElsewhere"}, since: map[string]time.Duration{"member1": time.Minute}}},
				{at: 16 * time.Minute, edit: func(in *Input) { in.HeldElsewhere = nil }, want: want{stage: "canary", waitingReason: v1.ReasonStageProgressing,
					clusters: map[string]string{"member1": "Progressing 2 Released"}, since: map[string]time.Duration{"member1": 16 * time.Minute},
					requeue: 10 * time.Minute, checkRequeue: true}},
				{at: 17 * time.Minute, healthy: []string{"member1"}, want: want{stage: "mid", waitingReason: v1.ReasonStageProgressing,
					events: []string{completed, started}}},
			},
		},
		{
			name: "onFailure Rollback puts the failed canary back on the revision that was healthy there, and it stays there for the revision",
			in:   with(revision2(threeStages()), func(in *Input) { in.Rollback = true }),
			steps: []step{
				{at: 0, want: want{stage: "canary", waitingReason: v1.ReasonStageProgressing, events: []string{started},
					clusters: map[string]string{"member1": "Progressing 2 Released"}}},
				{at: 10 * time.Minute, want: want{stage: "canary", failed: "canary", waitingReason: v1.ReasonStageFailed,
					events:   []string{clFailed, roFailed, v1.EventReasonRolledBack},
					clusters: map[string]string{"member1": "RolledBack 1 RolledBack", "member2": "Held 1 RolloutFailed"},
					messages: map[string]string{"member1": "rolled back to revision 1, the last healthy there: stage 'canary' failed (onFailure: Rollback); it had failed: not healthy within the progress deadline (10m0s) of revision 2"}}},
				{at: 11 * time.Minute, healthy: []string{"member1"}, want: want{stage: "canary", failed: "canary", waitingReason: v1.ReasonStageFailed,
					clusters: map[string]string{"member1": "RolledBack 1 RolledBack", "member3": "Held 1 RolloutFailed"}}},
				{at: 12 * time.Minute, edit: newRevision, want: want{stage: "canary", waitingReason: v1.ReasonStageProgressing, events: []string{started},
					clusters: map[string]string{"member1": "Progressing 3 Released", "member2": "Pending 1 WaitingForStage"}}},
			},
		},
		{
			name: "onFailure Rollback with no earlier healthy revision keeps the cluster failed and says why",
			in: with(revision2(threeStages()), func(in *Input) {
				in.Rollback = true
				in.Prior.Clusters[0].State = v1.StateFailed
			}),
			steps: []step{
				{at: 0, want: want{stage: "canary", waitingReason: v1.ReasonStageProgressing, events: []string{started}}},
				{at: 10 * time.Minute, want: want{stage: "canary", failed: "canary", waitingReason: v1.ReasonStageFailed,
					events:   []string{clFailed, roFailed},
					clusters: map[string]string{"member1": "Failed 2 ProgressDeadlineExceeded"},
					messages: map[string]string{"member1": "no earlier healthy revision to roll back to"}}},
			},
		},
		{
			name: "an abort rolls back every cluster that got the revision and holds the others",
			in:   revision2(threeStages()),
			steps: []step{
				{at: 0, want: want{stage: "canary", waitingReason: v1.ReasonStageProgressing, events: []string{started}}},
				{at: time.Minute, healthy: []string{"member1"}, want: want{stage: "mid", waitingReason: v1.ReasonStageProgressing,
					events: []string{completed, started}}},
				{at: 2 * time.Minute, healthy: []string{"member1"}, edit: func(in *Input) { in.Aborted = true }, want: want{
					waitingReason: v1.ReasonAborted, waiting: "revision 2 was aborted",
					events: []string{v1.EventReasonRolledBack, v1.EventReasonRolledBack, v1.EventReasonRolloutAborted},
					clusters: map[string]string{"member1": "RolledBack 1 RolledBack", "member2": "RolledBack 1 RolledBack",
						"member3": "Held 1 Aborted", "member4": "Held 1 Aborted"}}},
			},
		},
		{
			name: "a released cluster not healthy by the progress deadline fails, and with maxFailures 0 the rollout fails and holds the later stages",
			in:   revision2(threeStages()),
			steps: []step{
				{at: 0, want: want{stage: "canary", waitingReason: v1.ReasonStageProgressing, events: []string{started},
					requeue: 10 * time.Minute, checkRequeue: true}},
				{at: 5 * time.Minute, want: want{stage: "canary", waitingReason: v1.ReasonStageProgressing,
					requeue: 5 * time.Minute, checkRequeue: true}},
				{at: 10 * time.Minute, want: want{stage: "canary", failed: "canary", waitingReason: v1.ReasonStageFailed,
					waiting: "1 of 1 clusters failed (member1), more than maxFailures 0",
					events:  []string{clFailed, roFailed},
					clusters: map[string]string{
						"member1": "Failed 2 ProgressDeadlineExceeded", "member2": "Held 1 RolloutFailed",
						"member3": "Held 1 RolloutFailed", "member4": "Held 1 RolloutFailed",
					},
					messages: map[string]string{
						"member1": "not healthy within the progress deadline (10m0s) of revision 2",
						"member2": "stage 'canary' failed; this cluster keeps the revision it has",
					},
					since:        map[string]time.Duration{"member1": 10 * time.Minute, "member2": 10 * time.Minute},
					checkRequeue: true}},
				{at: 15 * time.Minute, want: want{stage: "canary", failed: "canary", waitingReason: v1.ReasonStageFailed,
					clusters: map[string]string{
						"member1": "Failed 2 ProgressDeadlineExceeded", "member2": "Held 1 RolloutFailed",
						"member3": "Held 1 RolloutFailed", "member4": "Held 1 RolloutFailed",
					},
					since:        map[string]time.Duration{"member1": 10 * time.Minute, "member2": 10 * time.Minute, "member4": 10 * time.Minute},
					checkRequeue: true}},
				// A failed cluster stays failed at this revision even if
				// it turns healthy: the rollout still holds.
				{at: 20 * time.Minute, healthy: []string{"member1"}, want: want{stage: "canary", failed: "canary", waitingReason: v1.ReasonStageFailed,
					clusters: map[string]string{"member1": "Failed 2 ProgressDeadlineExceeded", "member2": "Held 1 RolloutFailed"}}},
			},
		},
		{
			name: "a failure in a stage releasing one cluster at a time holds the stage's own pending clusters too",
			in: revision2([]Stage{
				{Name: "one", Clusters: []string{"member1", "member2"}, MaxConcurrency: 1},
				{Name: "two", Clusters: []string{"member3"}, MaxConcurrency: 1},
			}),
			steps: []step{
				{at: 0, want: want{stage: "one", waitingReason: v1.ReasonStageProgressing, events: []string{started}}},
				{at: 10 * time.Minute, want: want{stage: "one", failed: "one", waitingReason: v1.ReasonStageFailed,
					events: []string{clFailed, roFailed},
					clusters: map[string]string{
						"member1": "Failed 2 ProgressDeadlineExceeded", "member2": "Held 1 RolloutFailed", "member3": "Held 1 RolloutFailed",
					}}},
			},
		},
		{
			name: "a new revision after a failure starts over from the first stage and releases the held clusters in their turn",
			in:   revision2(threeStages()),
			steps: []step{
				{at: 0, want: want{stage: "canary", waitingReason: v1.ReasonStageProgressing, events: []string{started}}},
				{at: 10 * time.Minute, want: want{stage: "canary", failed: "canary", waitingReason: v1.ReasonStageFailed, events: []string{clFailed, roFailed}}},
				{at: 11 * time.Minute, edit: newRevision, want: want{stage: "canary", waitingReason: v1.ReasonStageProgressing, events: []string{started},
					clusters: map[string]string{
						"member1": "Progressing 3 Released", "member2": "Pending 1 WaitingForStage", "member4": "Pending 1 WaitingForStage",
					}}},
				{at: 12 * time.Minute, healthy: []string{"member1"}, want: want{stage: "mid", waitingReason: v1.ReasonStageProgressing,
					events:   []string{completed, started},
					clusters: map[string]string{"member2": "Progressing 3 Released"}}},
			},
		},
		{
			name: "a new revision arriving mid-rollout restarts from the first stage, and clusters already on the previous revision keep it until their stage comes",
			in:   revision2(threeStages()),
			steps: []step{
				{at: 0, want: want{stage: "canary", waitingReason: v1.ReasonStageProgressing, events: []string{started}}},
				{at: time.Minute, healthy: []string{"member1"}, want: want{stage: "mid", waitingReason: v1.ReasonStageProgressing,
					events:   []string{completed, started},
					clusters: map[string]string{"member1": "Healthy 2 Healthy", "member2": "Progressing 2 Released"}}},
				{at: 2 * time.Minute, edit: newRevision, want: want{stage: "canary", waitingReason: v1.ReasonStageProgressing,
					events: []string{started},
					clusters: map[string]string{
						"member1": "Progressing 3 Released", "member2": "Pending 2 WaitingForStage",
						"member3": "Pending 1 WaitingForStage", "member4": "Pending 1 WaitingForStage",
					},
					messages: map[string]string{"member2": "stage 'mid' waits for stage 'canary' to be healthy"}}},
				{at: 3 * time.Minute, healthy: []string{"member1"}, want: want{stage: "mid", waitingReason: v1.ReasonStageProgressing,
					events:   []string{completed, started},
					clusters: map[string]string{"member1": "Healthy 3 Healthy", "member2": "Progressing 3 Released", "member3": "Pending 1 WaitingForStage"}}},
			},
		},
		{
			name: "a stage whose gate is closed waits for it, with its clusters pending on the gate's message, and starts once the gate opens",
			in: revision2(with(Input{Stages: threeStages()}, func(in *Input) {
				in.Stages[1].GateHold = "gate 'smoke-tests' is closed: job smoke has not succeeded"
			}).Stages),
			steps: []step{
				{at: 0, want: want{stage: "canary", waitingReason: v1.ReasonStageProgressing, events: []string{started}}},
				{at: time.Minute, healthy: []string{"member1"}, want: want{stage: "mid", waitingReason: v1.ReasonWaitingForGate,
					waiting: "gate 'smoke-tests' is closed: job smoke has not succeeded",
					events:  []string{completed},
					clusters: map[string]string{
						"member1": "Healthy 2 Healthy", "member2": "Pending 1 WaitingForStage", "member3": "Pending 1 WaitingForStage",
					},
					messages: map[string]string{
						"member2": "stage 'mid': gate 'smoke-tests' is closed: job smoke has not succeeded",
						"member3": "stage 'rest' waits for stage 'mid'",
					},
					checkRequeue: true}},
				{at: 2 * time.Minute, healthy: []string{"member1"}, want: want{stage: "mid", waitingReason: v1.ReasonWaitingForGate,
					clusters: map[string]string{"member2": "Pending 1 WaitingForStage"}}},
				{at: 3 * time.Minute, healthy: []string{"member1"}, edit: func(in *Input) { in.Stages[1].GateHold = "" },
					want: want{stage: "mid", waitingReason: v1.ReasonStageProgressing, events: []string{started},
						clusters: map[string]string{"member2": "Progressing 2 Released", "member3": "Pending 1 WaitingForStage"}}},
			},
		},
		{
			name: "a gate that was open and closes before its stage starts holds the stage, and the status names the gate",
			in: revision2(with(Input{Stages: threeStages()}, func(in *Input) {
				in.Stages[0].MinSuccessTime = 30 * time.Minute
			}).Stages),
			steps: []step{
				{at: 0, want: want{stage: "canary", waitingReason: v1.ReasonStageProgressing, events: []string{started}}},
				{at: time.Minute, healthy: []string{"member1"}, want: want{stage: "canary", waitingReason: v1.ReasonStageSoaking,
					clusters: map[string]string{"member2": "Pending 1 WaitingForStage"},
					messages: map[string]string{"member2": "stage 'mid' waits for stage 'canary' to soak"}}},
				{at: 10 * time.Minute, healthy: []string{"member1"}, edit: func(in *Input) {
					in.Stages[1].GateHold = "waiting approval, gate 'shop/smoke' is closed (closed by alice)"
				}, want: want{stage: "canary", waitingReason: v1.ReasonStageSoaking}},
				{at: 31 * time.Minute, healthy: []string{"member1"}, want: want{stage: "mid", waitingReason: v1.ReasonWaitingForGate,
					waiting: "gate 'shop/smoke' is closed", events: []string{completed},
					clusters: map[string]string{"member1": "Healthy 2 Healthy", "member2": "Pending 1 WaitingForStage", "member3": "Pending 1 WaitingForStage"},
					messages: map[string]string{"member2": "stage 'mid': waiting approval, gate 'shop/smoke' is closed (closed by alice)"}}},
				{at: 40 * time.Minute, healthy: []string{"member1"}, want: want{stage: "mid", waitingReason: v1.ReasonWaitingForGate,
					clusters: map[string]string{"member2": "Pending 1 WaitingForStage"}}},
				{at: 41 * time.Minute, healthy: []string{"member1"}, edit: func(in *Input) { in.Stages[1].GateHold = "" },
					want: want{stage: "mid", waitingReason: v1.ReasonStageProgressing, events: []string{started},
						clusters: map[string]string{"member2": "Progressing 2 Released"}}},
			},
		},
		{
			name: "a stage that pauses waits until a person promotes that stage",
			in: revision2(with(Input{Stages: threeStages()}, func(in *Input) {
				in.Stages[1].Pause = true
			}).Stages),
			steps: []step{
				{at: 0, want: want{stage: "canary", waitingReason: v1.ReasonStageProgressing, events: []string{started}}},
				{at: time.Minute, healthy: []string{"member1"}, want: want{stage: "mid", waitingReason: v1.ReasonWaitingForPromotion,
					waiting: "`federator rollout promote`", events: []string{completed},
					clusters: map[string]string{"member2": "Pending 1 WaitingForStage"},
					messages: map[string]string{"member2": "stage 'mid' pauses until promoted"}}},
				{at: 2 * time.Minute, healthy: []string{"member1"}, edit: func(in *Input) { in.Promoted = "canary" },
					want: want{stage: "mid", waitingReason: v1.ReasonWaitingForPromotion,
						clusters: map[string]string{"member2": "Pending 1 WaitingForStage"}}},
				{at: 3 * time.Minute, healthy: []string{"member1"}, edit: func(in *Input) { in.Promoted = "mid" },
					want: want{stage: "mid", waitingReason: v1.ReasonStageProgressing, events: []string{started},
						clusters: map[string]string{"member2": "Progressing 2 Released"}}},
			},
		},
		{
			name: "a pause during a soak stops the soak clock, and the resume moves the soak start by the time spent paused",
			in: revision2(with(Input{Stages: threeStages()}, func(in *Input) {
				in.Stages[0].MinSuccessTime = 30 * time.Minute
			}).Stages),
			steps: []step{
				{at: 0, want: want{stage: "canary", waitingReason: v1.ReasonStageProgressing, events: []string{started}}},
				{at: 5 * time.Minute, healthy: []string{"member1"}, want: want{stage: "canary", waitingReason: v1.ReasonStageSoaking,
					soakAt: at(5 * time.Minute), checkSoak: true, checkPaused: true}},
				{at: 15 * time.Minute, healthy: []string{"member1"}, edit: func(in *Input) { in.Paused = "maintenance window" },
					want: want{stage: "canary", waitingReason: v1.ReasonStageSoaking, waiting: "20m0s more",
						soakAt: at(5 * time.Minute), checkSoak: true, pausedAt: at(15 * time.Minute), checkPaused: true,
						checkRequeue: true}},
				{at: 24 * time.Minute, healthy: []string{"member1"}, want: want{stage: "canary", waitingReason: v1.ReasonStageSoaking,
					waiting: "20m0s more", soakAt: at(5 * time.Minute), checkSoak: true, pausedAt: at(15 * time.Minute), checkPaused: true,
					checkRequeue: true, clusters: map[string]string{"member2": "Pending 1 WaitingForStage"}}},
				// Past the soak's end had the clock not stopped: still soaking.
				{at: 40 * time.Minute, healthy: []string{"member1"}, want: want{stage: "canary", waitingReason: v1.ReasonStageSoaking,
					soakAt: at(5 * time.Minute), checkSoak: true, pausedAt: at(15 * time.Minute), checkPaused: true,
					clusters: map[string]string{"member2": "Pending 1 WaitingForStage"}}},
			},
		},
		{
			name: "a resume after 10 minutes of pause leaves the soak what was left of it",
			in: revision2(with(Input{Stages: threeStages()}, func(in *Input) {
				in.Stages[0].MinSuccessTime = 30 * time.Minute
			}).Stages),
			steps: []step{
				{at: 0, want: want{stage: "canary", waitingReason: v1.ReasonStageProgressing, events: []string{started}}},
				{at: 5 * time.Minute, healthy: []string{"member1"}, want: want{stage: "canary", waitingReason: v1.ReasonStageSoaking,
					soakAt: at(5 * time.Minute), checkSoak: true}},
				{at: 15 * time.Minute, healthy: []string{"member1"}, edit: func(in *Input) { in.Paused = "true" },
					want: want{stage: "canary", waitingReason: v1.ReasonStageSoaking, pausedAt: at(15 * time.Minute), checkPaused: true}},
				{at: 25 * time.Minute, healthy: []string{"member1"}, edit: func(in *Input) { in.Paused = "" },
					want: want{stage: "canary", waitingReason: v1.ReasonStageSoaking, waiting: "20m0s more",
						soakAt: at(15 * time.Minute), checkSoak: true, checkPaused: true,
						requeue: 20 * time.Minute, checkRequeue: true}},
				{at: 44 * time.Minute, healthy: []string{"member1"}, want: want{stage: "canary", waitingReason: v1.ReasonStageSoaking,
					soakAt: at(15 * time.Minute), checkSoak: true, requeue: time.Minute, checkRequeue: true,
					clusters: map[string]string{"member2": "Pending 1 WaitingForStage"}}},
				{at: 45 * time.Minute, healthy: []string{"member1"}, want: want{stage: "mid", waitingReason: v1.ReasonStageProgressing,
					events: []string{completed, started}, checkSoak: true,
					clusters: map[string]string{"member2": "Progressing 2 Released"}}},
			},
		},
		{
			name: "a stage that becomes healthy while paused starts its soak at the resume",
			in: revision2(with(Input{Stages: threeStages()}, func(in *Input) {
				in.Stages[0].MinSuccessTime = 30 * time.Minute
			}).Stages),
			steps: []step{
				{at: 0, want: want{stage: "canary", waitingReason: v1.ReasonStageProgressing, events: []string{started}}},
				{at: time.Minute, edit: func(in *Input) { in.Paused = "true" }, want: want{stage: "canary", waitingReason: v1.ReasonSuspended,
					pausedAt: at(time.Minute), checkPaused: true}},
				{at: 5 * time.Minute, healthy: []string{"member1"}, want: want{stage: "canary", waitingReason: v1.ReasonStageSoaking,
					soakAt: at(time.Minute), checkSoak: true, checkRequeue: true}},
				{at: 50 * time.Minute, healthy: []string{"member1"}, edit: func(in *Input) { in.Paused = "" },
					want: want{stage: "canary", waitingReason: v1.ReasonStageSoaking, soakAt: at(50 * time.Minute), checkSoak: true,
						checkPaused: true, requeue: 30 * time.Minute, checkRequeue: true}},
			},
		},
		{
			name: "while paused nothing new is released: a pending cluster of the current stage stays pending and says so",
			in: revision2([]Stage{
				{Name: "one", Clusters: []string{"member1", "member2"}, MaxConcurrency: 1},
				{Name: "two", Clusters: []string{"member3"}, MaxConcurrency: 1},
			}),
			steps: []step{
				{at: 0, want: want{stage: "one", waitingReason: v1.ReasonStageProgressing, events: []string{started}}},
				{at: time.Minute, healthy: []string{"member1"}, edit: func(in *Input) { in.Paused = "true" },
					want: want{stage: "one", waitingReason: v1.ReasonSuspended, pausedAt: at(time.Minute), checkPaused: true,
						clusters: map[string]string{"member1": "Healthy 2 Healthy", "member2": "Pending 1 WaitingForStage", "member3": "Pending 1 WaitingForStage"},
						messages: map[string]string{"member2": "the rollout is paused"}}},
				{at: 30 * time.Minute, healthy: []string{"member1"}, want: want{stage: "one", waitingReason: v1.ReasonSuspended,
					clusters: map[string]string{"member2": "Pending 1 WaitingForStage"}, since: map[string]time.Duration{"member2": 0}}},
				{at: 31 * time.Minute, healthy: []string{"member1"}, edit: func(in *Input) { in.Paused = "" },
					want: want{stage: "one", waitingReason: v1.ReasonStageProgressing, checkPaused: true,
						clusters: map[string]string{"member2": "Progressing 2 Released"}}},
			},
		},
		{
			name: "a rollout paused before its first stage releases nothing, and the resume starts the stage",
			in:   with(revision2(threeStages()), func(in *Input) { in.Paused = "true" }),
			steps: []step{
				{at: 0, want: want{stage: "canary", waitingReason: v1.ReasonSuspended, pausedAt: at(0), checkPaused: true,
					clusters:     map[string]string{"member1": "Pending 1 WaitingForStage", "member2": "Pending 1 WaitingForStage"},
					messages:     map[string]string{"member1": "stage 'canary': the rollout is paused", "member2": "stage 'mid' waits for stage 'canary'"},
					checkRequeue: true}},
				{at: time.Minute, edit: func(in *Input) { in.Paused = "" }, want: want{stage: "canary", waitingReason: v1.ReasonStageProgressing,
					events: []string{started}, clusters: map[string]string{"member1": "Progressing 2 Released"}}},
			},
		},
		{
			name: "clusters newly placed in a stage of a completed rollout are released, maxConcurrency at a time",
			in:   revision2([]Stage{{Name: "canary", Clusters: []string{"member1"}, MaxConcurrency: 1}, {Name: "rest", Clusters: []string{"member3"}, MaxConcurrency: 1}}),
			steps: []step{
				{at: 0, want: want{stage: "canary", waitingReason: v1.ReasonStageProgressing, events: []string{started}}},
				{at: time.Minute, healthy: []string{"member1"}, want: want{stage: "rest", waitingReason: v1.ReasonStageProgressing, events: []string{completed, started}}},
				{at: 2 * time.Minute, healthy: []string{"member1", "member3"}, want: want{completed: true, events: []string{completed, roDone}}},
				{at: 3 * time.Minute, healthy: []string{"member1", "member3"}, edit: func(in *Input) {
					in.Stages[0].Clusters = []string{"member1", "member5", "member6"}
				}, want: want{waitingReason: v1.ReasonStageProgressing, waiting: "member5, member6",
					clusters: map[string]string{
						"member1": "Healthy 2 Healthy", "member3": "Healthy 2 Healthy",
						"member5": "Progressing 2 Released", "member6": "Pending 0 WaitingForConcurrency",
					},
					messages: map[string]string{"member6": "stage 'canary' releases 1 cluster(s) at a time"},
					requeue:  10 * time.Minute, checkRequeue: true}},
				{at: 4 * time.Minute, healthy: []string{"member1", "member3", "member5"}, want: want{waitingReason: v1.ReasonStageProgressing,
					clusters: map[string]string{"member5": "Healthy 2 Healthy", "member6": "Progressing 2 Released"}}},
				{at: 5 * time.Minute, healthy: []string{"member1", "member3", "member5", "member6"}, want: want{completed: true, events: []string{roDone},
					clusters: map[string]string{"member6": "Healthy 2 Healthy"}}},
			},
		},
		{
			name: "a cluster newly placed in a stage already done mid-rollout is released without sending the rollout back to that stage",
			in: revision2(with(Input{Stages: threeStages()}, func(in *Input) {
				in.Stages[0].MinSuccessTime = 30 * time.Minute
				in.Stages[2].MaxConcurrency = 1
			}).Stages),
			steps: []step{
				{at: 0, want: want{stage: "canary", waitingReason: v1.ReasonStageProgressing, events: []string{started}}},
				{at: time.Minute, healthy: []string{"member1"}, want: want{stage: "canary", waitingReason: v1.ReasonStageSoaking}},
				{at: 31 * time.Minute, healthy: []string{"member1"}, want: want{stage: "mid", waitingReason: v1.ReasonStageProgressing, events: []string{completed, started}}},
				{at: 32 * time.Minute, healthy: []string{"member1", "member2"}, want: want{stage: "rest", waitingReason: v1.ReasonStageProgressing, events: []string{completed, started},
					clusters: map[string]string{"member3": "Progressing 2 Released", "member4": "Pending 1 WaitingForConcurrency"}}},
				{at: 33 * time.Minute, healthy: []string{"member1", "member2", "member3"}, edit: func(in *Input) {
					in.Stages[0].Clusters = []string{"member1", "member5"}
				}, want: want{stage: "rest", waitingReason: v1.ReasonStageProgressing,
					clusters: map[string]string{"member5": "Progressing 2 Released", "member4": "Progressing 2 Released"}}},
				{at: 34 * time.Minute, healthy: []string{"member1", "member2", "member3", "member5"}, want: want{stage: "rest", waitingReason: v1.ReasonStageProgressing,
					checkSoak: true, clusters: map[string]string{"member5": "Healthy 2 Healthy", "member4": "Progressing 2 Released"}}},
				{at: 35 * time.Minute, healthy: []string{"member1", "member2", "member3", "member4", "member5"}, want: want{completed: true,
					events: []string{completed, roDone}}},
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			runSteps(t, tc.in, tc.steps)
		})
	}
}

// runSteps runs the steps in order, each reading the status the one before
// wrote, and checks each step's output.
func runSteps(t *testing.T, in Input, steps []step) {
	t.Helper()
	for i, s := range steps {
		s.prepare(&in)
		out := Step(in)
		if problems := check(out, s.want); len(problems) > 0 {
			t.Errorf("step %d (t0+%s):\n  %s\noutput: %s", i, s.at, strings.Join(problems, "\n  "), describe(out))
		}
		in.Prior = statusAfter(out)
	}
}

// prepare sets in up for the step: the clock, the healthy clusters, the
// edit.
func (s step) prepare(in *Input) {
	in.Now = t0.Add(s.at)
	in.Healthy = map[string]bool{}
	for _, c := range s.healthy {
		in.Healthy[c] = true
	}
	if s.edit != nil {
		s.edit(in)
	}
}

// check says how out differs from w, and where out breaks what holds for
// every output.
func check(out Output, w want) []string {
	var p []string
	bad := func(format string, args ...any) { p = append(p, fmt.Sprintf(format, args...)) }
	if out.Status.CurrentStage != w.stage {
		bad("currentStage %q, want %q", out.Status.CurrentStage, w.stage)
	}
	if out.Completed != w.completed {
		bad("completed %v, want %v", out.Completed, w.completed)
	}
	if out.Failed != w.failed {
		bad("failed %q, want %q", out.Failed, w.failed)
	}
	if out.WaitingReason != w.waitingReason {
		bad("waitingReason %q, want %q", out.WaitingReason, w.waitingReason)
	}
	if w.waiting != "" && !strings.Contains(out.Waiting, w.waiting) {
		bad("waiting %q, want it to contain %q", out.Waiting, w.waiting)
	}
	if out.Completed != (out.Waiting == "") {
		bad("waiting %q with completed %v: a rollout not completed says what it waits for, and only then", out.Waiting, out.Completed)
	}
	var reasons []string
	for _, e := range out.Events {
		reasons = append(reasons, e.Reason)
	}
	if !slices.Equal(reasons, w.events) {
		bad("events %v, want %v", reasons, w.events)
	}
	byName := map[string]v1.ClusterStatus{}
	for _, c := range out.Status.Clusters {
		byName[c.Name] = c
		if (c.State == v1.StatePending || c.State == v1.StateHeld || c.State == v1.StateFailed) && c.Message == "" {
			bad("%s is %s with no message: it must say what it waits for", c.Name, c.State)
		}
		if c.Since.IsZero() {
			bad("%s has no since", c.Name)
		}
	}
	if !slices.IsSortedFunc(out.Status.Clusters, func(a, b v1.ClusterStatus) int { return strings.Compare(a.Name, b.Name) }) {
		bad("clusters not sorted by name")
	}
	for name, wc := range w.clusters {
		c, ok := byName[name]
		if got := fmt.Sprintf("%s %d %s", c.State, c.Revision, c.Reason); !ok || got != wc {
			bad("%s: %q, want %q", name, got, wc)
		}
	}
	for name, wm := range w.messages {
		if c := byName[name]; !strings.Contains(c.Message, wm) {
			bad("%s: message %q, want it to contain %q", name, c.Message, wm)
		}
	}
	for name, ws := range w.since {
		if c := byName[name]; !c.Since.Time.Equal(t0.Add(ws)) {
			bad("%s: since t0+%s, want t0+%s", name, c.Since.Sub(t0), ws)
		}
	}
	if w.checkRequeue && out.RequeueAfter != w.requeue {
		bad("requeueAfter %s, want %s", out.RequeueAfter, w.requeue)
	}
	if w.checkSoak {
		if got := offset(out.Status.SoakStartedAt); got != show(w.soakAt) {
			bad("soakStartedAt %s, want %s", got, show(w.soakAt))
		}
	}
	if w.checkPaused {
		if got := offset(out.Status.PausedAt); got != show(w.pausedAt) {
			bad("pausedAt %s, want %s", got, show(w.pausedAt))
		}
	}
	return p
}

func offset(t *metav1.Time) string {
	if t == nil {
		return "unset"
	}
	return "t0+" + t.Sub(t0).String()
}

func show(d *time.Duration) string {
	if d == nil {
		return "unset"
	}
	return "t0+" + d.String()
}

func describe(out Output) string {
	var b strings.Builder
	fmt.Fprintf(&b, "stage=%q completed=%v failed=%q waiting=%q (%s) requeue=%s soak=%s paused=%s\n",
		out.Status.CurrentStage, out.Completed, out.Failed, out.Waiting, out.WaitingReason, out.RequeueAfter,
		offset(out.Status.SoakStartedAt), offset(out.Status.PausedAt))
	for _, e := range out.Events {
		fmt.Fprintf(&b, "  event %s: %s\n", e.Reason, e.Message)
	}
	for _, c := range out.Status.Clusters {
		fmt.Fprintf(&b, "  %s [%s] %s rev=%d %s since=t0+%s: %s\n", c.Name, c.Stage, c.State, c.Revision, c.Reason, c.Since.Sub(t0), c.Message)
	}
	return b.String()
}

func TestStepMaxFailures(t *testing.T) {
	// Stage one has two clusters; member2 misses the deadline while
	// member1 is healthy.
	stages := []Stage{
		{Name: "one", Clusters: []string{"member1", "member2"}, MaxConcurrency: 2},
		{Name: "two", Clusters: []string{"member3"}, MaxConcurrency: 1},
	}
	continues := []step{
		{at: 0, want: want{stage: "one", waitingReason: v1.ReasonStageProgressing, events: []string{started}}},
		{at: 10 * time.Minute, healthy: []string{"member1"}, want: want{stage: "two", waitingReason: v1.ReasonStageProgressing,
			events:   []string{clFailed, completed, started},
			clusters: map[string]string{"member2": "Failed 2 ProgressDeadlineExceeded", "member3": "Progressing 2 Released"}}},
		{at: 11 * time.Minute, healthy: []string{"member1", "member3"}, want: want{completed: true, events: []string{completed, roDone},
			clusters: map[string]string{"member2": "Failed 2 ProgressDeadlineExceeded"}}},
	}
	fails := []step{
		{at: 0, want: want{stage: "one", waitingReason: v1.ReasonStageProgressing, events: []string{started}}},
		{at: 10 * time.Minute, healthy: []string{"member1"}, want: want{stage: "one", failed: "one", waitingReason: v1.ReasonStageFailed,
			events:   []string{clFailed, roFailed},
			clusters: map[string]string{"member2": "Failed 2 ProgressDeadlineExceeded", "member3": "Held 1 RolloutFailed"}}},
		{at: 11 * time.Minute, healthy: []string{"member1", "member3"}, want: want{stage: "one", failed: "one", waitingReason: v1.ReasonStageFailed,
			clusters: map[string]string{"member3": "Held 1 RolloutFailed"}}},
	}
	cases := []struct {
		name        string
		maxFailures *intstr.IntOrString
		steps       []step
	}{
		{"maxFailures 1 lets one of two clusters fail and the rollout go on", intOrStr("1"), continues},
		{"maxFailures 50% of two clusters lets one fail", intOrStr("50%"), continues},
		{"maxFailures 49% of two clusters lets none fail", intOrStr("49%"), fails},
		{"maxFailures 0 lets none fail", intOrStr("0"), fails},
		{"no maxFailures lets none fail", nil, fails},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := revision2(stages)
			in.MaxFailures = tc.maxFailures
			runSteps(t, in, tc.steps)
		})
	}
}

func TestScaled(t *testing.T) {
	cases := []struct {
		name    string
		v       *intstr.IntOrString
		total   int
		def     int
		roundUp bool
		want    int
	}{
		{"unset is the default", nil, 4, 7, false, 7},
		{"a number is itself", intOrStr("1"), 4, 0, false, 1},
		{"a number may exceed the total", intOrStr("9"), 4, 0, true, 9},
		{"50% of 3 rounds up to 2 for concurrency", intOrStr("50%"), 3, 3, true, 2},
		{"50% of 3 rounds down to 1 for failures", intOrStr("50%"), 3, 0, false, 1},
		{"50% of 2 is 1", intOrStr("50%"), 2, 0, false, 1},
		{"49% of 2 rounds down to 0", intOrStr("49%"), 2, 0, false, 0},
		{"1% of 2 rounds up to 1", intOrStr("1%"), 2, 2, true, 1},
		{"100% of 4 is 4", intOrStr("100%"), 4, 0, true, 4},
		{"0% is 0", intOrStr("0%"), 4, 4, true, 0},
		{"a number written as a string is that number, not a percentage", &intstr.IntOrString{Type: intstr.String, StrVal: "2"}, 4, 0, false, 2},
		{"a percentage with trailing junk is invalid: the default", intOrStr("50abc%"), 4, 0, false, 0},
		{"a percentage with a typo is invalid: the default", intOrStr("5O%"), 4, 0, false, 0},
		{"a bare percent sign is invalid: the default", intOrStr("%"), 4, 0, false, 0},
		{"a negative percentage is invalid: the default", intOrStr("-50%"), 4, 0, false, 0},
		{"a negative number is invalid: the default", intOrStr("-1"), 4, 0, false, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := scaled(tc.v, tc.total, tc.def, tc.roundUp); got != tc.want {
				t.Errorf("scaled(%v, %d, %d, %v) = %d, want %d", tc.v, tc.total, tc.def, tc.roundUp, got, tc.want)
			}
		})
	}
}

// An unreadable maxConcurrency (stored before admission refused it)
// releases one cluster at a time and says so; it never releases them all.
func TestConcurrency(t *testing.T) {
	cases := []struct {
		name    string
		v       *intstr.IntOrString
		total   int
		want    int
		problem string
	}{
		{"unset releases the whole stage", nil, 3, 3, ""},
		{"unset on an empty stage is still at least 1", nil, 0, 1, ""},
		{"a number is itself", intOrStr("2"), 3, 2, ""},
		{"a percentage rounds up", intOrStr("50%"), 3, 2, ""},
		{"a percentage of an empty stage is no problem", intOrStr("10%"), 0, 0, ""},
		{"a typo in a percentage releases one at a time, not all", intOrStr("5O%"), 4, 1, `maxConcurrency "5O%" is not a whole number or a percentage: one cluster at a time until it is fixed (write a number from 1 or a percentage like 25%)`},
		{"a negative number releases one at a time", &intstr.IntOrString{Type: intstr.Int, IntVal: -1}, 4, 1, `maxConcurrency "-1" is not a whole number or a percentage`},
		{"a negative percentage releases one at a time", intOrStr("-50%"), 4, 1, `maxConcurrency "-50%" is not a whole number or a percentage`},
		{"0 would stall the stage: one at a time", &intstr.IntOrString{Type: intstr.Int, IntVal: 0}, 4, 1, `maxConcurrency "0" would release none and stall the stage`},
		{"0% would stall the stage: one at a time", intOrStr("0%"), 4, 1, `maxConcurrency "0%" would release none and stall the stage`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, problem := concurrency(tc.v, tc.total)
			if got != tc.want || tc.problem == "" && problem != "" || !strings.Contains(problem, tc.problem) {
				t.Errorf("concurrency(%v, %d) = %d, %q; want %d, %q", tc.v, tc.total, got, problem, tc.want, tc.problem)
			}
		})
	}
}

func TestStepNegativeMaxFailuresDoesNotFailAHealthyStage(t *testing.T) {
	in := revision2(threeStages())
	in.MaxFailures = intOrStr("-1")
	in.Now = t0
	out := Step(in)
	if out.Failed != "" {
		t.Fatalf("a stage with no failed cluster failed: %s", describe(out))
	}
}
