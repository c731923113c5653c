package rollout

import (
	"context"
	"testing"
	"time"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/federator-dev/federator/apis/policy"
	v1 "github.com/federator-dev/federator/apis/rollouts/v1alpha1"
	"github.com/federator-dev/federator/internal/revision"
)

func testRollout(name, policy string, created time.Time) *v1.Rollout {
	return &v1.Rollout{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, Generation: 1, UID: types.UID("uid-" + name),
		CreationTimestamp: metav1.NewTime(created)},
		Spec: v1.RolloutSpec{PolicyRef: v1.PolicyReference{Name: policy}, Stages: []v1.Stage{{Name: "canary", Clusters: []string{"member1"}}}}}
}

func TestReconcileSaysWhyNothingRollsOut(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	pp := &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"}}
	cases := []struct {
		name    string
		objs    []client.Object
		rollout string
		cond    string
		reason  string
		message string
	}{
		{"a policy that does not exist", []client.Object{testRollout("web", "wbe", t0)}, "web",
			v1.ConditionFailed, v1.ReasonPolicyNotFound,
			"PropagationPolicy shop/wbe does not exist: nothing is rolled out; create it or fix spec.policyRef.name"},
		{"a policy that claims nothing yet", []client.Object{pp, testRollout("web", "web", t0)}, "web",
			v1.ConditionProgressing, v1.ReasonNoRevision,
			"PropagationPolicy shop/web claims no template yet (or its bindings are not placed yet): nothing to roll out"},
		{"a second Rollout of the same policy", []client.Object{pp, testRollout("web", "web", t0), testRollout("web-2", "web", t0.Add(time.Minute))}, "web-2",
			v1.ConditionFailed, v1.ReasonInvalidSpec,
			"Rollout shop/web governs PropagationPolicy web already; this one releases nothing: delete one of them"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithScheme(policy.NewScheme()).WithObjects(tc.objs...).
				WithStatusSubresource(&v1.Rollout{}).Build()
			recorder := record.NewFakeRecorder(10)
			r := &Reconciler{Client: c, Recorder: recorder}
			if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKey{Namespace: "shop", Name: tc.rollout}}); err != nil {
				t.Fatal(err)
			}
			got := &v1.Rollout{}
			if err := c.Get(context.Background(), client.ObjectKey{Namespace: "shop", Name: tc.rollout}, got); err != nil {
				t.Fatal(err)
			}
			cond := meta.FindStatusCondition(got.Status.Conditions, tc.cond)
			if cond == nil || cond.Reason != tc.reason || cond.Message != tc.message {
				t.Errorf("%s = %+v, want reason %s, message %q", tc.cond, cond, tc.reason, tc.message)
			}
			if c := meta.FindStatusCondition(got.Status.Conditions, v1.ConditionCompleted); c == nil || c.Status != metav1.ConditionFalse {
				t.Errorf("Completed = %+v, want False", c)
			}
			if got.Status.Revision != 0 {
				t.Errorf("revision %d, want none taken in", got.Status.Revision)
			}
			select {
			case e := <-recorder.Events:
				t.Errorf("event %q: nothing happened to tell", e)
			default:
			}
		})
	}
}

// A kept revision is immutable once a status names it: keep leaves it, or
// says the cache is behind; one no status names (a step whose status
// write was refused) is replaced.
func TestKeepNeverChangesARevisionTheStatusNames(t *testing.T) {
	ro := testRollout("web", "web", time.Now())
	view := revision.Rollout{Obj: ro, Spec: &ro.Spec, Status: &ro.Status, Kind: "Rollout"}
	content := func(hash string) revision.Content {
		return revision.Content{Templates: []revision.Template{{Binding: "shop/web-deployment", Hash: hash, Object: map[string]any{"kind": "Deployment"}}}}
	}
	tpl := &unstructured.Unstructured{Object: map[string]any{"kind": "Deployment"}}
	bindings := func(hash string) []binding {
		rb := &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-deployment"}}
		return []binding{{Claimed: revision.Claimed{Binding: rb, Template: tpl, Hash: hash}}}
	}
	for _, tc := range []struct {
		name         string
		statusAt     int64
		keptHash     string
		newHash      string
		wantErr      bool
		wantKeptHash string
	}{
		{"the same content kept already is left as it is", 1, "a", "a", false, "a"},
		{"another content no status names is replaced", 1, "a", "b", false, "b"},
		{"another content the stored status names is left, and the step retried", 2, "a", "b", true, "a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stored := ro.DeepCopy()
			stored.Status.Revision = tc.statusAt
			old, err := revision.NewHistory(view, 2, content(tc.keptHash))
			if err != nil {
				t.Fatal(err)
			}
			c := fake.NewClientBuilder().WithScheme(policy.NewScheme()).WithObjects(stored, old).WithStatusSubresource(&v1.Rollout{}).Build()
			r := &Reconciler{Client: c}
			err = r.keep(context.Background(), view, 2, bindings(tc.newHash))
			if (err != nil) != tc.wantErr || err != nil && !apierrors.IsConflict(err) {
				t.Fatalf("keep: %v, want error %v (a conflict)", err, tc.wantErr)
			}
			got := &appsv1.ControllerRevision{}
			if err := c.Get(context.Background(), view.HistoryKey(2), got); err != nil {
				t.Fatal(err)
			}
			if h, _ := revision.Hashes(got); h["shop/web-deployment"] != tc.wantKeptHash {
				t.Errorf("revision 2 keeps %v, want hash %s", h, tc.wantKeptHash)
			}
		})
	}
}
