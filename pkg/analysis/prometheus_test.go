package analysis

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	v1 "github.com/federator-dev/federator/apis/rollouts/v1alpha1"
)

// fakePrometheus answers /api/v1/query as Prometheus's HTTP API does, with
// the data (or error) it is given per query, and records the queries and
// Authorization headers it got.
type fakePrometheus struct {
	answers map[string]string // query → the JSON of "data"
	queries []string
	auth    []string
}

func (f *fakePrometheus) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/api/v1/query" {
		http.NotFound(w, r)
		return
	}
	_ = r.ParseForm()
	q := r.Form.Get("query")
	f.queries = append(f.queries, q)
	f.auth = append(f.auth, r.Header.Get("Authorization"))
	w.Header().Set("Content-Type", "application/json")
	data, ok := f.answers[q]
	if !ok {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"status":"error","errorType":"bad_data","error":"parse error: unexpected end of input"}`)
		return
	}
	fmt.Fprintf(w, `{"status":"success","data":%s}`, data)
}

func TestPrometheusMeasure(t *testing.T) {
	fake := &fakePrometheus{answers: map[string]string{
		`errors{cluster="member1"}`: `{"resultType":"vector","result":[{"metric":{"cluster":"member1"},"value":[1700000000,"0.2"]}]}`,
		`errors{cluster="member2"}`: `{"resultType":"vector","result":[{"metric":{"cluster":"member2"},"value":[1700000000,"0.01"]},{"metric":{},"value":[1700000000,"0.03"]}]}`,
		`errors{cluster="member3"}`: `{"resultType":"vector","result":[]}`,
		`scalar(errors)`:            `{"resultType":"scalar","result":[1700000000,"0.04"]}`,
		`errors[5m]`:                `{"resultType":"matrix","result":[{"metric":{},"values":[[1700000000,"1"]]}]}`,
	}}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	vector, _ := CompileConditions("all(result, {# < 0.05})", "")
	scalar, _ := CompileConditions("result < 0.05", "")
	for _, tc := range []struct {
		query        string
		conds        *Conditions
		phase, value string
		message      string
	}{
		{`errors{cluster="member1"}`, vector, v1.AnalysisFailed, "[0.2]", `returned [0.2]: failed`},
		{`errors{cluster="member2"}`, vector, v1.AnalysisSuccessful, "[0.01,0.03]", ""},
		{`errors{cluster="member3"}`, vector, v1.AnalysisInconclusive, "[]", "no data"},
		{`scalar(errors)`, scalar, v1.AnalysisSuccessful, "0.04", ""},
		{`scalar(errors)`, vector, v1.AnalysisError, "0.04", "successCondition"},
		{`errors[5m]`, vector, v1.AnalysisError, "", "returns a vector or a scalar"},
		{`errors{`, vector, v1.AnalysisError, "", "parse error"},
	} {
		got := Prometheus{Address: srv.URL, Token: "s3cret-token"}.Measure(context.Background(), tc.query, tc.conds, time.Unix(1700000000, 0))
		if got.Phase != tc.phase || got.Value != tc.value || !strings.Contains(got.Message, tc.message) || (tc.message == "") != (got.Message == "") {
			t.Errorf("Measure(%q) = %+v, want phase %s value %s message with %q", tc.query, got, tc.phase, tc.value, tc.message)
		}
		if strings.Contains(got.Message, "s3cret") || strings.Contains(got.Value, "s3cret") {
			t.Errorf("Measure(%q) shows the token: %+v", tc.query, got)
		}
	}
	for _, a := range fake.auth {
		if a != "Bearer s3cret-token" {
			t.Fatalf("Prometheus got Authorization %q, want the bearer token", a)
		}
	}
	// No token: no Authorization header.
	Prometheus{Address: srv.URL}.Measure(context.Background(), `scalar(errors)`, scalar, time.Now())
	if a := fake.auth[len(fake.auth)-1]; a != "" {
		t.Errorf("without a token Prometheus got Authorization %q", a)
	}

	// Unreachable: an Error naming the query, within the timeout.
	srv.Close()
	start := time.Now()
	got := Prometheus{Address: srv.URL, Timeout: 2 * time.Second}.Measure(context.Background(), `scalar(errors)`, scalar, time.Now())
	if got.Phase != v1.AnalysisError || !strings.Contains(got.Message, `query "scalar(errors)"`) || time.Since(start) > 3*time.Second {
		t.Errorf("unreachable Prometheus: %+v after %s, want an Error naming the query within the timeout", got, time.Since(start))
	}
}
