package v1alpha1

import "fmt"

// Summary is a cluster's analysis in a few words, as `federator rollout
// status` and the dashboard show it: its phase, its measurements by
// verdict (errors counted as inconclusive), and the last one; "" when
// there is none.
func (a *ClusterAnalysis) Summary() string {
	if a == nil {
		return ""
	}
	s := fmt.Sprintf("%s %d ok %d failed %d inconclusive", a.Phase, a.Successful, a.Failed, a.Inconclusive+a.Error)
	if n := len(a.Measurements); n > 0 {
		last := a.Measurements[n-1]
		s += ", last " + last.Phase
		if last.Value != "" {
			s += " " + last.Value
		}
	}
	return s
}

// AnalysisOf is the analysis that judges stage's clusters: the stage's
// own, else the Rollout's for every stage; nil when none does.
func (s *RolloutSpec) AnalysisOf(stage Stage) *Analysis {
	if stage.Analysis != nil {
		return stage.Analysis
	}
	return s.Analysis
}
