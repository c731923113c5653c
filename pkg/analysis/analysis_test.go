package analysis

import (
	"math"
	"strings"
	"testing"

	v1 "github.com/federator-dev/federator/apis/rollouts/v1alpha1"
)

func TestQuery(t *testing.T) {
	for _, tc := range []struct {
		text, want, parseErr string
	}{
		{text: `sum(rate(errors{cluster="{{ .Cluster }}",app="{{ .Namespace }}/{{ .Name }}"}[1m])) # {{ .Revision }}`,
			want: `sum(rate(errors{cluster="member1",app="web/frontend"}[1m])) # 3`},
		{text: `up`, want: `up`},
		{text: `up{cluster="{{ .Cluster }"}`, parseErr: `unexpected "}" in operand`},
		{text: `up{cluster="{{ .Clustr }}"}`, parseErr: `can't evaluate field Clustr`},
	} {
		q, err := ParseQuery(tc.text)
		if tc.parseErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.parseErr) {
				t.Errorf("ParseQuery(%q) = %v, want an error with %q", tc.text, err, tc.parseErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("ParseQuery(%q): %v", tc.text, err)
		}
		got, err := q.Render(Vars{Cluster: "member1", Namespace: "web", Name: "frontend", Revision: 3})
		if err != nil || got != tc.want {
			t.Errorf("Render(%q) = %q, %v; want %q", tc.text, got, err, tc.want)
		}
	}
	named, _ := ParseQuery(`x{app="{{ .Name }}"}`)
	plain, _ := ParseQuery(`x{cluster="{{ .Cluster }}"}`)
	if !named.NamesTemplate() || plain.NamesTemplate() {
		t.Errorf("NamesTemplate: %v for a query naming .Name, %v for one that does not; want true, false", named.NamesTemplate(), plain.NamesTemplate())
	}
}

func TestCompileConditions(t *testing.T) {
	for _, tc := range []struct{ success, failure, wantErr string }{
		{success: "result[0] < 0.05"},
		{failure: "result > 1 && !isNaN(result)"},
		{success: "result[0] <", wantErr: "successCondition"},
		{success: "result[0] < 1", failure: "result ===", wantErr: "failureCondition"},
		{success: "1 + 2", wantErr: "successCondition"},
	} {
		_, err := CompileConditions(tc.success, tc.failure)
		if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("CompileConditions(%q, %q) = %v, want error %q", tc.success, tc.failure, err, tc.wantErr)
		}
	}
}

// The verdicts follow Argo Rollouts' evaluation of a metric's result.
func TestEvaluate(t *testing.T) {
	for _, tc := range []struct {
		success, failure string
		result           any
		want             string
	}{
		{result: []float64{1}, want: v1.AnalysisSuccessful},
		{success: "result[0] < 0.05", result: []float64{0.01}, want: v1.AnalysisSuccessful},
		{success: "result[0] < 0.05", result: []float64{0.2}, want: v1.AnalysisFailed},
		{failure: "result[0] >= 0.05", result: []float64{0.01}, want: v1.AnalysisSuccessful},
		{failure: "result[0] >= 0.05", result: []float64{0.2}, want: v1.AnalysisFailed},
		{success: "result < 0.05", failure: "result > 0.1", result: 0.07, want: v1.AnalysisInconclusive},
		{success: "result < 0.05", failure: "result > 0.1", result: 0.01, want: v1.AnalysisSuccessful},
		{success: "result < 0.5", failure: "result > 0.1", result: 0.2, want: v1.AnalysisFailed},
		{success: "all(result, {# < 0.05})", result: []float64{0.01, 0.2}, want: v1.AnalysisFailed},
		{success: "isNaN(result) || result < 0.05", result: math.NaN(), want: v1.AnalysisSuccessful},
		{success: "result[3] < 0.05", result: []float64{0.01}, want: v1.AnalysisError},
		{success: "result < 0.05", result: []float64{0.01}, want: v1.AnalysisError},
	} {
		c, err := CompileConditions(tc.success, tc.failure)
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.Evaluate(tc.result)
		if got != tc.want || (got == v1.AnalysisError) != (err != nil) {
			t.Errorf("success %q failure %q on %v = %s, %v; want %s", tc.success, tc.failure, tc.result, got, err, tc.want)
		}
	}
}

func TestAssess(t *testing.T) {
	limits := Limits{Count: 3, FailureLimit: 1, InconclusiveLimit: 1}
	for _, tc := range []struct {
		phases []string
		want   string
	}{
		{nil, v1.AnalysisRunning},
		{[]string{"Successful", "Successful"}, v1.AnalysisRunning},
		{[]string{"Successful", "Successful", "Successful"}, v1.AnalysisSuccessful},
		{[]string{"Successful", "Failed", "Successful"}, v1.AnalysisSuccessful},
		{[]string{"Failed", "Successful", "Failed"}, v1.AnalysisFailed},
		// Inconclusive and erroneous measurements in a row pause; they
		// do not count towards count, and a conclusive one ends them.
		{[]string{"Inconclusive"}, v1.AnalysisRunning},
		{[]string{"Inconclusive", "Error"}, v1.AnalysisInconclusive},
		{[]string{"Successful", "Error", "Error", "Successful"}, v1.AnalysisRunning},
		{[]string{"Successful", "Error", "Error", "Successful", "Successful"}, v1.AnalysisSuccessful},
		{[]string{"Error", "Successful", "Error", "Successful", "Inconclusive", "Successful"}, v1.AnalysisSuccessful},
	} {
		var tally Tally
		for _, p := range tc.phases {
			tally = tally.Add(p)
		}
		if got, msg := Assess(limits, tally); got != tc.want {
			t.Errorf("Assess(%v) = %s (%s), want %s", tc.phases, got, msg, tc.want)
		}
	}
}
