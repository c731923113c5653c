package works

import (
	"context"
	"testing"

	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/federator-dev/federator/apis/policy"
)

// The dispatcher writes a Work's status while the binding controller
// writes its spec; a cache that has not yet seen the status write is no
// reason for the spec write to be refused, and the hold annotations the
// spec write takes away are gone from the stored Work.
func TestEnsureWorkWritesOverAStatusWriteTheCacheHasNotSeen(t *testing.T) {
	ctx := context.Background()
	work := func(suspend bool, annotations map[string]string) *workv1alpha1.Work {
		return &workv1alpha1.Work{
			ObjectMeta: metav1.ObjectMeta{Namespace: "karmada-es-member1", Name: "web", Labels: map[string]string{"owner": "b1"}, Annotations: annotations},
			Spec: workv1alpha1.WorkSpec{SuspendDispatching: ptr.To(suspend), Workload: workv1alpha1.WorkloadTemplate{
				Manifests: []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: []byte(`{"kind":"Deployment"}`)}}}}},
		}
	}
	held := map[string]string{"work.federator.dev/hold-reason": "SuspendDispatching", "work.federator.dev/hold-message": "held"}
	var stale *workv1alpha1.Work
	c := fake.NewClientBuilder().WithScheme(policy.NewScheme()).WithStatusSubresource(&workv1alpha1.Work{}).
		WithInterceptorFuncs(interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if w, ok := obj.(*workv1alpha1.Work); ok && stale != nil {
				stale.DeepCopyInto(w) // the cache, one status write behind
				return nil
			}
			return c.Get(ctx, key, obj, opts...)
		}}).Build()
	if err := c.Create(ctx, work(true, held)); err != nil {
		t.Fatal(err)
	}
	stored := &workv1alpha1.Work{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "karmada-es-member1", Name: "web"}, stored); err != nil {
		t.Fatal(err)
	}
	stale = stored.DeepCopy()
	stored.Status.Conditions = []metav1.Condition{{Type: "Dispatching", Status: metav1.ConditionFalse, Reason: "SuspendDispatching",
		Message: "Work dispatching is in a suspended state.", LastTransitionTime: metav1.Now()}}
	if err := c.Status().Update(ctx, stored); err != nil {
		t.Fatal(err)
	}

	result, err := EnsureWork(ctx, c, work(false, nil), "owner")
	if err != nil {
		t.Fatalf("EnsureWork: %v", err)
	}
	if result != Updated {
		t.Errorf("EnsureWork = %s, want %s", result, Updated)
	}
	stale = nil
	if err := c.Get(ctx, client.ObjectKey{Namespace: "karmada-es-member1", Name: "web"}, stored); err != nil {
		t.Fatal(err)
	}
	if ptr.Deref(stored.Spec.SuspendDispatching, true) {
		t.Error("the stored Work is still suspended")
	}
	for k := range held {
		if _, ok := stored.Annotations[k]; ok {
			t.Errorf("the stored Work still has annotation %s", k)
		}
	}
	if len(stored.Status.Conditions) != 1 {
		t.Errorf("the stored Work's status lost the dispatcher's condition: %v", stored.Status.Conditions)
	}
}
