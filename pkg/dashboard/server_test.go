package dashboard

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	"github.com/karmada-io/karmada/pkg/util/names"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache/informertest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	gatingv1alpha1 "github.com/federator-dev/federator/apis/gating/v1alpha1"
	"github.com/federator-dev/federator/apis/policy"
	rolloutsv1alpha1 "github.com/federator-dev/federator/apis/rollouts/v1alpha1"
	workkeys "github.com/federator-dev/federator/apis/work"
	"github.com/federator-dev/federator/internal/countdown"
)

var now = time.Date(2026, 5, 4, 12, 0, 0, 0, time.UTC)

func readyCluster(name string) *clusterv1alpha1.Cluster {
	return &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name},
		Status: clusterv1alpha1.ClusterStatus{KubernetesVersion: "v1.31.0",
			Conditions: []metav1.Condition{{Type: clusterv1alpha1.ClusterConditionReady, Status: metav1.ConditionTrue,
				Reason: "ClusterReady", Message: "cluster is healthy and ready to accept workloads", LastTransitionTime: metav1.NewTime(now.Add(-time.Hour))}},
			APIEnablements: []clusterv1alpha1.APIEnablement{{GroupVersion: "apps/v1",
				Resources: []clusterv1alpha1.APIResource{{Name: "deployments", Kind: "Deployment"}}}}}}
}

func webBinding(namespace, name string, generation int64, clusters ...string) *workv1alpha2.ResourceBinding {
	rb := &workv1alpha2.ResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: names.GenerateBindingName("Deployment", name), Generation: generation,
			Annotations: map[string]string{policyv1alpha1.PropagationPolicyNamespaceAnnotation: namespace,
				policyv1alpha1.PropagationPolicyNameAnnotation: "web-pp"}},
		Spec: workv1alpha2.ResourceBindingSpec{Resource: workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment",
			Namespace: namespace, Name: name}},
	}
	for _, c := range clusters {
		rb.Spec.Clusters = append(rb.Spec.Clusters, workv1alpha2.TargetCluster{Name: c})
	}
	return rb
}

// deploymentWork is the Work of Deployment namespace/name on cluster,
// written from binding generation 1, running image.
func deploymentWork(cluster, namespace, name, image string) *workv1alpha1.Work {
	manifest := fmt.Sprintf(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"namespace":%q,"name":%q,"labels":{"app":%q},
		"annotations":{"federator.dev/deletion-delay":"10m"}},
		"spec":{"replicas":3,"template":{"spec":{"containers":[{"name":"web","image":%q}]}}}}`, namespace, name, name, image)
	return &workv1alpha1.Work{
		ObjectMeta: metav1.ObjectMeta{Namespace: names.GenerateExecutionSpaceName(cluster), Name: names.GenerateWorkName("Deployment", name, namespace),
			Generation: 2, Annotations: map[string]string{workkeys.BindingGenerationAnnotation: "1"}},
		Spec: workv1alpha1.WorkSpec{Workload: workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: []byte(manifest)}}}}},
	}
}

func applied(w *workv1alpha1.Work, ready int) *workv1alpha1.Work {
	w.Status.Conditions = []metav1.Condition{{Type: workkeys.ConditionApplied, Status: metav1.ConditionTrue, Reason: workkeys.ReasonAppliedSuccessful,
		Message: workkeys.MessageAppliedSuccessful, ObservedGeneration: w.Generation, LastTransitionTime: metav1.NewTime(now.Add(-5 * time.Minute))},
		{Type: workkeys.ConditionDispatching, Status: metav1.ConditionTrue, Reason: workkeys.ReasonDispatching,
			Message: workkeys.MessageDispatching, ObservedGeneration: w.Generation, LastTransitionTime: metav1.NewTime(now.Add(-5 * time.Minute))}}
	status := fmt.Sprintf(`{"replicas":3,"updatedReplicas":3,"readyReplicas":%d,"observedGeneration":1,"generation":1,
		"conditions":[{"type":"Available","status":"True","reason":"MinimumReplicasAvailable","message":"Deployment has minimum availability."}]}`, ready)
	w.Status.ManifestStatuses = []workv1alpha1.ManifestStatus{{Status: &runtime.RawExtension{Raw: []byte(status)}}}
	return w
}

func held(w *workv1alpha1.Work, reason, message string) *workv1alpha1.Work {
	w.Spec.SuspendDispatching = ptr.To(true)
	w.Annotations[workkeys.HoldReasonAnnotation] = reason
	w.Annotations[workkeys.HoldMessageAnnotation] = message
	w.Status.Conditions = []metav1.Condition{{Type: workkeys.ConditionDispatching, Status: metav1.ConditionFalse, Reason: workkeys.ReasonSuspendDispatching,
		Message: workkeys.MessageSuspendDispatching, ObservedGeneration: w.Generation, LastTransitionTime: metav1.NewTime(now.Add(-2 * time.Minute))}}
	return w
}

// runs records on w, as the binding controller does, that its member
// still runs image.
func runs(w *workv1alpha1.Work, image string) *workv1alpha1.Work {
	w.Annotations[workkeys.MemberRunsAnnotation] = `{"images":["` + image + `"],"bindingGeneration":"0"}`
	return w
}

const holdMessage = "held by Rollout demo/web: stage prod waits for stage canary to soak for 10m0s"

// fleet is a hub with a Deployment applied on one cluster and held by a
// Rollout on the other, a closed gate and a running deletion countdown.
func fleet() []client.Object {
	tomb := countdown.Tombstone{Cluster: "member2", APIVersion: "v1", Kind: "ConfigMap", Namespace: "demo", Name: "old-config",
		StartedAt: now.Add(-time.Minute), Delay: "1h", Due: now.Add(59 * time.Minute),
		Binding: countdown.Ref{Kind: "ResourceBinding", Namespace: "demo", Name: "old-config-configmap"}}
	pull := readyCluster("member2")
	pull.Spec.SyncMode = clusterv1alpha1.Pull
	return []client.Object{
		readyCluster("member1"), pull,
		webBinding("demo", "web", 1, "member1", "member2"),
		applied(deploymentWork("member1", "demo", "web", "nginx:1.27"), 2),
		runs(held(deploymentWork("member2", "demo", "web", "nginx:1.27"), workkeys.ReasonRolloutStage, holdMessage), "nginx:1.25"),
		&rolloutsv1alpha1.Rollout{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "web"},
			Spec: rolloutsv1alpha1.RolloutSpec{PolicyRef: rolloutsv1alpha1.PolicyReference{Name: "web-pp"},
				MaxFailures: ptr.To(intstr.FromInt32(1)),
				Stages: []rolloutsv1alpha1.Stage{{Name: "canary", Clusters: []string{"member1"}, MinSuccessTime: &metav1.Duration{Duration: 10 * time.Minute}},
					{Name: "prod", Clusters: []string{"member2"}, Gates: []string{"change-window"}}}},
			Status: rolloutsv1alpha1.RolloutStatus{Revision: 2, CurrentStage: "canary", SoakStartedAt: ptr.To(metav1.NewTime(now.Add(-4 * time.Minute))),
				Clusters: []rolloutsv1alpha1.ClusterStatus{
					{Name: "member1", Stage: "canary", State: rolloutsv1alpha1.StateHealthy, Revision: 2, Since: metav1.NewTime(now.Add(-4 * time.Minute))},
					{Name: "member2", Stage: "prod", State: rolloutsv1alpha1.StateHeld, Revision: 1, Reason: "StageNotReached",
						Message: "waits for stage canary", Since: metav1.NewTime(now.Add(-4 * time.Minute))}}}},
		&gatingv1alpha1.Gate{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "change-window"},
			Spec: gatingv1alpha1.GateSpec{Default: gatingv1alpha1.Closed}},
		tomb.ConfigMap(),
	}
}

func newTestServer(t *testing.T, objs ...client.Object) (*Server, *httptest.Server) {
	t.Helper()
	c := fake.NewClientBuilder().WithScheme(policy.NewScheme()).WithObjects(objs...).WithStatusSubresource().Build()
	s := New(Source{Hub: c, Tombstones: c}, Options{Now: func() time.Time { return now }, Debounce: 20 * time.Millisecond})
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return s, srv
}

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s: %s", url, resp.Status, body)
	}
	return string(body)
}

func wantAll(t *testing.T, what, body string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(body, w) {
			t.Errorf("%s does not show %q", what, w)
		}
	}
	if t.Failed() {
		t.Logf("%s:\n%s", what, body)
	}
}

func TestPageShowsEveryView(t *testing.T) {
	_, srv := newTestServer(t, fleet()...)
	page := get(t, srv.URL+"/")
	wantAll(t, "the page", page,
		// the grid: states as text, version, ready counts
		`<span class="st">Applied</span><span class="ver">nginx:1.27</span><span class="ready">2/3 ready</span>`,
		`<span class="st">Held</span><span class="ver">runs nginx:1.25, wants nginx:1.27</span>`,
		`title="`+holdMessage+`"`, "PropagationPolicy demo/web-pp",
		// rollouts: stages, current stage, soak left, failures
		`<span class="stage-name">canary</span> <span class="tag">current</span>`, `<span class="stage-name">prod</span>`,
		`<span class="stage-name">remaining</span>`, "soak left 6m0s", "Failures 0; maxFailures 1 per stage, in stage canary 0 of 1 failed, at most 1 may", "gates change-window",
		// gates
		"demo/change-window", `<span class="tag gate-closed">closed</span>`,
		// deletions
		"ConfigMap demo/old-config", "2026-05-04T12:59:00Z", "ResourceBinding demo/old-config-configmap",
		// clusters
		"member1", `>Ready</span>`, "v1.31.0", "1 kinds",
		// each cluster's mode, as get clusters shows it: member2 is served by its agent
		`<td>member1</td><td class="mode">Push</td>`, `<td>member2</td><td class="mode">Pull</td>`)
	if strings.Contains(page, "<script>") {
		t.Error("the page has an inline script; the Content-Security-Policy allows only /static")
	}
}

// A rollout whose revision reached every stage has no current stage, and
// the page says it is done rather than not begun.
func TestPageSaysACompletedRolloutReachedEveryStage(t *testing.T) {
	objs := fleet()
	for _, o := range objs {
		if r, ok := o.(*rolloutsv1alpha1.Rollout); ok {
			r.Status.CurrentStage, r.Status.SoakStartedAt = "", nil
			r.Status.Conditions = []metav1.Condition{{Type: rolloutsv1alpha1.ConditionCompleted, Status: metav1.ConditionTrue,
				Reason: "RolloutCompleted", Message: "revision 2 reached every stage", LastTransitionTime: metav1.NewTime(now)}}
		}
	}
	_, srv := newTestServer(t, objs...)
	page := get(t, srv.URL+"/")
	wantAll(t, "the page", page, `current stage <strong class="current-stage">none: every stage reached</strong>`)
	if strings.Contains(page, "none yet") {
		t.Error("a completed rollout is shown as not begun (none yet)")
	}
}

// maxFailures is per stage: a percentage is scaled against the current
// stage's clusters, as the rollout controller judges it, not against every
// cluster of the rollout.
func TestPageScalesMaxFailuresAgainstTheStage(t *testing.T) {
	objs := fleet()
	for _, o := range objs {
		if r, ok := o.(*rolloutsv1alpha1.Rollout); ok {
			r.Spec.MaxFailures = ptr.To(intstr.FromString("60%"))
			r.Status.CurrentStage, r.Status.SoakStartedAt = "prod", nil
			r.Status.Clusters = []rolloutsv1alpha1.ClusterStatus{{Name: "member1", Stage: "canary", State: rolloutsv1alpha1.StateHealthy, Revision: 2}}
			for i, state := range []string{rolloutsv1alpha1.StateFailed, rolloutsv1alpha1.StateHealthy, rolloutsv1alpha1.StateProgressing, rolloutsv1alpha1.StateProgressing} {
				r.Status.Clusters = append(r.Status.Clusters, rolloutsv1alpha1.ClusterStatus{Name: fmt.Sprintf("prod%d", i), Stage: "prod", State: state, Revision: 2})
			}
		}
	}
	_, srv := newTestServer(t, objs...)
	// 60% of prod's 4 clusters is 2 (rounded down); of all 5 it would be 3.
	wantAll(t, "the page", get(t, srv.URL+"/"), "Failures 1; maxFailures 60% per stage, in stage prod 1 of 4 failed, at most 2 may")
}

// A Rollout judged by an analysis shows, for each stage, what judges it,
// and for each cluster its verdicts and last measurement, as `federator
// rollout status` does; one without shows no Analysis column.
func TestPageShowsAnalysisVerdicts(t *testing.T) {
	_, plain := newTestServer(t, fleet()...)
	page := get(t, plain.URL+"/")
	if strings.Contains(page, "<th scope=\"col\">Analysis</th>") || strings.Contains(page, "analysis:") {
		t.Errorf("a Rollout without an analysis shows one:\n%s", page)
	}

	objs := fleet()
	for _, o := range objs {
		if r, ok := o.(*rolloutsv1alpha1.Rollout); ok {
			r.Spec.Stages[0].Analysis = &rolloutsv1alpha1.Analysis{SuccessCondition: "result[0] < 0.05",
				Provider: rolloutsv1alpha1.AnalysisProvider{Prometheus: rolloutsv1alpha1.PrometheusProvider{
					Address: "http://prometheus:9090", Query: "errors"}}}
			r.Status.Clusters[0].State = rolloutsv1alpha1.StateFailed
			r.Status.Clusters[0].Reason = rolloutsv1alpha1.ReasonAnalysisFailed
			r.Status.Clusters[0].Analysis = &rolloutsv1alpha1.ClusterAnalysis{Phase: rolloutsv1alpha1.AnalysisFailed, Failed: 1, Count: 1,
				Measurements: []rolloutsv1alpha1.Measurement{{Phase: rolloutsv1alpha1.AnalysisFailed, Value: "[0.2]", FinishedAt: metav1.NewTime(now)}}}
		}
	}
	_, srv := newTestServer(t, objs...)
	page = get(t, srv.URL+"/")
	wantAll(t, "the page", page,
		`<span class="stage-name">canary</span> <span class="tag">current</span> — member1; soak 10m0s; analysis: <code class="analysis">success when result[0] &lt; 0.05 on Prometheus http://prometheus:9090</code></li>`,
		`<th scope="col">Revision</th><th scope="col">Analysis</th><th scope="col">Why</th>`,
		`<td class="analysis">Failed 0 ok 1 failed 0 inconclusive, last Failed [0.2]</td>`,
		// member2 has no analysis yet: an empty cell keeps the columns.
		`<td>1</td><td class="analysis"></td><td><code>StageNotReached</code>`)
	prod := page[strings.Index(page, `<span class="stage-name">prod</span>`):]
	if prod = prod[:strings.Index(prod, "</li>")]; strings.Contains(prod, "analysis") {
		t.Errorf("the prod stage, which no analysis judges, shows one: %s", prod)
	}
}

func TestCellDetailSaysWhyAndSince(t *testing.T) {
	_, srv := newTestServer(t, fleet()...)
	id := "rb/demo/" + names.GenerateBindingName("Deployment", "web")
	body := get(t, srv.URL+"/fragment/detail?cell="+id+"&cluster=member2")
	wantAll(t, "member2's detail", body, "Deployment demo/web on member2", ">Held</span> <code>RolloutStage</code>",
		holdMessage, "2026-05-04T11:58:00Z", "2m00s ago", "Dispatching", workkeys.MessageSuspendDispatching,
		"deletion delay 10m")
	body = get(t, srv.URL+"/fragment/detail?cell="+id+"&cluster=member1")
	wantAll(t, "member1's detail", body, ">Applied</span>", "Available", "Deployment has minimum availability.")
	// The page opens a cell from its link too, without script.
	wantAll(t, "the page with a cell open", get(t, srv.URL+"/?cell="+id+"&cluster=member2"), holdMessage, `data-fragment="/fragment/detail?`)
}

func TestGridStates(t *testing.T) {
	stale := applied(deploymentWork("member1", "demo", "web", "nginx:1.26"), 3)
	failed := deploymentWork("member2", "demo", "web", "nginx:1.27")
	failed.Status.Conditions = []metav1.Condition{{Type: workkeys.ConditionApplied, Status: metav1.ConditionFalse, Reason: workkeys.ReasonAppliedFailed,
		Message: "admission webhook denied the request", ObservedGeneration: 2}}
	deleting := deploymentWork("member3", "demo", "web", "nginx:1.27")
	_, srv := newTestServer(t, readyCluster("member1"), readyCluster("member2"), readyCluster("member3"),
		webBinding("demo", "web", 2, "member1", "member2"), stale, failed, deleting)
	body := get(t, srv.URL+"/fragment/grid")
	wantAll(t, "the grid", body, `<td class="state-Pending">`, `<span class="st">Pending</span>`, "the hub has not yet written the binding&#39;s generation 2 into the Work (it carries 1)",
		`<span class="st">Failed</span>`, "admission webhook denied the request", `<span class="st">Deleting</span>`)
}

// bigFleet is 100 clusters × 200 Deployments, half in team-a, half in
// team-b, every copy applied.
func bigFleet() []client.Object {
	objs := []client.Object{}
	var clusters []string
	for i := range 100 {
		name := fmt.Sprintf("member%03d", i)
		clusters = append(clusters, name)
		objs = append(objs, readyCluster(name))
	}
	for i := range 200 {
		ns := "team-a"
		if i%2 == 1 {
			ns = "team-b"
		}
		name := fmt.Sprintf("app%03d", i)
		objs = append(objs, webBinding(ns, name, 1, clusters...))
		for _, c := range clusters {
			objs = append(objs, applied(deploymentWork(c, ns, name, "nginx:1.27"), 3))
		}
	}
	return objs
}

// BenchmarkGridPage is the dashboard's own cost of one grid page of a
// 100 × 200 fleet, its read of the cache aside (make it with -benchmem).
func BenchmarkGridPage(b *testing.B) {
	c := fake.NewClientBuilder().WithScheme(policy.NewScheme()).WithObjects(bigFleet()...).Build()
	s := New(Source{Hub: c}, Options{Now: func() time.Time { return now }})
	snap, err := read(context.Background(), s.src, now, []string{fragGrid})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		v := &view{Now: now, Grid: s.grid(snap, filter{}, nil)}
		if err := s.pages.ExecuteTemplate(io.Discard, "grid", v); err != nil {
			b.Fatal(err)
		}
	}
}

func TestRolloutSaysMoreOfAppliedCopies(t *testing.T) {
	ro := &rolloutsv1alpha1.Rollout{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "web"},
		Spec: rolloutsv1alpha1.RolloutSpec{PolicyRef: rolloutsv1alpha1.PolicyReference{Name: "web-pp"}},
		Status: rolloutsv1alpha1.RolloutStatus{Clusters: []rolloutsv1alpha1.ClusterStatus{
			{Name: "member1", State: rolloutsv1alpha1.StateProgressing, Reason: "NotHealthy", Message: "1 of 3 pods of revision 2 ready"},
			{Name: "member2", State: rolloutsv1alpha1.StateRolledBack, Reason: "RolledBack", Message: "put back on revision 1"},
			{Name: "member3", State: rolloutsv1alpha1.StateFailed, Reason: "ProgressDeadlineExceeded", Message: "not healthy within 10m0s"},
			{Name: "member4", State: rolloutsv1alpha1.StateHealthy}}}}
	objs := []client.Object{ro, webBinding("demo", "web", 1, "member1", "member2", "member3", "member4")}
	for _, m := range []string{"member1", "member2", "member3", "member4"} {
		objs = append(objs, readyCluster(m), applied(deploymentWork(m, "demo", "web", "nginx:1.27"), 3))
	}
	_, srv := newTestServer(t, objs...)
	wantAll(t, "the grid", get(t, srv.URL+"/fragment/grid"),
		`title="1 of 3 pods of revision 2 ready"><span class="st">Progressing</span>`,
		`title="put back on revision 1"><span class="st">RolledBack</span>`,
		`title="not healthy within 10m0s"><span class="st">Failed</span>`,
		`data-cluster="member4" title=""><span class="st">Applied</span>`)
}

func TestGridFiltersAndPages(t *testing.T) {
	_, srv := newTestServer(t, bigFleet()...)
	start := time.Now()
	body := get(t, srv.URL+"/")
	took := time.Since(start)
	t.Logf("100 clusters × 200 templates: the page in %v, %d bytes", took, len(body))
	wantAll(t, "page 1", body, "200 templates × 100 clusters", "team-a/app000", "team-a/app098", "member000", "member024",
		`aria-label="template pages"`, "of 4", "of 4</nav>")
	grid := get(t, srv.URL+"/fragment/grid")
	for _, absent := range []string{"team-b/app001", ">member025<"} {
		if strings.Contains(grid, absent) {
			t.Errorf("page 1 shows %s, which is on another page", absent)
		}
	}
	body = get(t, srv.URL+"/fragment/grid?ns=team-b&page=2&cpage=4")
	wantAll(t, "team-b, page 2, clusters page 4", body, "100 templates × 100 clusters", "team-b/app101", "member099")
	if strings.Contains(body, "team-a/") || strings.Contains(body, "member000") {
		t.Error("the filtered page shows team-a or the first clusters")
	}
	body = get(t, srv.URL+"/fragment/grid?label=app%3Dapp007")
	wantAll(t, "label app=app007", body, "1 template ×", "app007")
	if body := get(t, srv.URL+"/fragment/grid?kind=ConfigMap"); !strings.Contains(body, "No templates match the filter") {
		t.Errorf("kind=ConfigMap shows templates:\n%s", body)
	}
}

func TestReadOnly(t *testing.T) {
	_, srv := newTestServer(t, fleet()...)
	for _, path := range []string{"/", "/events", "/fragment/grid", "/static/app.js"} {
		for _, method := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch} {
			req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader("{}"))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "GET, HEAD" {
				t.Errorf("%s %s: %s (Allow %q), want 405 with Allow: GET, HEAD", method, path, resp.Status, resp.Header.Get("Allow"))
			}
		}
	}
}

func TestStaticAndUnknown(t *testing.T) {
	_, srv := newTestServer(t)
	wantAll(t, "app.js", get(t, srv.URL+"/static/app.js"), "EventSource", "connection lost, reconnecting")
	wantAll(t, "app.css", get(t, srv.URL+"/static/app.css"), ".state-Held")
	wantAll(t, "an empty hub", get(t, srv.URL+"/"), "No templates are propagated yet", "No Rollouts.", "No Gates.", "No clusters are registered.")
	for _, path := range []string{"/fragment/nope", "/nope"} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %s, want 404", path, resp.Status)
		}
	}
}

// events reads server-sent events from the stream at url.
func events(t *testing.T, ctx context.Context, url string) <-chan [2]string {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("/events: Content-Type %q", ct)
	}
	out := make(chan [2]string, 16)
	go func() {
		defer resp.Body.Close()
		defer close(out)
		var event string
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				event = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				out <- [2]string{event, strings.TrimPrefix(line, "data: ")}
			}
		}
	}()
	return out
}

func next(t *testing.T, ch <-chan [2]string, within time.Duration) [2]string {
	t.Helper()
	select {
	case e, ok := <-ch:
		if !ok {
			t.Fatal("the event stream ended")
		}
		return e
	case <-time.After(within):
		t.Fatalf("no event within %v", within)
	}
	return [2]string{}
}

func TestEventsAfterAChange(t *testing.T) {
	s, srv := newTestServer(t, fleet()...)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	informers := &informertest.FakeInformers{Scheme: policy.NewScheme()}
	if err := s.Watch(ctx, informers, informers); err != nil {
		t.Fatal(err)
	}
	stream := events(t, ctx, srv.URL+"/events")
	if e := next(t, stream, time.Second); e != [2]string{"hello", "live"} {
		t.Fatalf("first event %v, want hello", e)
	}
	works, err := informers.FakeInformerFor(ctx, &workv1alpha1.Work{})
	if err != nil {
		t.Fatal(err)
	}
	gates, _ := informers.FakeInformerFor(ctx, &gatingv1alpha1.Gate{})
	// Changes in one interval make one event naming every fragment.
	w := deploymentWork("member1", "demo", "web", "nginx:1.28")
	works.Add(w)
	works.Update(w, w)
	gates.Add(&gatingv1alpha1.Gate{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "g"}})
	if e := next(t, stream, time.Second); e != [2]string{"change", "deletions detail gates grid"} {
		t.Fatalf("after a Work and a Gate changed: %v, want change of deletions detail gates grid", e)
	}
	clusters, _ := informers.FakeInformerFor(ctx, &clusterv1alpha1.Cluster{})
	clusters.Delete(readyCluster("member1"))
	if e := next(t, stream, time.Second); e != [2]string{"change", "clusters grid"} {
		t.Fatalf("after a Cluster went: %v", e)
	}
	select {
	case e := <-stream:
		t.Fatalf("an event without a change: %v", e)
	case <-time.After(100 * time.Millisecond):
	}
}

func TestURL(t *testing.T) {
	for addr, want := range map[string]string{"127.0.0.1:8090": "http://127.0.0.1:8090/", "[::]:80": "http://localhost:80/", "0.0.0.0:1": "http://localhost:1/"} {
		a, err := netAddr(addr)
		if err != nil {
			t.Fatal(err)
		}
		if got := URL(a); got != want {
			t.Errorf("URL(%s) = %s, want %s", addr, got, want)
		}
	}
}

func netAddr(s string) (*net.TCPAddr, error) { return net.ResolveTCPAddr("tcp", s) }

func TestWithoutTombstonesSaysSo(t *testing.T) {
	c := fake.NewClientBuilder().WithScheme(policy.NewScheme()).WithObjects(fleet()...).Build()
	srv := httptest.NewServer(New(Source{Hub: c}, Options{Now: func() time.Time { return now }}))
	defer srv.Close()
	body := get(t, srv.URL+"/fragment/deletions")
	wantAll(t, "deletions without tombstones", body, "Deletion countdowns are not shown: this dashboard cannot read the hub's tombstone ConfigMaps")
	if strings.Contains(body, "old-config") {
		t.Error("a countdown is shown though the dashboard reads no tombstones")
	}
}

func TestHeadAnswersWithoutStreaming(t *testing.T) {
	_, srv := newTestServer(t, fleet()...)
	client := &http.Client{Timeout: 2 * time.Second}
	for _, path := range []string{"/", "/events"} {
		resp, err := client.Head(srv.URL + path)
		if err != nil {
			t.Fatalf("HEAD %s: %v", path, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("HEAD %s: %s", path, resp.Status)
		}
	}
}
