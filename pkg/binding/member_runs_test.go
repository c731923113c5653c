package binding

import (
	"context"
	"strings"
	"testing"

	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	workkeys "github.com/federator-dev/federator/apis/work"
)

// memberApplied records on cluster's Work what its dispatcher would after
// applying it (applied) or before it has applied the Work's latest spec.
func (b *bindingTest) memberApplied(t *testing.T, cluster string, applied bool) {
	t.Helper()
	w := b.work(t, cluster)
	generation := w.Generation
	if !applied {
		generation-- // the spec before
	}
	w.Status.Conditions = []metav1.Condition{{Type: workkeys.ConditionApplied, Status: metav1.ConditionTrue, Reason: "AppliedSuccessful",
		ObservedGeneration: generation, LastTransitionTime: metav1.Now()}}
	if err := b.hub.Status().Update(context.Background(), w); err != nil {
		t.Fatal(err)
	}
}

// countWorkWrites counts the patches of Works (how the binding controller
// updates them).
func countWorkWrites(n *int) func(context.Context, client.WithWatch, client.Object, client.Patch, ...client.PatchOption) error {
	return func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
		if _, ok := obj.(*workv1alpha1.Work); ok {
			*n++
		}
		return c.Patch(ctx, obj, patch, opts...)
	}
}

// A Work records what its member runs when the binding controller replaces
// a manifest the member runs (Applied True at the Work's generation), and
// keeps the record while the member has not taken the Work's manifest, so
// get rollout and the dashboard can say "runs nginx:1.25, wants nginx:1.27"
// of a copy that waits. The record is no reason of its own to write a Work,
// and it is not in what the member gets.
func TestAWorkRecordsWhatItsMemberRunsWhenItsManifestIsReplaced(t *testing.T) {
	var workWrites int
	b := newBindingTest(t, nil, interceptor.Funcs{Patch: countWorkWrites(&workWrites)})
	runs := func(cluster string) string { return b.work(t, cluster).Annotations[workkeys.MemberRunsAnnotation] }
	b.setImage(t, "nginx:1.25")
	b.reconcile(t)
	if got := runs("member1"); got != "" {
		t.Fatalf("a new Work records %q as what its member runs, want nothing (it runs nothing yet)", got)
	}

	// member1 applies nginx:1.25; member2 has not yet.
	b.memberApplied(t, "member1", true)
	b.memberApplied(t, "member2", false)
	workWrites = 0
	b.reconcile(t)
	if workWrites != 0 || runs("member1") != "" {
		t.Fatalf("a member applying its Work made %d Work writes (recorded %q); want none", workWrites, runs("member1"))
	}

	// nginx:1.26 replaces what member1 runs: recorded; member2 runs nothing the hub knows of.
	b.setImage(t, "nginx:1.26")
	b.reconcile(t)
	if got, want := runs("member1"), `{"images":["nginx:1.25"],"bindingGeneration":"1"}`; got != want {
		t.Errorf("member1 records %q, want %q", got, want)
	}
	if got := runs("member2"); got != "" {
		t.Errorf("member2, which never applied its Work, records %q, want nothing", got)
	}
	if raw := string(b.work(t, "member1").Spec.Workload.Manifests[0].Raw); strings.Contains(raw, "member-runs") {
		t.Errorf("what member1 gets carries the record: %s", raw)
	}

	// nginx:1.27 before member1 took nginx:1.26: member1 still runs nginx:1.25.
	b.memberApplied(t, "member1", false)
	b.setImage(t, "nginx:1.27")
	b.reconcile(t)
	if got, want := runs("member1"), `{"images":["nginx:1.25"],"bindingGeneration":"1"}`; got != want {
		t.Errorf("member1 records %q, want %q (kept)", got, want)
	}

	// member1 takes nginx:1.27; nginx:1.28 replaces it.
	b.memberApplied(t, "member1", true)
	b.setImage(t, "nginx:1.28")
	b.reconcile(t)
	if got, want := runs("member1"), `{"images":["nginx:1.27"],"bindingGeneration":"1"}`; got != want {
		t.Errorf("member1 records %q, want %q", got, want)
	}
}
