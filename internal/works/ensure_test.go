package works

import (
	"context"
	"strings"
	"testing"

	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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

// staleCache is a fake hub whose reads of Works return *stale when it is
// set: the cache, behind the API server.
func staleCache(stale **workv1alpha1.Work) client.Client {
	return fake.NewClientBuilder().WithScheme(policy.NewScheme()).WithStatusSubresource(&workv1alpha1.Work{}).
		WithInterceptorFuncs(interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if w, ok := obj.(*workv1alpha1.Work); ok && *stale != nil {
				(*stale).DeepCopyInto(w)
				return nil
			}
			return c.Get(ctx, key, obj, opts...)
		}}).Build()
}

func testWork(suspend bool, image string, annotations map[string]string) *workv1alpha1.Work {
	return &workv1alpha1.Work{
		ObjectMeta: metav1.ObjectMeta{Namespace: "karmada-es-member1", Name: "web", Labels: map[string]string{"owner": "b1"}, Annotations: annotations},
		Spec: workv1alpha1.WorkSpec{SuspendDispatching: ptr.To(suspend), Workload: workv1alpha1.WorkloadTemplate{
			Manifests: []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: []byte(`{"kind":"Deployment","image":"` + image + `"}`)}}}}},
	}
}

// The binding controller released a Work (v1) and the cache has not seen
// it yet: it still shows the Work held. The next pass holds again and
// brings v2. Compared with the stale copy the hold looks unchanged; it must
// be written all the same, or v2 is stored released.
func TestEnsureWorkStatesTheHoldTheStaleCacheAlreadyShows(t *testing.T) {
	ctx := context.Background()
	var stale *workv1alpha1.Work
	c := staleCache(&stale)
	held := map[string]string{"work.federator.dev/hold-reason": "SuspendDispatching", "work.federator.dev/hold-message": "held"}
	if err := c.Create(ctx, testWork(true, "v1", held)); err != nil {
		t.Fatal(err)
	}
	cached := &workv1alpha1.Work{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "karmada-es-member1", Name: "web"}, cached); err != nil {
		t.Fatal(err)
	}
	if _, err := EnsureWork(ctx, c, testWork(false, "v1", nil), "owner"); err != nil {
		t.Fatal(err)
	}
	stale = cached // the release is not in the cache yet

	if _, err := EnsureWork(ctx, c, testWork(true, "v2", held), "owner"); err != nil {
		t.Fatal(err)
	}
	stale = nil
	stored := &workv1alpha1.Work{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "karmada-es-member1", Name: "web"}, stored); err != nil {
		t.Fatal(err)
	}
	if !ptr.Deref(stored.Spec.SuspendDispatching, false) {
		t.Errorf("v2 is stored released: %s", stored.Spec.Workload.Manifests[0].Raw)
	}
	for k, v := range held {
		if stored.Annotations[k] != v {
			t.Errorf("annotation %s = %q, want %q", k, stored.Annotations[k], v)
		}
	}
}

// A pass that read an older binding than the one the stored Work was
// written from writes nothing and says its cache is behind.
func TestEnsureWorkRefusesAPassFromAnOlderBinding(t *testing.T) {
	ctx := context.Background()
	var stale *workv1alpha1.Work
	c := staleCache(&stale)
	gen := func(g string) map[string]string { return map[string]string{"work.federator.dev/binding-generation": g} }
	if err := c.Create(ctx, testWork(false, "v2", gen("7"))); err != nil {
		t.Fatal(err)
	}
	_, err := EnsureWork(ctx, c, testWork(true, "v1", gen("6")), "owner")
	if !apierrors.IsConflict(err) {
		t.Fatalf("EnsureWork from binding generation 6 over a Work of generation 7 = %v, want a conflict", err)
	}
	stored := &workv1alpha1.Work{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "karmada-es-member1", Name: "web"}, stored); err != nil {
		t.Fatal(err)
	}
	if ptr.Deref(stored.Spec.SuspendDispatching, false) || !strings.Contains(string(stored.Spec.Workload.Manifests[0].Raw), "v2") {
		t.Errorf("the Work was changed by a pass from an older binding: %+v", stored.Spec)
	}
	if r, err := EnsureWork(ctx, c, testWork(true, "v3", gen("8")), "owner"); err != nil || r != Updated {
		t.Errorf("EnsureWork from a newer binding = %s, %v; want updated", r, err)
	}
}

// uncached reads past staleCache's stale copy: the API server.
type uncached struct {
	client.Client
	stale **workv1alpha1.Work
}

func (u uncached) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	saved := *u.stale
	*u.stale = nil
	defer func() { *u.stale = saved }()
	return u.Client.Get(ctx, key, obj, opts...)
}

// A release decided from caches that are all behind (a new leader's, right
// after a hub restart) is refused when the stored Work's spec is newer than
// the cached one: it would overwrite a newer hold with an older version.
// Holds are written without asking.
func TestEnsureWorkConfirmsAReleaseAgainstTheStoredWork(t *testing.T) {
	ctx := context.Background()
	var stale *workv1alpha1.Work
	c := staleCache(&stale)
	first := testWork(true, "v1", nil)
	first.Generation = 1
	if err := c.Create(ctx, first); err != nil {
		t.Fatal(err)
	}
	cached := &workv1alpha1.Work{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(first), cached); err != nil {
		t.Fatal(err)
	}
	newer := cached.DeepCopy()
	newer.Generation = 2
	newer.Spec.Workload.Manifests[0].Raw = []byte(`{"kind":"Deployment","image":"v2"}`)
	if err := c.Update(ctx, newer); err != nil {
		t.Fatal(err)
	}
	stale = cached // the cache still has generation 1
	_, err := EnsureWork(ctx, c, testWork(false, "v1", nil), "owner", Confirm(uncached{c, &stale}))
	if !apierrors.IsConflict(err) {
		t.Fatalf("a release decided from generation 1 over a stored generation 2 = %v, want a conflict", err)
	}
	stale = nil
	stored := &workv1alpha1.Work{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(first), stored); err != nil {
		t.Fatal(err)
	}
	if !ptr.Deref(stored.Spec.SuspendDispatching, false) || !strings.Contains(string(stored.Spec.Workload.Manifests[0].Raw), "v2") {
		t.Errorf("the stored hold was overwritten by a release from a stale cache: %+v", stored.Spec)
	}
	stale = cached
	if r, err := EnsureWork(ctx, c, testWork(true, "v3", nil), "owner", Confirm(uncached{c, &stale})); err != nil || r != Updated {
		t.Errorf("a hold from the same stale cache = %s, %v; want it written (holding never waits)", r, err)
	}
}
