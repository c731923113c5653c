package v1alpha1

import "testing"

// A stage's own analysis replaces the Rollout's for every stage; a stage
// without one has the Rollout's, or none.
func TestAnalysisOf(t *testing.T) {
	every, own := &Analysis{SuccessCondition: "every"}, &Analysis{SuccessCondition: "own"}
	for _, tc := range []struct {
		name  string
		spec  RolloutSpec
		stage Stage
		want  *Analysis
	}{
		{"none", RolloutSpec{}, Stage{Name: "canary"}, nil},
		{"the Rollout's", RolloutSpec{Analysis: every}, Stage{Name: "canary"}, every},
		{"the stage's own wins", RolloutSpec{Analysis: every}, Stage{Name: "canary", Analysis: own}, own},
		{"the stage's own alone", RolloutSpec{}, Stage{Name: "canary", Analysis: own}, own},
	} {
		if got := tc.spec.AnalysisOf(tc.stage); got != tc.want {
			t.Errorf("%s: got %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

func TestSummary(t *testing.T) {
	var none *ClusterAnalysis
	if got := none.Summary(); got != "" {
		t.Errorf("no analysis: %q, want nothing", got)
	}
	a := &ClusterAnalysis{Phase: AnalysisRunning, Successful: 2, Inconclusive: 1, Error: 1,
		Measurements: []Measurement{{Phase: AnalysisSuccessful, Value: "[0]"}, {Phase: AnalysisError}}}
	if got, want := a.Summary(), "Running 2 ok 0 failed 2 inconclusive, last Error"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
