package copystate

import (
	"reflect"
	"testing"

	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	workkeys "github.com/federator-dev/federator/apis/work"
)

// A copy a Freeze kept from its member is Held, with the freeze's reason
// and message, once the dispatcher says so for the Work's spec; a hold on
// the hub keeps its own reason.
func TestAFrozenCopyIsHeldByTheFreeze(t *testing.T) {
	work := func(suspended bool, conds ...metav1.Condition) *workv1alpha1.Work {
		return &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Generation: 3},
			Spec:   workv1alpha1.WorkSpec{SuspendDispatching: ptr.To(suspended)},
			Status: workv1alpha1.WorkStatus{Conditions: conds}}
	}
	frozen := func(gen int64) metav1.Condition {
		return metav1.Condition{Type: workkeys.ConditionDispatching, Status: metav1.ConditionFalse, Reason: "Frozen",
			Message: "Freeze freeze-a holds every write to member2: incident 42", ObservedGeneration: gen}
	}
	applied := metav1.Condition{Type: workkeys.ConditionApplied, Status: metav1.ConditionTrue, Reason: "AppliedSuccessful", ObservedGeneration: 2}
	for _, tc := range []struct {
		name                   string
		work                   *workv1alpha1.Work
		state, reason, message string
	}{
		{"frozen at this spec", work(false, frozen(3), applied), Held, "Frozen", "Freeze freeze-a holds every write to member2: incident 42"},
		{"frozen at the spec before: not yet judged", work(false, frozen(2), applied), Pending, "", "waiting for member2 to apply the Work"},
		{"suspended on the hub too: the suspension's reason", work(true, metav1.Condition{Type: workkeys.ConditionDispatching,
			Status: metav1.ConditionFalse, Reason: "SuspendDispatching", ObservedGeneration: 3}), Held, "SuspendDispatching", workkeys.MessageSuspendDispatching},
	} {
		got := Of("member2", tc.work, true, false, 3)
		if got.State != tc.state || got.Reason != tc.reason || got.Message != tc.message {
			t.Errorf("%s: %s/%s %q, want %s/%s %q", tc.name, got.State, got.Reason, got.Message, tc.state, tc.reason, tc.message)
		}
	}
}

// workOf is a Work of generation 4 carrying a Deployment of image, written
// from binding generation 7, with the given annotations and conditions.
func workOf(image string, suspended bool, annotations map[string]string, conds ...metav1.Condition) *workv1alpha1.Work {
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[workkeys.BindingGenerationAnnotation] = "7"
	manifest := `{"apiVersion":"apps/v1","kind":"Deployment","spec":{"template":{"spec":{"containers":[{"name":"web","image":"` + image + `"}]}}}}`
	if image == "" {
		manifest = `{"apiVersion":"v1","kind":"ConfigMap","data":{"a":"b"}}`
	}
	return &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Generation: 4, Annotations: annotations},
		Spec: workv1alpha1.WorkSpec{SuspendDispatching: ptr.To(suspended),
			Workload: workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: []byte(manifest)}}}}},
		Status: workv1alpha1.WorkStatus{Conditions: conds}}
}

func condition(kind string, status metav1.ConditionStatus, reason string, gen int64) metav1.Condition {
	return metav1.Condition{Type: kind, Status: status, Reason: reason, ObservedGeneration: gen}
}

// A copy that waits (held, pending, refused) says what its member still
// runs beside what it waits for: the Work's own manifest when the member
// runs it, else what the binding controller recorded when it wrote the
// manifest the member has not taken; nothing it cannot know.
func TestACopyThatWaitsSaysWhatTheMemberRuns(t *testing.T) {
	runs125 := map[string]string{workkeys.MemberRunsAnnotation: `{"images":["nginx:1.25"],"bindingGeneration":"6"}`}
	held := condition(workkeys.ConditionDispatching, metav1.ConditionFalse, "SuspendDispatching", 4)
	appliedNow := condition(workkeys.ConditionApplied, metav1.ConditionTrue, "AppliedSuccessful", 4)
	appliedBefore := condition(workkeys.ConditionApplied, metav1.ConditionTrue, "AppliedSuccessful", 3)
	refused := condition(workkeys.ConditionApplied, metav1.ConditionFalse, "AppliedFailed", 4)
	frozen := condition(workkeys.ConditionDispatching, metav1.ConditionFalse, "Frozen", 4)
	v := func(images ...string) *Version { return &Version{Images: images, BindingGeneration: "7"} }
	for _, tc := range []struct {
		name           string
		work           *workv1alpha1.Work
		state          string
		running, wants *Version
	}{
		{"held, the member runs what the Work carries (a stale record is not read)", workOf("nginx:1.26", true, runs125, held, appliedNow),
			Held, v("nginx:1.26"), nil},
		{"held with a change the member has not taken", workOf("nginx:1.26", true, runs125, held, appliedBefore),
			Held, &Version{Images: []string{"nginx:1.25"}, BindingGeneration: "6"}, v("nginx:1.26")},
		{"held, nothing recorded: what runs is not known", workOf("nginx:1.26", true, nil, held, appliedBefore),
			Held, nil, v("nginx:1.26")},
		{"held by a freeze", workOf("nginx:1.26", false, runs125, frozen, appliedBefore),
			Held, &Version{Images: []string{"nginx:1.25"}, BindingGeneration: "6"}, v("nginx:1.26")},
		{"pending: the member has not applied it yet", workOf("nginx:1.26", false, runs125, appliedBefore),
			Pending, &Version{Images: []string{"nginx:1.25"}, BindingGeneration: "6"}, v("nginx:1.26")},
		{"failed: the member refused it and keeps the old one", workOf("nginx:1.26", false, runs125, refused),
			Failed, &Version{Images: []string{"nginx:1.25"}, BindingGeneration: "6"}, v("nginx:1.26")},
		{"not a workload: the binding generation", workOf("", false, map[string]string{workkeys.MemberRunsAnnotation: `{"bindingGeneration":"6"}`}, appliedBefore),
			Pending, &Version{BindingGeneration: "6"}, &Version{BindingGeneration: "7"}},
		{"an unreadable record says nothing", workOf("nginx:1.26", false, map[string]string{workkeys.MemberRunsAnnotation: `nginx:1.25`}, appliedBefore),
			Pending, nil, v("nginx:1.26")},
		{"applied: neither (the images say what runs)", workOf("nginx:1.26", false, runs125, appliedNow),
			Applied, nil, nil},
	} {
		got := Of("member2", tc.work, true, false, 3)
		if got.State != tc.state || !reflect.DeepEqual(got.Running, tc.running) || !reflect.DeepEqual(got.Wants, tc.wants) {
			t.Errorf("%s: %s, running %+v, wants %+v; want %s, running %+v, wants %+v", tc.name, got.State, got.Running, got.Wants,
				tc.state, tc.running, tc.wants)
		}
	}
}

// The binding controller records what a Work carries as what its member
// runs only when the member runs it: Applied True at the Work's generation.
func TestMemberRunsOnlyWhatTheMemberApplied(t *testing.T) {
	for _, tc := range []struct {
		name string
		work *workv1alpha1.Work
		want string
	}{
		{"applied at this generation", workOf("nginx:1.25", false, nil,
			condition(workkeys.ConditionApplied, metav1.ConditionTrue, "AppliedSuccessful", 4)), `{"images":["nginx:1.25"],"bindingGeneration":"7"}`},
		{"applied at the generation before", workOf("nginx:1.25", false, nil,
			condition(workkeys.ConditionApplied, metav1.ConditionTrue, "AppliedSuccessful", 3)), ""},
		{"refused", workOf("nginx:1.25", false, nil,
			condition(workkeys.ConditionApplied, metav1.ConditionFalse, "AppliedFailed", 4)), ""},
		{"not applied yet", workOf("nginx:1.25", false, nil), ""},
		{"not a workload", workOf("", false, nil,
			condition(workkeys.ConditionApplied, metav1.ConditionTrue, "AppliedSuccessful", 4)), `{"bindingGeneration":"7"}`},
	} {
		got, ok := MemberRuns(tc.work)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("%s: MemberRuns = %q, %t; want %q", tc.name, got, ok, tc.want)
		}
	}
}

// What a waiting copy runs and wants, as a person reads them: a change
// that leaves the images as they were is told by binding generation.
func TestWaiting(t *testing.T) {
	for _, tc := range []struct {
		name        string
		state       State
		runs, wants string
	}{
		{"nothing waits", State{Running: &Version{Images: []string{"nginx:1.25"}}}, "", ""},
		{"a new image", State{Running: &Version{Images: []string{"nginx:1.25"}, BindingGeneration: "6"},
			Wants: &Version{Images: []string{"nginx:1.26"}, BindingGeneration: "7"}}, "nginx:1.25", "nginx:1.26"},
		{"what runs not known", State{Wants: &Version{Images: []string{"nginx:1.26"}}}, "", "nginx:1.26"},
		{"the same image, another change", State{Running: &Version{Images: []string{"nginx:1.25"}, BindingGeneration: "6"},
			Wants: &Version{Images: []string{"nginx:1.25"}, BindingGeneration: "7"}}, "binding gen 6", "binding gen 7"},
	} {
		if runs, wants := tc.state.Waiting(); runs != tc.runs || wants != tc.wants {
			t.Errorf("%s: Waiting() = %q, %q; want %q, %q", tc.name, runs, wants, tc.runs, tc.wants)
		}
	}
}
