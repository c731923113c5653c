package rollout

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/federator-dev/federator/apis/rollouts/v1alpha1"
	"github.com/federator-dev/federator/pkg/analysis"
)

// aStep is a step of a scenario with analysis: due are the clusters Due
// must name before the step (checked), and measure gives each of them the
// phase of its measurement.
type aStep struct {
	step
	due     []string
	measure map[string]string
	// analysis maps a cluster to "Phase count successful failed
	// consecutiveInconclusive", e.g. "Running 1 1 0 0".
	analysis map[string]string
}

func withAnalysis(stages []Stage, count, failureLimit, inconclusiveLimit int32, initialDelay time.Duration, names ...string) []Stage {
	for i := range stages {
		if slices.Contains(names, stages[i].Name) {
			stages[i].Analysis = &StageAnalysis{Interval: time.Minute, InitialDelay: initialDelay, Query: `errors{cluster="{{ .Cluster }}"}`,
				Limits: analysis.Limits{Count: count, FailureLimit: failureLimit, InconclusiveLimit: inconclusiveLimit}}
		}
	}
	return stages
}

func runAnalysisSteps(t *testing.T, in Input, steps []aStep) {
	t.Helper()
	for i, s := range steps {
		s.prepare(&in)
		due := Due(in)
		if !slices.Equal(due, s.due) {
			t.Errorf("step %d (t0+%s): due %v, want %v", i, s.at, due, s.due)
		}
		in.Measurements = map[string]v1.Measurement{}
		for _, c := range due {
			phase := s.measure[c]
			m := v1.Measurement{Phase: phase, Value: "[0.01]", FinishedAt: metav1.NewTime(in.Now)}
			if phase != v1.AnalysisSuccessful {
				m.Message = "connection refused"
			}
			in.Measurements[c] = m
		}
		out := Step(in)
		problems := check(out, s.want)
		for _, c := range out.Status.Clusters {
			w, ok := s.analysis[c.Name]
			if !ok {
				continue
			}
			got := "none"
			if a := c.Analysis; a != nil {
				got = strings.Join([]string{a.Phase, itoa(a.Count), itoa(a.Successful), itoa(a.Failed), itoa(a.ConsecutiveInconclusive)}, " ")
			}
			if got != w {
				problems = append(problems, "analysis of "+c.Name+" is "+got+", want "+w)
			}
		}
		if len(problems) > 0 {
			t.Errorf("step %d (t0+%s):\n  %s\noutput: %s", i, s.at, strings.Join(problems, "\n  "), describe(out))
		}
		in.Prior = statusAfter(out)
	}
}

func itoa(n int32) string { return strconv.Itoa(int(n)) }

var (
	mOK, mFail, mErr = "MeasurementSuccessful", "MeasurementFailed", "MeasurementError"
)

func TestStepAnalysis(t *testing.T) {
	ok, fail := map[string]string{"member1": v1.AnalysisSuccessful}, map[string]string{"member1": v1.AnalysisFailed}
	cases := []struct {
		name  string
		in    Input
		steps []aStep
	}{
		{
			name: "a healthy canary is measured after initialDelay, every interval, count times; the next stage starts once it passed",
			in:   revision2(withAnalysis(threeStages(), 2, 0, 0, 30*time.Second, "canary")),
			steps: []aStep{
				{step: step{at: 0, want: want{stage: "canary", waitingReason: v1.ReasonStageProgressing, events: []string{started},
					clusters: map[string]string{"member1": "Progressing 2 Released"}}}},
				{step: step{at: time.Minute, healthy: []string{"member1"}, want: want{stage: "canary", waitingReason: v1.ReasonStageProgressing,
					clusters: map[string]string{"member1": "Progressing 2 AnalysisRunning", "member2": "Pending 1 WaitingForStage"},
					requeue:  30 * time.Second, checkRequeue: true}},
					analysis: map[string]string{"member1": "Running 0 0 0 0"}},
				{step: step{at: 80 * time.Second, healthy: []string{"member1"}, want: want{stage: "canary", waitingReason: v1.ReasonStageProgressing,
					requeue: 10 * time.Second, checkRequeue: true}}},
				{step: step{at: 90 * time.Second, healthy: []string{"member1"}, want: want{stage: "canary", waitingReason: v1.ReasonStageProgressing,
					events:   []string{mOK},
					clusters: map[string]string{"member1": "Progressing 2 AnalysisRunning"}, requeue: time.Minute, checkRequeue: true}},
					due: []string{"member1"}, measure: ok, analysis: map[string]string{"member1": "Running 1 1 0 0"}},
				{step: step{at: 150 * time.Second, healthy: []string{"member1"}, want: want{stage: "mid", waitingReason: v1.ReasonStageProgressing,
					events:   []string{mOK, v1.EventReasonAnalysisSuccessful, completed, started},
					clusters: map[string]string{"member1": "Healthy 2 Healthy", "member2": "Progressing 2 Released"},
					messages: map[string]string{"member1": "analysis passed: 2 of 2"}}},
					due: []string{"member1"}, measure: ok, analysis: map[string]string{"member1": "Successful 2 2 0 0"}},
				// Passed stays passed: not measured again.
				{step: step{at: 10 * time.Minute, healthy: []string{"member1"}, want: want{stage: "mid", waitingReason: v1.ReasonStageProgressing,
					clusters: map[string]string{"member1": "Healthy 2 Healthy"}}},
					analysis: map[string]string{"member1": "Successful 2 2 0 0"}},
			},
		},
		{
			name: "a failed analysis fails its cluster: onFailure Rollback puts it back, the later stages never get the revision",
			in: with(revision2(withAnalysis(threeStages(), 3, 0, 0, 0, "canary")), func(in *Input) {
				in.Rollback = true
			}),
			steps: []aStep{
				{step: step{at: 0, want: want{stage: "canary", waitingReason: v1.ReasonStageProgressing, events: []string{started}}}},
				{step: step{at: time.Minute, healthy: []string{"member1"}, want: want{stage: "canary", waitingReason: v1.ReasonStageProgressing,
					events: []string{mOK}, clusters: map[string]string{"member1": "Progressing 2 AnalysisRunning"}}},
					due: []string{"member1"}, measure: ok},
				{step: step{at: 2 * time.Minute, healthy: []string{"member1"}, want: want{stage: "canary", failed: "canary", waitingReason: v1.ReasonStageFailed,
					events:   []string{mFail, clFailed, roFailed, v1.EventReasonRolledBack},
					clusters: map[string]string{"member1": "RolledBack 1 RolledBack", "member2": "Held 1 RolloutFailed", "member3": "Held 1 RolloutFailed"}}},
					due: []string{"member1"}, measure: fail, analysis: map[string]string{"member1": "Failed 2 1 1 0"}},
				{step: step{at: 5 * time.Minute, healthy: []string{"member1"}, want: want{stage: "canary", failed: "canary", waitingReason: v1.ReasonStageFailed,
					clusters: map[string]string{"member1": "RolledBack 1 RolledBack", "member2": "Held 1 RolloutFailed"}}},
					analysis: map[string]string{"member1": "Failed 2 1 1 0"}},
			},
		},
		{
			name: "an inconclusive analysis pauses its stage, releases nothing more, and goes on once measurements succeed",
			in: revision2(withAnalysis([]Stage{
				{Name: "canary", Clusters: []string{"member1", "member2", "member3"}, MaxConcurrency: 2},
				{Name: "rest", Clusters: []string{"member4"}, MaxConcurrency: 1},
			}, 1, 0, 0, 0, "canary")),
			steps: []aStep{
				{step: step{at: 0, want: want{stage: "canary", waitingReason: v1.ReasonStageProgressing, events: []string{started},
					clusters: map[string]string{"member1": "Progressing 2 Released", "member2": "Progressing 2 Released", "member3": "Pending 1 WaitingForConcurrency"}}}},
				// member2 passes and frees a slot, but member1's analysis is
				// inconclusive: member3 is not released.
				{step: step{at: time.Minute, healthy: []string{"member1", "member2"}, want: want{stage: "canary", waitingReason: v1.ReasonAnalysisInconclusive,
					waiting: `analysis inconclusive (query "errors{cluster=\"{{ .Cluster }}\"}")`,
					events:  []string{mErr, v1.EventReasonAnalysisInconclusive, mOK, v1.EventReasonAnalysisSuccessful},
					clusters: map[string]string{"member1": "Progressing 2 AnalysisInconclusive", "member2": "Healthy 2 Healthy",
						"member3": "Pending 1 WaitingForStage", "member4": "Pending 1 WaitingForStage"},
					messages: map[string]string{"member1": "connection refused", "member3": "pauses"},
					requeue:  time.Minute, checkRequeue: true}},
					due: []string{"member1", "member2"}, measure: map[string]string{"member1": v1.AnalysisError, "member2": v1.AnalysisSuccessful},
					analysis: map[string]string{"member1": "Inconclusive 1 0 0 1", "member2": "Successful 1 1 0 0"}},
				{step: step{at: 2 * time.Minute, healthy: []string{"member1", "member2"}, want: want{stage: "canary", waitingReason: v1.ReasonAnalysisInconclusive,
					events: []string{"MeasurementInconclusive"}, clusters: map[string]string{"member3": "Pending 1 WaitingForStage"}}},
					due: []string{"member1"}, measure: map[string]string{"member1": v1.AnalysisInconclusive}, analysis: map[string]string{"member1": "Inconclusive 2 0 0 2"}},
				// Measurements succeed again: member1 passed, member3 is released.
				{step: step{at: 3 * time.Minute, healthy: []string{"member1", "member2"}, want: want{stage: "canary", waitingReason: v1.ReasonStageProgressing,
					events:   []string{mOK, v1.EventReasonAnalysisSuccessful},
					clusters: map[string]string{"member1": "Healthy 2 Healthy", "member3": "Progressing 2 Released"}}},
					due: []string{"member1"}, measure: ok, analysis: map[string]string{"member1": "Successful 3 1 0 0"}},
			},
		},
		{
			name: "a cluster is not measured while unhealthy; its analysis goes on where it was once it is healthy again",
			in:   revision2(withAnalysis(threeStages(), 2, 0, 0, 0, "canary")),
			steps: []aStep{
				{step: step{at: 0, want: want{stage: "canary", waitingReason: v1.ReasonStageProgressing, events: []string{started}}}},
				{step: step{at: time.Minute, healthy: []string{"member1"}, want: want{stage: "canary", waitingReason: v1.ReasonStageProgressing,
					events: []string{mOK}}}, due: []string{"member1"}, measure: ok},
				{step: step{at: 3 * time.Minute, want: want{stage: "canary", waitingReason: v1.ReasonStageProgressing,
					clusters: map[string]string{"member1": "Progressing 2 UnhealthyAgain"}}},
					analysis: map[string]string{"member1": "Running 1 1 0 0"}},
				{step: step{at: 20 * time.Minute, want: want{stage: "canary", waitingReason: v1.ReasonStageProgressing,
					clusters: map[string]string{"member1": "Progressing 2 UnhealthyAgain"}}}},
				{step: step{at: 21 * time.Minute, healthy: []string{"member1"}, want: want{stage: "mid", waitingReason: v1.ReasonStageProgressing,
					events: []string{mOK, v1.EventReasonAnalysisSuccessful, completed, started}}},
					due: []string{"member1"}, measure: ok, analysis: map[string]string{"member1": "Successful 2 2 0 0"}},
			},
		},
		{
			name: "the first revision, released everywhere at once, is not analysed",
			in: Input{Revision: 1, Initial: true, ProgressDeadline: 10 * time.Minute,
				Stages: withAnalysis(threeStages(), 1, 0, 0, 0, "canary", "mid", "rest")},
			steps: []aStep{
				{step: step{at: 0, want: want{waitingReason: v1.ReasonStageProgressing}}},
				{step: step{at: time.Minute, healthy: []string{"member1", "member2", "member3", "member4"}, want: want{completed: true,
					clusters: map[string]string{"member1": "Healthy 1 Healthy"}}}, analysis: map[string]string{"member1": "none"}},
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { runAnalysisSteps(t, tc.in, tc.steps) })
	}
}

// Status keeps the latest MaxMeasurements measurements of a cluster, and
// counts them all.
func TestStepAnalysisKeepsTheLatestMeasurements(t *testing.T) {
	in := revision2(withAnalysis(threeStages(), 1, 0, 100, 0, "canary"))
	for i := 0; i <= 12; i++ {
		in.Now = t0.Add(time.Duration(i) * time.Minute)
		in.Healthy = map[string]bool{"member1": i > 0}
		in.Measurements = map[string]v1.Measurement{}
		if i > 0 {
			in.Measurements["member1"] = v1.Measurement{Phase: v1.AnalysisError, FinishedAt: metav1.NewTime(in.Now)}
		}
		in.Prior = statusAfter(Step(in))
	}
	for _, c := range in.Prior.Clusters {
		if a := c.Analysis; c.Name == "member1" && (a == nil || a.Count != 12 || a.Error != 12 || len(a.Measurements) != v1.MaxMeasurements ||
			!a.Measurements[len(a.Measurements)-1].FinishedAt.Equal(&metav1.Time{Time: t0.Add(12 * time.Minute)})) {
			t.Errorf("member1's analysis after 12 measurements: %+v; want count 12, the latest %d kept", a, v1.MaxMeasurements)
		}
	}
}
