package samples

import (
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	rolloutsv1alpha1 "github.com/federator-dev/federator/apis/rollouts/v1alpha1"
	"github.com/federator-dev/federator/pkg/analysis"
)

// The sample's canary analysis is a Rollout the controller can use: on
// the canary stage only, at the address given, with a query and
// conditions that parse.
func TestStagesWithAnalysis(t *testing.T) {
	raw, err := StagesWithAnalysis("http://127.0.0.1:9090")
	if err != nil {
		t.Fatal(err)
	}
	var ro rolloutsv1alpha1.Rollout
	if err := yaml.UnmarshalStrict(raw, &ro); err != nil {
		t.Fatalf("not a Rollout: %v\n%s", err, raw)
	}
	if ro.Kind != "Rollout" || ro.Namespace != "demo" || ro.Name != "web" || len(ro.Spec.Stages) != 2 {
		t.Fatalf("not the sample Rollout demo/web with two stages:\n%s", raw)
	}
	canary, rest := ro.Spec.Stages[0], ro.Spec.Stages[1]
	if canary.Name != "canary" || canary.Analysis == nil || rest.Analysis != nil || ro.Spec.Analysis != nil {
		t.Fatalf("want an analysis on the canary stage only:\n%s", raw)
	}
	a := canary.Analysis
	if a.Provider.Prometheus.Address != "http://127.0.0.1:9090" {
		t.Errorf("address %q, want the one given", a.Provider.Prometheus.Address)
	}
	q, err := analysis.ParseQuery(a.Provider.Prometheus.Query)
	if err != nil {
		t.Fatal(err)
	}
	got, err := q.Render(analysis.Vars{Cluster: "member1", Namespace: "demo", Name: "web", Revision: 2})
	if err != nil {
		t.Fatal(err)
	}
	want := `sum(rate(federator_fleet_http_requests_total{cluster="member1",namespace="demo",deployment="web",code="500"}[10s]))
  / sum(rate(federator_fleet_http_requests_total{cluster="member1",namespace="demo",deployment="web"}[10s]))`
	if got != want {
		t.Errorf("query renders as\n%s\nwant\n%s", got, want)
	}
	if _, err := analysis.CompileConditions(a.SuccessCondition, a.FailureCondition); err != nil {
		t.Error(err)
	}
	// Judged within the canary's 30 s soak: initial delay plus the
	// intervals between measurements.
	if total := a.InitialDelay.Duration + a.Interval.Duration*time.Duration(*a.Count-1); total > canary.MinSuccessTime.Duration {
		t.Errorf("the analysis takes %s, longer than the canary's soak %s", total, canary.MinSuccessTime.Duration)
	}
	before := string(Stages)
	if _, err := StagesWithAnalysis("http://elsewhere"); err != nil || string(Stages) != before {
		t.Errorf("StagesWithAnalysis changed Stages (%v)", err)
	}
}
