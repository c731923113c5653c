package rollout

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	"github.com/karmada-io/karmada/pkg/util/names"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/federator-dev/federator/apis/rollouts/v1alpha1"
	workkeys "github.com/federator-dev/federator/apis/work"
	"github.com/federator-dev/federator/internal/revision"
)

// errorRates is a Prometheus that answers the query
// `errors{cluster="<name>",app="<ns>/<name>"}` with the rate it holds for
// the cluster, and records the queries and Authorization headers it got.
type errorRates struct {
	mu      sync.Mutex
	rates   map[string]string
	queries []string
	auth    []string
}

func (e *errorRates) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	e.mu.Lock()
	defer e.mu.Unlock()
	_ = r.ParseForm()
	q := r.Form.Get("query")
	e.queries = append(e.queries, q)
	e.auth = append(e.auth, r.Header.Get("Authorization"))
	w.Header().Set("Content-Type", "application/json")
	for cluster, rate := range e.rates {
		if q == fmt.Sprintf(`errors{cluster=%q,app="shop/web"}`, cluster) {
			fmt.Fprintf(w, `{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1700000000,%q]}]}}`, rate)
			return
		}
	}
	fmt.Fprint(w, `{"status":"success","data":{"resultType":"vector","result":[]}}`)
}

func analysedRollout(address string) *v1.Rollout {
	ro := testRollout("web", "web", t0)
	ro.Spec.Analysis = &v1.Analysis{
		Provider: v1.AnalysisProvider{Prometheus: v1.PrometheusProvider{Address: address,
			Query:          `errors{cluster="{{ .Cluster }}",app="{{ .Namespace }}/{{ .Name }}"}`,
			TokenSecretRef: &v1.SecretKeyReference{Name: "prometheus", Key: "token"}}},
		SuccessCondition: "result[0] < 0.05",
	}
	return ro
}

// healthy makes cluster's Work of shop/web applied and healthy at the
// content the binding's stamp names.
func (h *fakeHub) healthy(cluster string) {
	h.t.Helper()
	ctx := context.Background()
	rb := &workv1alpha2.ResourceBinding{}
	if err := h.client.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "web-deployment"}, rb); err != nil {
		h.t.Fatal(err)
	}
	stamp, ok := revision.ParseStamp(rb.Annotations[v1.RevisionAnnotation])
	if !ok {
		h.t.Fatalf("binding has no revision stamp: %v", rb.Annotations)
	}
	w := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: names.GenerateExecutionSpaceName(cluster),
		Name: names.GenerateWorkName("Deployment", "web", "shop"), Generation: 1,
		Annotations: map[string]string{workkeys.TemplateHashAnnotation: stamp.Hash}}}
	w.Status = workv1alpha1.WorkStatus{Conditions: []metav1.Condition{{Type: workkeys.ConditionApplied, Status: metav1.ConditionTrue,
		ObservedGeneration: 1, Reason: "Applied", LastTransitionTime: metav1.Now()}},
		ManifestStatuses: []workv1alpha1.ManifestStatus{{Health: workv1alpha1.ResourceHealthy}}}
	// The fake client keeps a Work's status on create (no status
	// subresource registered for Works).
	if err := h.client.Create(ctx, w); err != nil {
		h.t.Fatal(err)
	}
}

// The controller measures a healthy canary on Prometheus, with the query
// rendered for the cluster and template and the Secret's token, and acts
// on the verdict; the token appears in no status or Event.
func TestReconcileJudgesACanaryByPrometheus(t *testing.T) {
	for _, tc := range []struct {
		rate, member1, member2 string
		phase                  string
	}{
		{rate: "0.01", member1: "Healthy 2 Healthy", member2: "Progressing 2 Released", phase: v1.AnalysisSuccessful},
		{rate: "0.2", member1: "Failed 2 AnalysisFailed", member2: "Held 1 RolloutFailed", phase: v1.AnalysisFailed},
	} {
		t.Run(tc.rate, func(t *testing.T) {
			prom := &errorRates{rates: map[string]string{"member1": tc.rate}}
			srv := httptest.NewServer(prom)
			defer srv.Close()
			h := newFakeHub(t, analysedRollout(srv.URL))
			if err := h.client.Create(context.Background(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "prometheus"},
				Data: map[string][]byte{"token": []byte("s3cret-token")}}); err != nil {
				t.Fatal(err)
			}
			h.reconcile(0)
			h.setImage("nginx:2")
			ro := h.reconcile(time.Minute)
			if got := states(ro)["member1"]; got != "Progressing 2 Released" {
				t.Fatalf("member1 %s after revision 2 started, want it released", got)
			}
			h.healthy("member1")
			ro = h.reconcile(2 * time.Minute)
			got := states(ro)
			if got["member1"] != tc.member1 || got["member2"] != tc.member2 {
				t.Errorf("clusters %v, want member1 %s, member2 %s", got, tc.member1, tc.member2)
			}
			var a *v1.ClusterAnalysis
			for _, c := range ro.Status.Clusters {
				if c.Name == "member1" {
					a = c.Analysis
				}
			}
			if a == nil || a.Phase != tc.phase || len(a.Measurements) != 1 || a.Measurements[0].Value != "["+tc.rate+"]" ||
				!a.Measurements[0].FinishedAt.Equal(&metav1.Time{Time: t0.Add(2 * time.Minute)}) {
				t.Errorf("member1's analysis %+v, want %s with one measurement of [%s] at t0+2m", a, tc.phase, tc.rate)
			}
			want := `errors{cluster="member1",app="shop/web"}`
			if len(prom.queries) != 1 || prom.queries[0] != want || prom.auth[0] != "Bearer s3cret-token" {
				t.Errorf("Prometheus got queries %q with Authorization %q, want one %q with the Secret's bearer token", prom.queries, prom.auth, want)
			}
			status, _ := json.Marshal(ro.Status)
			events := strings.Join(h.drainEvents(), "\n")
			if !strings.Contains(events, "Measurement"+tc.phase) {
				t.Errorf("no Measurement%s event in %s", tc.phase, events)
			}
			if strings.Contains(string(status)+events, "s3cret") {
				t.Errorf("the token shows in the status or the events:\n%s\n%s", status, events)
			}
			// Not measured again: its analysis ended.
			h.reconcile(5 * time.Minute)
			if len(prom.queries) != 1 {
				t.Errorf("Prometheus queried %d times, want once (count 1)", len(prom.queries))
			}
		})
	}
}

// Prometheus unreachable: the canary's stage pauses, its condition names
// the query and the error, and nothing more is released.
func TestReconcilePausesWhilePrometheusIsUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close()
	ro := analysedRollout(srv.URL)
	ro.Spec.Analysis.Provider.Prometheus.TokenSecretRef = nil
	h := newFakeHub(t, ro)
	h.reconcile(0)
	h.setImage("nginx:2")
	h.reconcile(time.Minute)
	h.healthy("member1")
	ro = h.reconcile(2 * time.Minute)
	paused := meta.FindStatusCondition(ro.Status.Conditions, v1.ConditionPaused)
	if paused == nil || paused.Status != metav1.ConditionTrue || paused.Reason != v1.ReasonAnalysisInconclusive ||
		!strings.Contains(paused.Message, `errors{cluster=\"{{ .Cluster }}\"`) || !strings.Contains(paused.Message, "connection refused") {
		t.Errorf("Paused condition %+v, want True, AnalysisInconclusive, naming the query and the error", paused)
	}
	if got := states(ro); got["member2"] != "Pending 1 WaitingForStage" || got["member1"] != "Progressing 2 AnalysisInconclusive" {
		t.Errorf("clusters %v, want member1 inconclusive and member2 not released", got)
	}
}

// An analysis that cannot be used is refused at once, naming the field,
// and nothing new is released.
func TestReconcileRefusesAnInvalidAnalysis(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		edit       func(a *v1.Analysis)
	}{
		{"query", "spec.analysis.provider.prometheus.query of Rollout shop/web is not a valid template",
			func(a *v1.Analysis) { a.Provider.Prometheus.Query = `errors{cluster="{{ .Cluster }"}` }},
		{"condition", "spec.analysis of Rollout shop/web: successCondition \"result[0] <\" does not compile",
			func(a *v1.Analysis) { a.SuccessCondition = "result[0] <" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ro := analysedRollout("http://127.0.0.1:1")
			h := newFakeHub(t, ro)
			h.reconcile(0)
			stored := &v1.Rollout{}
			if err := h.client.Get(context.Background(), h.key, stored); err != nil {
				t.Fatal(err)
			}
			tc.edit(stored.Spec.Analysis)
			stored.Generation = 2
			if err := h.client.Update(context.Background(), stored); err != nil {
				t.Fatal(err)
			}
			h.setImage("nginx:2")
			ro = h.reconcile(time.Minute)
			failed := meta.FindStatusCondition(ro.Status.Conditions, v1.ConditionFailed)
			if failed == nil || failed.Reason != v1.ReasonInvalidSpec || !strings.Contains(failed.Message, tc.want) {
				t.Errorf("Failed condition %+v, want InvalidSpec saying %q", failed, tc.want)
			}
			if ro.Status.Revision != 1 || states(ro)["member1"] != "Healthy 1 Healthy" && states(ro)["member1"] != "Progressing 1 Released" {
				t.Errorf("revision %d, clusters %v: want nothing new released", ro.Status.Revision, states(ro))
			}
		})
	}
}
