package analysis

import (
	"fmt"

	rolloutsv1alpha1 "github.com/federator-dev/federator/apis/rollouts/v1alpha1"
)

// Limits are an analysis' count and limits, defaults applied.
type Limits struct {
	Count, FailureLimit, InconclusiveLimit int32
}

// Tally counts a cluster's measurements.
type Tally struct {
	Successful, Failed int32
	// ConsecutiveInconclusive counts the inconclusive and erroneous
	// measurements since the last conclusive one.
	ConsecutiveInconclusive int32
}

// Add counts one measurement of the given phase.
func (t Tally) Add(phase string) Tally {
	switch phase {
	case rolloutsv1alpha1.AnalysisSuccessful:
		t.Successful++
		t.ConsecutiveInconclusive = 0
	case rolloutsv1alpha1.AnalysisFailed:
		t.Failed++
		t.ConsecutiveInconclusive = 0
	default:
		t.ConsecutiveInconclusive++
	}
	return t
}

// Assess is the analysis' verdict from its tally, as Argo Rollouts
// assesses a metric, with two differences a stage gate needs: only
// conclusive measurements count towards Count (an analysis never passes on
// measurements that could not judge), and Inconclusive counts the
// inconclusive and erroneous measurements in a row, so it is no final
// verdict: the next conclusive one ends it. Failed when more measurements
// failed than FailureLimit; Inconclusive when more in a row were
// inconclusive than InconclusiveLimit; Successful once Count conclusive
// measurements are taken; Running until then. The message says why.
func Assess(l Limits, t Tally) (string, string) {
	switch {
	case t.Failed > l.FailureLimit:
		return rolloutsv1alpha1.AnalysisFailed, fmt.Sprintf("%d measurement(s) failed, more than failureLimit %d", t.Failed, l.FailureLimit)
	case t.ConsecutiveInconclusive > l.InconclusiveLimit:
		return rolloutsv1alpha1.AnalysisInconclusive, fmt.Sprintf("%d measurement(s) in a row inconclusive, more than inconclusiveLimit %d", t.ConsecutiveInconclusive, l.InconclusiveLimit)
	case t.Successful+t.Failed >= max(l.Count, 1):
		return rolloutsv1alpha1.AnalysisSuccessful, fmt.Sprintf("%d of %d measurement(s) successful (failureLimit %d)", t.Successful, t.Successful+t.Failed, l.FailureLimit)
	}
	return rolloutsv1alpha1.AnalysisRunning, fmt.Sprintf("%d of %d measurement(s) taken", t.Successful+t.Failed, max(l.Count, 1))
}
