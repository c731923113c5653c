package cli

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	"github.com/pmezard/go-difflib/difflib"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workkeys "github.com/federator-dev/federator/apis/work"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from what the code prints now")

// golden compares got with testdata/name; -update rewrites the file.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if got != string(want) {
		d, _ := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{A: difflib.SplitLines(string(want)),
			B: difflib.SplitLines(got), FromFile: path, ToFile: "printed", Context: 2})
		t.Errorf("output differs from %s (go test -update rewrites it):\n%s", path, d)
	}
}

const holdMessage = `suspended by annotation propagation.federator.dev/suspended on PropagationPolicy demo/web ("incident 42"); remove the annotation to resume`

func condition(condType string, status metav1.ConditionStatus, reason, message string, generation int64) metav1.Condition {
	return metav1.Condition{Type: condType, Status: status, Reason: reason, Message: message, ObservedGeneration: generation,
		LastTransitionTime: created(time.Minute)}
}

// rolloutHub is a staged rollout caught in every state: Deployment
// demo/web at generation 3 (nginx:1.27) is applied in member1, held in
// member2, refused by member3, not yet rewritten for member4, has no Work
// for member5 yet and is leaving member6; Deployment demo/api is applied in
// member1 and waits for member2.
func rolloutHub(t *testing.T) *hub {
	t.Helper()
	h := newTestHub(t, cluster("member1"), cluster("member2"),
		propagationPolicy("web", map[string]string{"propagation.federator.dev/suspended": "incident 42"}, nil),
		deployment("web", "nginx:1.27", 3, nil), deployment("api", "nginx:1.25", 1, nil))
	web, api := template(t, h, "web"), template(t, h, "api")
	older := web.DeepCopy()
	containers, _, _ := unstructured.NestedSlice(older.Object, "spec", "template", "spec", "containers")
	containers[0].(map[string]any)["image"] = "nginx:1.25"
	if err := unstructured.SetNestedSlice(older.Object, containers, "spec", "template", "spec", "containers"); err != nil {
		t.Fatal(err)
	}

	webRB := resourceBinding("web", "web", "member1", "member2", "member3", "member4", "member5")
	apiRB := resourceBinding("api", "api", "member1", "member2")
	applied := condition(workkeys.ConditionApplied, metav1.ConditionTrue, workkeys.ReasonAppliedSuccessful, workkeys.MessageAppliedSuccessful, 1)
	dispatching := condition(workkeys.ConditionDispatching, metav1.ConditionTrue, workkeys.ReasonDispatching, workkeys.MessageDispatching, 1)
	held := condition(workkeys.ConditionDispatching, metav1.ConditionFalse, workkeys.ReasonSuspendDispatching, workkeys.MessageSuspendDispatching, 2)

	w1 := workFor(t, webRB, web, "member1")
	w1.Status = workv1alpha1.WorkStatus{Conditions: []metav1.Condition{dispatching, applied},
		ManifestStatuses: []workv1alpha1.ManifestStatus{{Status: memberStatus(2, 2)}}}
	w2 := workFor(t, webRB, web, "member2")
	w2.Spec.SuspendDispatching = ptr.To(true)
	w2.Annotations[workkeys.HoldReasonAnnotation] = workkeys.ReasonSuspendDispatching
	w2.Annotations[workkeys.HoldMessageAnnotation] = holdMessage
	// nginx:1.27 written while held: member2 still runs nginx:1.25, as the
	// binding controller recorded when it wrote nginx:1.27.
	w2.Generation = 2
	w2.Annotations[workkeys.MemberRunsAnnotation] = `{"images":["nginx:1.25"],"bindingGeneration":"2"}`
	w2.Status = workv1alpha1.WorkStatus{Conditions: []metav1.Condition{held, applied},
		ManifestStatuses: []workv1alpha1.ManifestStatus{{Status: memberStatus(1, 2)}}}
	w3 := workFor(t, webRB, web, "member3")
	w3.Annotations[workkeys.MemberRunsAnnotation] = `{"images":["nginx:1.25"],"bindingGeneration":"2"}`
	w3.Status.Conditions = []metav1.Condition{dispatching, condition(workkeys.ConditionApplied, metav1.ConditionFalse, workkeys.ReasonAppliedFailed,
		`Failed to apply all manifests (0/1): admission webhook "images.example.com" denied the request: nginx:1.27 is not signed`, 1)}
	w4 := workFor(t, webRB, older, "member4")
	w4.Status.Conditions = []metav1.Condition{dispatching, applied}
	w6 := workFor(t, webRB, web, "member6")
	w6.Finalizers = []string{workkeys.ExecutionFinalizer}
	w6.DeletionTimestamp = ptr.To(created(time.Second))
	a1 := workFor(t, apiRB, api, "member1")
	a1.Status = workv1alpha1.WorkStatus{Conditions: []metav1.Condition{dispatching, applied},
		ManifestStatuses: []workv1alpha1.ManifestStatus{{Status: memberStatus(2, 2)}}}
	a2 := workFor(t, apiRB, api, "member2")
	a2.Generation = 2 // released, not yet applied by the member
	a2.Status.Conditions = []metav1.Condition{dispatching, applied}

	for _, obj := range []client.Object{webRB, apiRB, w1, w2, w3, w4, w6, a1, a2} {
		if err := h.client.Create(t.Context(), obj); err != nil {
			t.Fatal(err)
		}
		if w, ok := obj.(*workv1alpha1.Work); ok && len(w.Status.Conditions) > 0 {
			if err := h.client.Status().Update(t.Context(), w); err != nil {
				t.Fatal(err)
			}
		}
	}
	return h
}

// goldenCase is a command line whose output testdata/golden holds.
type goldenCase struct {
	golden string
	args   []string
}

// runGolden runs each case against a fresh hub from newHub.
func runGolden(t *testing.T, newHub func(*testing.T) *hub, cases []goldenCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.golden, func(t *testing.T) {
			stdout, stderr, err := run(t, newHub(t), tc.args...)
			if err != nil || stderr != "" {
				t.Fatalf("%v: error %v, stderr %q", tc.args, err, stderr)
			}
			golden(t, tc.golden, stdout)
		})
	}
}

func TestGetRolloutGolden(t *testing.T) {
	runGolden(t, rolloutHub, []goldenCase{
		{"rollout.golden", []string{"get", "rollout", "-n", "demo"}},
		{"rollout-wide.golden", []string{"get", "rollout", "-n", "demo", "-o", "wide"}},
		{"rollout-all-namespaces.golden", []string{"get", "rollout", "-A"}},
		{"rollout.json.golden", []string{"get", "rollout", "-n", "demo", "-o", "json"}},
		{"rollout-web.yaml.golden", []string{"get", "rollout", "deployment/web", "-n", "demo", "-o", "yaml"}},
	})
}

// The JSON document is what scripts read: its field names are a promise.
func TestGetRolloutJSONIsStableForScripts(t *testing.T) {
	stdout, _, err := run(t, rolloutHub(t), "get", "rollout", "web", "-n", "demo", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Items      []struct {
			Template struct {
				Kind, Name string
				Generation int64
			}
			Clusters []struct {
				Cluster, State, Message string
				Generation              int64
				Images                  []string
				ReadyReplicas           *int64
				DesiredReplicas         *int64
			}
		}
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.APIVersion != "cli.federator.dev/v1alpha1" || doc.Kind != "RolloutList" || len(doc.Items) != 1 {
		t.Fatalf("document %s/%s with %d items, want cli.federator.dev/v1alpha1 RolloutList with web only", doc.APIVersion, doc.Kind, len(doc.Items))
	}
	states := map[string]string{}
	for _, c := range doc.Items[0].Clusters {
		states[c.Cluster] = c.State
	}
	want := map[string]string{"member1": "Applied", "member2": "Held", "member3": "Failed", "member4": "Pending",
		"member5": "Pending", "member6": "Deleting"}
	for cluster, state := range want {
		if states[cluster] != state {
			t.Errorf("%s: state %q, want %q (all: %v)", cluster, states[cluster], state, states)
		}
	}
	first := doc.Items[0].Clusters[0]
	if first.Generation != 3 || strings.Join(first.Images, ",") != "nginx:1.27" || *first.ReadyReplicas != 2 || *first.DesiredReplicas != 2 {
		t.Errorf("member1: %+v, want generation 3, nginx:1.27, 2/2 ready", first)
	}
}

func TestClusterState(t *testing.T) {
	work := func(mutate func(w *workv1alpha1.Work)) *workv1alpha1.Work {
		w := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: "karmada-es-member1", Name: "web-1", Generation: 2,
			Annotations: map[string]string{}}}
		w.Status.Conditions = []metav1.Condition{condition(workkeys.ConditionApplied, metav1.ConditionTrue, workkeys.ReasonAppliedSuccessful, "", 2)}
		mutate(w)
		return w
	}
	same := func(*workv1alpha1.Work) {}
	heldAt := func(generation int64) metav1.Condition {
		return condition(workkeys.ConditionDispatching, metav1.ConditionFalse, workkeys.ReasonSuspendDispatching,
			workkeys.MessageSuspendDispatching, generation)
	}
	cases := []struct {
		name              string
		work              *workv1alpha1.Work
		current, deleting bool
		state, reason     string
		message           string
	}{
		{"a current Work the member applied is Applied", work(same), true, false, StateApplied, workkeys.ReasonAppliedSuccessful, ""},
		{"no Work yet is Pending", nil, false, false, StatePending, "", "no Work for member1 yet"},
		{"a Work behind the template is Pending, whatever the member applied", work(same), false, false, StatePending, "",
			"the hub has not yet written generation 7 into the Work"},
		{"an applied condition from an older Work generation is Pending", work(func(w *workv1alpha1.Work) { w.Generation = 3 }), true, false,
			StatePending, "", "waiting for member1 to apply the Work"},
		{"no Applied condition yet is Pending", work(func(w *workv1alpha1.Work) { w.Status.Conditions = nil }), true, false,
			StatePending, "", "waiting for member1 to apply the Work"},
		{"a Work whose override cannot be applied is Failed, and says which policy and rule", work(func(w *workv1alpha1.Work) {
			w.Annotations[workkeys.OverrideFailedAnnotation] = "OverridePolicy shop/canary spec.overrideRules[1] cannot be applied: x"
		}), false, false, StateFailed, "ApplyOverridePolicyFailed", "OverridePolicy shop/canary spec.overrideRules[1] cannot be applied: x"},
		{"a held Work is Held with the hold annotations", work(func(w *workv1alpha1.Work) {
			w.Spec.SuspendDispatching = ptr.To(true)
			w.Annotations[workkeys.HoldReasonAnnotation] = "GateClosed"
			w.Annotations[workkeys.HoldMessageAnnotation] = "held by gate demo/business-hours; open it to release"
			w.Status.Conditions = append(w.Status.Conditions, heldAt(2))
		}), true, false, StateHeld, "GateClosed", "held by gate demo/business-hours; open it to release"},
		{"a Work held on the hub that its dispatcher has not held at this generation yet is Pending", work(func(w *workv1alpha1.Work) {
			w.Spec.SuspendDispatching = ptr.To(true)
			w.Annotations[workkeys.HoldReasonAnnotation] = "GateClosed"
			w.Status.Conditions = append(w.Status.Conditions, heldAt(1))
		}), true, false, StatePending, "", "waiting for member1's dispatcher to hold generation 2 of the Work"},
		{"a held Work without hold annotations (another Karmada controller) says Karmada's words", work(func(w *workv1alpha1.Work) {
			w.Spec.SuspendDispatching = ptr.To(true)
			w.Status.Conditions = append(w.Status.Conditions, heldAt(2))
		}), true, false, StateHeld, workkeys.ReasonSuspendDispatching, workkeys.MessageSuspendDispatching},
		{"held beats a failure: the person decided it", work(func(w *workv1alpha1.Work) {
			w.Spec.SuspendDispatching = ptr.To(true)
			w.Status.Conditions = []metav1.Condition{condition(workkeys.ConditionApplied, metav1.ConditionFalse, workkeys.ReasonAppliedFailed, "boom", 2), heldAt(2)}
		}), true, false, StateHeld, workkeys.ReasonSuspendDispatching, workkeys.MessageSuspendDispatching},
		{"a refused Work is Failed with the member's error", work(func(w *workv1alpha1.Work) {
			w.Status.Conditions = []metav1.Condition{condition(workkeys.ConditionApplied, metav1.ConditionFalse, workkeys.ReasonAppliedFailed, "quota exceeded", 2)}
		}), true, false, StateFailed, workkeys.ReasonAppliedFailed, "quota exceeded"},
		{"a Work being deleted is Deleting, even when held", work(func(w *workv1alpha1.Work) {
			w.Spec.SuspendDispatching = ptr.To(true)
			w.DeletionTimestamp = ptr.To(created(time.Second))
		}), true, false, StateDeleting, "", "being removed from member1"},
		{"a Work its Rollout rolled back is Applied at the revision it names, not Pending behind the template", work(func(w *workv1alpha1.Work) {
			w.Annotations[workkeys.RolledBackAnnotation] = "revision 3 of Rollout shop/web"
		}), false, false, StateApplied, "RolledBack",
			"rolled back to revision 3 of Rollout shop/web, the last content healthy on member1; the template's latest reaches it when the rollout releases a fixed version"},
		{"a rolled-back Work the member has not applied yet is Pending and says so", work(func(w *workv1alpha1.Work) {
			w.Annotations[workkeys.RolledBackAnnotation] = "revision 3 of Rollout shop/web"
			w.Generation = 3
		}), false, false, StatePending, "RolledBack", "rolled back to revision 3 of Rollout shop/web: waiting for member1 to apply it"},
		{"a template going away is Deleting everywhere", work(same), true, true, StateDeleting, "", "being removed from member1"},
		{"a template going away whose Work is gone is Deleting", nil, false, true, StateDeleting, "", "removed from member1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := clusterState("member1", tc.work, tc.current, tc.deleting, 7)
			if got.State != tc.state || got.Reason != tc.reason || got.Message != tc.message {
				t.Errorf("got %s / %q / %q, want %s / %q / %q", got.State, got.Reason, got.Message, tc.state, tc.reason, tc.message)
			}
			if (got.Generation == 7) != (tc.state == StateApplied && tc.reason != "RolledBack") {
				t.Errorf("generation %d: only Applied states the generation the member runs", got.Generation)
			}
		})
	}
}

func TestGetRolloutNamesWhatItCannotFind(t *testing.T) {
	_, _, err := run(t, rolloutHub(t), "get", "rollout", "cart", "-n", "demo")
	if err == nil || !strings.Contains(err.Error(), `no propagated template named "cart" in namespace demo`) {
		t.Errorf("error %v, want one naming the template and the namespace", err)
	}
	_, stderr, err := run(t, newTestHub(t), "get", "rollout", "-n", "empty")
	if err != nil || stderr != "No rollout found in namespace empty.\n" {
		t.Errorf("empty namespace: error %v, stderr %q", err, stderr)
	}
}

// A binding claimed through a ClusterPropagationPolicy names it.
func TestRolloutNamesTheClaimingPolicy(t *testing.T) {
	rb := resourceBinding("web", "web", "member1")
	rb.Annotations = map[string]string{policyv1alpha1.ClusterPropagationPolicyAnnotation: "everywhere"}
	h := newTestHub(t, rb, deployment("web", "nginx:1.27", 1, nil))
	items, err := gatherRollouts(t.Context(), h, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 1 || items[0].Policy == nil || objectName(*items[0].Policy) != "ClusterPropagationPolicy/everywhere" {
		t.Errorf("items %+v, want web claimed by ClusterPropagationPolicy everywhere", items)
	}
}

// A binding whose template is gone is on its way out: every cluster says
// Deleting, whatever its Work still says.
func TestRolloutOfADeletedTemplateIsDeleting(t *testing.T) {
	h := rolloutHub(t)
	if err := h.client.Delete(t.Context(), deployment("api", "", 0, nil)); err != nil {
		t.Fatal(err)
	}
	items, err := gatherRollouts(t.Context(), h, "api")
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 1 || len(items[0].Clusters) != 2 {
		t.Fatalf("items %+v, want api on member1 and member2", items)
	}
	for _, c := range items[0].Clusters {
		if c.State != StateDeleting {
			t.Errorf("%s: %s, want Deleting", c.Cluster, c.State)
		}
	}
}

// TestReadyCountsTheNewVersion: READY is the new version's ready pods over
// the desired ones, so a rollout stuck on a version whose pods never become
// ready does not look done while the old pods serve.
func TestReadyCountsTheNewVersion(t *testing.T) {
	const deployment = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"namespace":"demo","name":"web"},"spec":{"replicas":2}}`
	const daemonSet = `{"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"namespace":"demo","name":"agent"},"spec":{}}`
	const replicaSet = `{"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"namespace":"demo","name":"web"},"spec":{"replicas":2}}`
	for _, tc := range []struct {
		name, manifest, status string
		want                   string
	}{
		{"a completed rollout: every pod new and ready", deployment,
			`{"replicas":2,"updatedReplicas":2,"readyReplicas":2,"availableReplicas":2,"observedGeneration":3,"generation":3}`, "2/2"},
		{"stuck: one broken new pod, the two old ones still ready", deployment,
			`{"replicas":3,"updatedReplicas":1,"readyReplicas":2,"availableReplicas":2,"unavailableReplicas":1,"observedGeneration":3,"generation":3}`, "0/2"},
		{"half way: one new pod ready, two old ones still ready", deployment,
			`{"replicas":3,"updatedReplicas":1,"readyReplicas":3,"availableReplicas":3,"observedGeneration":3,"generation":3}`, "1/2"},
		{"the member's controller has not yet seen the new spec", deployment,
			`{"replicas":2,"updatedReplicas":2,"readyReplicas":2,"availableReplicas":2,"observedGeneration":2,"generation":3}`, "0/2"},
		{"a DaemonSet stuck on one node", daemonSet,
			`{"desiredNumberScheduled":2,"currentNumberScheduled":2,"updatedNumberScheduled":1,"numberReady":1,"observedGeneration":2,"generation":2}`, "0/2"},
		{"a kind that does not roll counts every ready pod", replicaSet,
			`{"replicas":2,"readyReplicas":2,"availableReplicas":2,"observedGeneration":1,"generation":1}`, "2/2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: "karmada-es-member1", Name: "web-1", Generation: 2}}
			w.Spec.Workload.Manifests = []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: []byte(tc.manifest)}}}
			w.Status.Conditions = []metav1.Condition{condition(workkeys.ConditionApplied, metav1.ConditionTrue, workkeys.ReasonAppliedSuccessful, "", 2)}
			w.Status.ManifestStatuses = []workv1alpha1.ManifestStatus{{Status: &runtime.RawExtension{Raw: []byte(tc.status)}}}
			rows := rolloutTable([]templateRollout{{Template: templateInfo{Kind: "Deployment", Name: "web"},
				Clusters: []clusterRollout{clusterState("member1", w, true, false, 3)}}}, false, false).rows
			if got := rows[0][4]; got != tc.want {
				t.Errorf("READY %s, want %s", got, tc.want)
			}
		})
	}
}
