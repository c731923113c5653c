package bindingstatus

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

func statusItem(cluster, status string) workv1alpha2.AggregatedStatusItem {
	i := workv1alpha2.AggregatedStatusItem{ClusterName: cluster}
	if status != "" {
		i.Status = &runtime.RawExtension{Raw: []byte(status)}
	}
	return i
}

// templateOf is obj as the hub stores it, with status.
func templateOf(t *testing.T, obj runtime.Object) *unstructured.Unstructured {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	// As read from the API: JSON, not Go values.
	raw, _ := json.Marshal(m)
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(raw); err != nil {
		t.Fatal(err)
	}
	return u
}

// statusAs decodes an aggregated status into out.
func statusAs(t *testing.T, status map[string]any, out any) {
	t.Helper()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(status, out); err != nil {
		t.Fatal(err)
	}
}

// The collected statuses below are what the dispatcher writes into Works
// (Karmada's reflected status: a Deployment's counts with the member
// object's generation beside them).
func TestTemplateStatusOfDeployments(t *testing.T) {
	both := map[string]bool{"member1": true, "member2": true}
	for _, tc := range []struct {
		name    string
		items   []workv1alpha2.AggregatedStatusItem
		current map[string]bool
		want    appsv1.DeploymentStatus
	}{
		{"sums replica counts and observes the template once every member runs it",
			[]workv1alpha2.AggregatedStatusItem{
				statusItem("member1", `{"replicas":2,"readyReplicas":2,"updatedReplicas":2,"availableReplicas":2,"observedGeneration":3,"generation":3}`),
				statusItem("member2", `{"replicas":3,"readyReplicas":1,"updatedReplicas":3,"availableReplicas":1,"unavailableReplicas":2,"observedGeneration":5,"generation":5}`),
			}, both,
			appsv1.DeploymentStatus{Replicas: 5, ReadyReplicas: 3, UpdatedReplicas: 5, AvailableReplicas: 3, UnavailableReplicas: 2, ObservedGeneration: 9}},
		{"a member object rewritten more often than the template still observes it",
			[]workv1alpha2.AggregatedStatusItem{
				statusItem("member1", `{"replicas":2,"observedGeneration":12,"generation":12}`),
				statusItem("member2", `{"replicas":2,"observedGeneration":5,"generation":5}`),
			}, both,
			appsv1.DeploymentStatus{Replicas: 4, ObservedGeneration: 9}},
		{"a suspended member keeps the old observedGeneration but still counts",
			[]workv1alpha2.AggregatedStatusItem{
				statusItem("member1", `{"replicas":2,"readyReplicas":2,"observedGeneration":3,"generation":3}`),
				statusItem("member2", `{"replicas":2,"readyReplicas":2,"observedGeneration":5,"generation":5}`),
			}, map[string]bool{"member1": true},
			appsv1.DeploymentStatus{Replicas: 4, ReadyReplicas: 4, ObservedGeneration: 7}},
		{"a stale stamp in the collected status does not make a member current",
			[]workv1alpha2.AggregatedStatusItem{
				statusItem("member1", `{"replicas":2,"observedGeneration":3,"generation":3}`),
				statusItem("member2", `{"replicas":2,"observedGeneration":5,"generation":5,"resourceTemplateGeneration":9}`),
			}, map[string]bool{"member1": true},
			appsv1.DeploymentStatus{Replicas: 4, ObservedGeneration: 7}},
		{"a member controller that has not observed its spec keeps the old observedGeneration",
			[]workv1alpha2.AggregatedStatusItem{
				statusItem("member1", `{"replicas":2,"observedGeneration":2,"generation":3}`),
				statusItem("member2", `{"replicas":2,"observedGeneration":5,"generation":5}`),
			}, both,
			appsv1.DeploymentStatus{Replicas: 4, ObservedGeneration: 7}},
		{"a member without status yet keeps the old observedGeneration",
			[]workv1alpha2.AggregatedStatusItem{
				statusItem("member1", `{"replicas":2,"observedGeneration":3,"generation":3}`),
				statusItem("member2", ""),
			}, both,
			appsv1.DeploymentStatus{Replicas: 2, ObservedGeneration: 7}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tpl := templateOf(t, &appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
				ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", Generation: 9},
				Status:     appsv1.DeploymentStatus{ObservedGeneration: 7}})
			status, changed, err := TemplateStatus(tpl, tc.items, tc.current)
			if err != nil || !changed {
				t.Fatalf("changed = %v, err = %v", changed, err)
			}
			var got appsv1.DeploymentStatus
			statusAs(t, status, &got)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestTemplateStatusUnchangedIsNotWritten(t *testing.T) {
	items := []workv1alpha2.AggregatedStatusItem{
		statusItem("member1", `{"replicas":2,"readyReplicas":2,"observedGeneration":3,"generation":3}`),
		statusItem("member2", `{"replicas":2,"readyReplicas":2,"observedGeneration":5,"generation":5}`),
	}
	current := map[string]bool{"member1": true, "member2": true}
	for _, tc := range []struct {
		name string
		tpl  runtime.Object
	}{
		{"a Deployment whose status already is the sum",
			&appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
				ObjectMeta: metav1.ObjectMeta{Generation: 9},
				Status:     appsv1.DeploymentStatus{Replicas: 4, ReadyReplicas: 4, ObservedGeneration: 9}}},
		{"a Job the hub already reports finished (Karmada never rewrites it)",
			&batchv1.Job{TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
				Status: batchv1.JobStatus{Succeeded: 1, Conditions: []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}}}},
		{"a kind whose status the hub does not aggregate",
			&corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, changed, err := TemplateStatus(templateOf(t, tc.tpl), items, current)
			if err != nil || changed {
				t.Errorf("changed = %v, err = %v; want no write", changed, err)
			}
		})
	}
}

func TestTemplateStatusOfStatefulSetsAndDaemonSets(t *testing.T) {
	current := map[string]bool{"member1": true, "member2": true}
	t.Run("a StatefulSet's replica counts are summed and its generation observed", func(t *testing.T) {
		tpl := templateOf(t, &appsv1.StatefulSet{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSet"},
			ObjectMeta: metav1.ObjectMeta{Generation: 2}})
		status, changed, err := TemplateStatus(tpl, []workv1alpha2.AggregatedStatusItem{
			statusItem("member1", `{"replicas":2,"readyReplicas":2,"currentReplicas":2,"updatedReplicas":2,"availableReplicas":2,"observedGeneration":4,"generation":4}`),
			statusItem("member2", `{"replicas":2,"readyReplicas":1,"currentReplicas":2,"updatedReplicas":1,"availableReplicas":1,"observedGeneration":1,"generation":1}`),
		}, current)
		if err != nil || !changed {
			t.Fatalf("changed = %v, err = %v", changed, err)
		}
		var got appsv1.StatefulSetStatus
		statusAs(t, status, &got)
		want := appsv1.StatefulSetStatus{Replicas: 4, ReadyReplicas: 3, CurrentReplicas: 4, UpdatedReplicas: 3, AvailableReplicas: 3, ObservedGeneration: 2}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("got %+v\nwant %+v", got, want)
		}
	})
	t.Run("a DaemonSet's counts are summed; a member not current keeps the old observedGeneration", func(t *testing.T) {
		tpl := templateOf(t, &appsv1.DaemonSet{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "DaemonSet"},
			ObjectMeta: metav1.ObjectMeta{Generation: 2}, Status: appsv1.DaemonSetStatus{ObservedGeneration: 1}})
		status, changed, err := TemplateStatus(tpl, []workv1alpha2.AggregatedStatusItem{
			statusItem("member1", `{"currentNumberScheduled":2,"desiredNumberScheduled":2,"numberReady":2,"numberAvailable":2,"updatedNumberScheduled":2,"observedGeneration":2,"generation":2}`),
			statusItem("member2", `{"currentNumberScheduled":2,"desiredNumberScheduled":2,"numberReady":1,"numberAvailable":1,"updatedNumberScheduled":1,"numberUnavailable":1,"observedGeneration":2,"generation":2}`),
		}, map[string]bool{"member1": true})
		if err != nil || !changed {
			t.Fatalf("changed = %v, err = %v", changed, err)
		}
		var got appsv1.DaemonSetStatus
		statusAs(t, status, &got)
		want := appsv1.DaemonSetStatus{CurrentNumberScheduled: 4, DesiredNumberScheduled: 4, NumberReady: 3, NumberAvailable: 3,
			UpdatedNumberScheduled: 3, NumberUnavailable: 1, ObservedGeneration: 1}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("got %+v\nwant %+v", got, want)
		}
	})
}

func TestTemplateStatusOfJobs(t *testing.T) {
	job := func(cluster string, active, succeeded int, complete string) workv1alpha2.AggregatedStatusItem {
		s := batchv1.JobStatus{Active: int32(active), Succeeded: int32(succeeded),
			StartTime: &metav1.Time{Time: time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)}}
		if complete != "" {
			at, _ := time.Parse(time.RFC3339, complete)
			s.CompletionTime = &metav1.Time{Time: at}
			s.Conditions = []batchv1.JobCondition{
				{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue},
				{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
		}
		raw, _ := json.Marshal(s)
		return workv1alpha2.AggregatedStatusItem{ClusterName: cluster, Status: &runtime.RawExtension{Raw: raw}}
	}
	types := func(cs []batchv1.JobCondition) []batchv1.JobConditionType {
		var out []batchv1.JobConditionType
		for _, c := range cs {
			if c.Status == corev1.ConditionTrue {
				out = append(out, c.Type)
			}
		}
		return out
	}
	for _, tc := range []struct {
		name           string
		items          []workv1alpha2.AggregatedStatusItem
		wantActive     int32
		wantSucceeded  int32
		wantConditions []batchv1.JobConditionType
		wantCompletion string
	}{
		{"a Job still running in one member is not complete",
			[]workv1alpha2.AggregatedStatusItem{job("member1", 0, 1, "2026-01-01T10:00:05Z"), job("member2", 1, 0, "")},
			1, 1, nil, ""},
		{"a Job complete in every member is complete, at the last member's completion",
			[]workv1alpha2.AggregatedStatusItem{job("member1", 0, 1, "2026-01-01T10:00:05Z"), job("member2", 0, 1, "2026-01-01T10:00:09Z"),
				job("member3", 0, 1, "2026-01-01T10:00:07Z")},
			0, 3, []batchv1.JobConditionType{batchv1.JobComplete, batchv1.JobSuccessCriteriaMet}, "2026-01-01T10:00:09Z"},
		{"a member whose status is not collected yet keeps the Job from completing",
			[]workv1alpha2.AggregatedStatusItem{job("member1", 0, 1, "2026-01-01T10:00:05Z"), statusItem("member2", "")},
			0, 1, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tpl := templateOf(t, &batchv1.Job{TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"}})
			status, changed, err := TemplateStatus(tpl, tc.items, nil)
			if err != nil || !changed {
				t.Fatalf("changed = %v, err = %v", changed, err)
			}
			var got batchv1.JobStatus
			statusAs(t, status, &got)
			if got.Active != tc.wantActive || got.Succeeded != tc.wantSucceeded {
				t.Errorf("active %d succeeded %d, want %d and %d", got.Active, got.Succeeded, tc.wantActive, tc.wantSucceeded)
			}
			if !reflect.DeepEqual(types(got.Conditions), tc.wantConditions) {
				t.Errorf("conditions %v, want %v", types(got.Conditions), tc.wantConditions)
			}
			var completion string
			if got.CompletionTime != nil {
				completion = got.CompletionTime.UTC().Format(time.RFC3339)
			}
			if completion != tc.wantCompletion {
				t.Errorf("completionTime %q, want %q", completion, tc.wantCompletion)
			}
			if len(tc.wantConditions) > 0 && got.StartTime == nil {
				t.Errorf("startTime not set: the API server refuses a finished Job without one")
			}
		})
	}
}

// TestTemplateStatusKeepsAJobsStartTime: the API server refuses to move a
// Job's startTime once set, and every later status with it.
func TestTemplateStatusKeepsAJobsStartTime(t *testing.T) {
	at := func(second int) *metav1.Time {
		return &metav1.Time{Time: time.Date(2026, 1, 1, 10, 0, second, 0, time.UTC)}
	}
	running := func(cluster string, start *metav1.Time) workv1alpha2.AggregatedStatusItem {
		raw, _ := json.Marshal(batchv1.JobStatus{Active: 1, StartTime: start})
		return workv1alpha2.AggregatedStatusItem{ClusterName: cluster, Status: &runtime.RawExtension{Raw: raw}}
	}
	for _, tc := range []struct {
		name  string
		old   *metav1.Time
		items []workv1alpha2.AggregatedStatusItem
		want  *metav1.Time
	}{
		{"set when every member's Job started, to the earliest",
			nil, []workv1alpha2.AggregatedStatusItem{running("member1", at(5)), running("member2", at(3))}, at(3)},
		{"not set while a member's Job has not started",
			nil, []workv1alpha2.AggregatedStatusItem{running("member1", at(5)), running("member2", nil)}, nil},
		{"not set while a member's status is not collected",
			nil, []workv1alpha2.AggregatedStatusItem{running("member1", at(5)), statusItem("member2", "")}, nil},
		{"kept once set, though a member reports an earlier one",
			at(5), []workv1alpha2.AggregatedStatusItem{running("member1", at(5)), running("member2", at(3))}, at(5)},
		{"kept once set, though a member's Job has not started",
			at(5), []workv1alpha2.AggregatedStatusItem{running("member1", at(5)), running("member2", nil)}, at(5)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tpl := templateOf(t, &batchv1.Job{TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
				Status: batchv1.JobStatus{StartTime: tc.old}})
			status, _, err := TemplateStatus(tpl, tc.items, nil)
			if err != nil {
				t.Fatal(err)
			}
			var got batchv1.JobStatus
			statusAs(t, status, &got)
			if format(got.StartTime) != format(tc.want) {
				t.Errorf("startTime %s, want %s", format(got.StartTime), format(tc.want))
			}
		})
	}
}

func TestTemplateStatusNamesTheTemplateWhenAMemberStatusIsUnreadable(t *testing.T) {
	tpl := templateOf(t, &appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"}})
	_, _, err := TemplateStatus(tpl, []workv1alpha2.AggregatedStatusItem{statusItem("member2", `[1]`)}, nil)
	if err == nil || !contains(err.Error(), "Deployment shop/web", "member2") {
		t.Errorf("err = %v, want it to name the template and the cluster", err)
	}
}

func contains(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

func format(t *metav1.Time) string {
	if t == nil {
		return "none"
	}
	return t.UTC().Format(time.RFC3339)
}
