package rollout

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rolloutsv1alpha1 "github.com/federator-dev/federator/apis/rollouts/v1alpha1"
	"github.com/federator-dev/federator/pkg/analysis"
)

// Step's analysis: which clusters are measured now, and what their
// measurements do to them. The measuring itself (a query on Prometheus)
// is the controller's; the machine only reads its results.

// StageAnalysis is a stage's analysis, defaults applied.
type StageAnalysis struct {
	Interval, InitialDelay time.Duration
	Limits                 analysis.Limits
	// Query is the query template, for messages.
	Query string
	// Spec is the analysis as written, for the controller's measuring.
	Spec *rolloutsv1alpha1.Analysis
}

// analysed says whether a stage's clusters are judged by an analysis at
// the input's revision: not the first, which is released everywhere at
// once (what ran before the Rollout existed).
func analysed(in Input, s Stage) bool {
	return s.Analysis != nil && in.Revision > 1
}

// Due names the clusters to measure now: released and healthy at the
// current revision in a stage with an analysis that has not ended, whose
// next measurement is due (initialDelay after the analysis starts, then
// every interval).
func Due(in Input) []string {
	prior := map[string]rolloutsv1alpha1.ClusterStatus{}
	for _, c := range in.Prior.Clusters {
		prior[c.Name] = c
	}
	var due []string
	for _, s := range in.Stages {
		if !analysed(in, s) || in.Initial || in.Aborted {
			continue
		}
		for _, name := range s.Clusters {
			p := prior[name]
			if !in.Healthy[name] || p.Revision != in.Revision || in.Prior.Revision != in.Revision {
				continue
			}
			switch p.State {
			case rolloutsv1alpha1.StatePending, rolloutsv1alpha1.StateFailed, rolloutsv1alpha1.StateRolledBack:
				continue
			}
			a := p.Analysis
			if a == nil {
				if s.Analysis.InitialDelay <= 0 {
					due = append(due, name)
				}
				continue
			}
			if ended(a) {
				continue
			}
			if !nextMeasurement(a, s.Analysis).After(in.Now) {
				due = append(due, name)
			}
		}
	}
	return due
}

func ended(a *rolloutsv1alpha1.ClusterAnalysis) bool {
	return a.Phase == rolloutsv1alpha1.AnalysisSuccessful || a.Phase == rolloutsv1alpha1.AnalysisFailed
}

// nextMeasurement is when a's next measurement is due.
func nextMeasurement(a *rolloutsv1alpha1.ClusterAnalysis, s *StageAnalysis) time.Time {
	if n := len(a.Measurements); n > 0 {
		return a.Measurements[n-1].FinishedAt.Add(s.Interval)
	}
	return a.StartedAt.Add(s.InitialDelay)
}

// analyse folds a healthy cluster's measurement of this step, if any, into
// its analysis and sets the cluster's state from the verdict: Healthy once
// it passed, Failed when it failed, Progressing while it runs or is
// inconclusive (its stage then pauses). It returns the events and when
// the next measurement is due.
func analyse(in Input, s Stage, prior *rolloutsv1alpha1.ClusterAnalysis, c *rolloutsv1alpha1.ClusterStatus) ([]Event, time.Duration) {
	now := metav1.NewTime(in.Now)
	a := &rolloutsv1alpha1.ClusterAnalysis{Phase: rolloutsv1alpha1.AnalysisRunning, StartedAt: now}
	if prior != nil {
		a = prior.DeepCopy()
	}
	c.Analysis = a
	if a.Phase == rolloutsv1alpha1.AnalysisSuccessful {
		c.Message = "healthy; analysis passed: " + a.Message
		return nil, 0
	}
	var events []Event
	m, measured := in.Measurements[c.Name]
	if measured {
		a.Measurements = append(a.Measurements, m)
		if n := len(a.Measurements); n > rolloutsv1alpha1.MaxMeasurements {
			a.Measurements = a.Measurements[n-rolloutsv1alpha1.MaxMeasurements:]
		}
		a.Count++
		switch m.Phase {
		case rolloutsv1alpha1.AnalysisSuccessful:
			a.Successful++
		case rolloutsv1alpha1.AnalysisFailed:
			a.Failed++
		case rolloutsv1alpha1.AnalysisInconclusive:
			a.Inconclusive++
		default:
			a.Error++
		}
		a.ConsecutiveInconclusive = analysis.Tally{ConsecutiveInconclusive: a.ConsecutiveInconclusive}.Add(m.Phase).ConsecutiveInconclusive
		what := fmt.Sprintf("revision %d: cluster %s (stage %s) measurement %d: %s", in.Revision, c.Name, s.Name, a.Count, m.Phase)
		if m.Value != "" {
			what += ", value " + m.Value
		}
		if m.Message != "" {
			what += ": " + m.Message
		}
		events = append(events, Event{Warning: m.Phase != rolloutsv1alpha1.AnalysisSuccessful, Reason: "Measurement" + m.Phase, Message: what})
	}
	was := a.Phase
	a.Phase, a.Message = analysis.Assess(s.Analysis.Limits, analysis.Tally{Successful: a.Successful, Failed: a.Failed,
		ConsecutiveInconclusive: a.ConsecutiveInconclusive})
	last := ""
	if n := len(a.Measurements); n > 0 && a.Measurements[n-1].Message != "" {
		last = "; last measurement: " + a.Measurements[n-1].Message
	}
	switch a.Phase {
	case rolloutsv1alpha1.AnalysisSuccessful:
		c.State, c.Reason, c.Message = rolloutsv1alpha1.StateHealthy, rolloutsv1alpha1.ReasonHealthy, "healthy; analysis passed: "+a.Message
		events = append(events, Event{Reason: rolloutsv1alpha1.EventReasonAnalysisSuccessful,
			Message: fmt.Sprintf("revision %d: cluster %s (stage %s) passed its analysis: %s", in.Revision, c.Name, s.Name, a.Message)})
		return events, 0
	case rolloutsv1alpha1.AnalysisFailed:
		c.State, c.Reason = rolloutsv1alpha1.StateFailed, rolloutsv1alpha1.ReasonAnalysisFailed
		c.Message = fmt.Sprintf("analysis failed at revision %d: %s%s", in.Revision, a.Message, last)
		events = append(events, Event{Warning: true, Reason: rolloutsv1alpha1.EventReasonClusterFailed,
			Message: fmt.Sprintf("cluster %s (stage %s) failed: %s", c.Name, s.Name, c.Message)})
		return events, 0
	case rolloutsv1alpha1.AnalysisInconclusive:
		c.State, c.Reason = rolloutsv1alpha1.StateProgressing, rolloutsv1alpha1.ReasonAnalysisInconclusive
		c.Message = fmt.Sprintf("analysis inconclusive (query %q): %s%s; measured again every %s, the stage goes on once measurements succeed",
			s.Analysis.Query, a.Message, last, s.Analysis.Interval)
		if was != rolloutsv1alpha1.AnalysisInconclusive {
			events = append(events, Event{Warning: true, Reason: rolloutsv1alpha1.EventReasonAnalysisInconclusive,
				Message: fmt.Sprintf("revision %d: stage '%s' pauses: cluster %s %s", in.Revision, s.Name, c.Name, c.Message)})
		}
	default:
		c.State, c.Reason = rolloutsv1alpha1.StateProgressing, rolloutsv1alpha1.ReasonAnalysisRunning
		c.Message = fmt.Sprintf("healthy; analysis running: %s%s", a.Message, last)
	}
	return events, max(nextMeasurement(a, s.Analysis).Sub(in.Now), time.Second)
}

// analysisPause is what pauses a stage: its clusters whose analysis is
// inconclusive, with why; "" when none.
func analysisPause(s Stage, states map[string]rolloutsv1alpha1.ClusterStatus) string {
	msg := ""
	for _, name := range s.Clusters {
		if c := states[name]; c.Reason == rolloutsv1alpha1.ReasonAnalysisInconclusive {
			if msg != "" {
				msg += "; "
			}
			msg += name + ": " + c.Message
		}
	}
	return msg
}
