package dispatch

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/federator-dev/federator/apis/policy"
	"github.com/federator-dev/federator/internal/fixture"
)

const testCluster = "member1"

// workFixture is a Work of one Deployment for testCluster, as the binding
// controller writes it.
func workFixture(t *testing.T, suspend bool, annotations map[string]string) *workv1alpha1.Work {
	t.Helper()
	manifest := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop",` +
		`"labels":{"karmada.io/managed":"true"},"annotations":{"work.karmada.io/name":"web-1","work.karmada.io/namespace":"karmada-es-member1"}},` +
		`"spec":{"replicas":2,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},` +
		`"spec":{"containers":[{"name":"web","image":"nginx:1.25"}]}}}}`
	return &workv1alpha1.Work{
		ObjectMeta: metav1.ObjectMeta{Namespace: "karmada-es-member1", Name: "web-1", Generation: 1,
			Finalizers: []string{"karmada.io/execution-controller"}, Annotations: annotations},
		Spec: workv1alpha1.WorkSpec{SuspendDispatching: ptr.To(suspend),
			Workload: workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: []byte(manifest)}}}}},
	}
}

type dispatchTest struct {
	r        *WorkReconciler
	hub      client.Client
	member   client.Client
	recorder *record.FakeRecorder
}

func newDispatchTest(t *testing.T, hubFuncs interceptor.Funcs, hubObjs []client.Object, memberObjs ...client.Object) *dispatchTest {
	t.Helper()
	scheme := policy.NewScheme()
	hubObjs = append(hubObjs, &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: testCluster}})
	hub := fake.NewClientBuilder().WithScheme(scheme).WithObjects(hubObjs...).
		WithStatusSubresource(&workv1alpha1.Work{}).WithInterceptorFuncs(hubFuncs).Build()
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(appsv1.SchemeGroupVersion.WithKind("Deployment"), meta.RESTScopeNamespace)
	member := fake.NewClientBuilder().WithScheme(scheme).WithRESTMapper(mapper).WithObjects(memberObjs...).Build()
	cfg := &rest.Config{Host: "https://member1.test"}
	members := NewMembers(func(context.Context, string) (*rest.Config, error) { return cfg, nil }, ClientOptions{})
	members.clients[testCluster] = memberClient{identity: identity(cfg), client: member}
	recorder := record.NewFakeRecorder(100)
	return &dispatchTest{r: &WorkReconciler{Hub: hub, Members: members, Recorder: recorder, Cluster: testCluster},
		hub: hub, member: member, recorder: recorder}
}

func (d *dispatchTest) reconcile(t *testing.T, w *workv1alpha1.Work) ctrl.Result {
	t.Helper()
	res, err := d.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(w)})
	if err != nil {
		t.Fatalf("reconcile: %v", err)
	}
	return res
}

func (d *dispatchTest) events() []string { return fixture.Events(d.recorder) }

func (d *dispatchTest) work(t *testing.T, w *workv1alpha1.Work) *workv1alpha1.Work {
	t.Helper()
	got := &workv1alpha1.Work{}
	if err := d.hub.Get(context.Background(), client.ObjectKeyFromObject(w), got); err != nil {
		t.Fatalf("get work: %v", err)
	}
	return got
}

func (d *dispatchTest) memberDeployment() (*appsv1.Deployment, error) {
	dep := &appsv1.Deployment{}
	return dep, d.member.Get(context.Background(), client.ObjectKey{Namespace: "shop", Name: "web"}, dep)
}

func TestWorkReconciler(t *testing.T) {
	t.Run("a held Work gets Dispatching=False/SuspendDispatching, exactly one WorkDispatching event, and nothing in the member", func(t *testing.T) {
		w := workFixture(t, true, map[string]string{"work.federator.dev/hold-reason": "SuspendDispatching",
			"work.federator.dev/hold-message": "suspended by annotation propagation.federator.dev/suspended on Deployment shop/web"})
		d := newDispatchTest(t, interceptor.Funcs{}, []client.Object{w})
		d.reconcile(t, w)
		d.reconcile(t, w)
		c := meta.FindStatusCondition(d.work(t, w).Status.Conditions, "Dispatching")
		if c == nil || c.Status != metav1.ConditionFalse || c.Reason != "SuspendDispatching" ||
			c.Message != "Work dispatching is in a suspended state." {
			t.Errorf("Dispatching condition = %+v", c)
		}
		if events := d.events(); len(events) != 1 || events[0] != "Normal WorkDispatching Work dispatching is in a suspended state." {
			t.Errorf("events = %q, want exactly one WorkDispatching", events)
		}
		if _, err := d.memberDeployment(); !apierrors.IsNotFound(err) {
			t.Errorf("member Deployment: err = %v, want NotFound", err)
		}
	})

	t.Run("a held Work whose manifest changes says it holds the new generation, with no new event", func(t *testing.T) {
		w := workFixture(t, true, nil)
		d := newDispatchTest(t, interceptor.Funcs{}, []client.Object{w})
		d.reconcile(t, w)
		stored := d.work(t, w)
		stored.Spec.Workload.Manifests[0].Raw = []byte(strings.Replace(string(stored.Spec.Workload.Manifests[0].Raw), "nginx:1.25", "nginx:1.27", 1))
		stored.Generation = 2
		if err := d.hub.Update(context.Background(), stored); err != nil {
			t.Fatal(err)
		}
		_ = d.events() // the first hold's
		d.reconcile(t, w)
		c := meta.FindStatusCondition(d.work(t, w).Status.Conditions, "Dispatching")
		if c == nil || c.Reason != "SuspendDispatching" || c.ObservedGeneration != 2 {
			t.Errorf("Dispatching = %+v, want SuspendDispatching at observedGeneration 2", c)
		}
		if got := d.events(); len(got) != 0 {
			t.Errorf("events = %q: the hold is no news", got)
		}
	})

	t.Run("a Work held by another holder reports its reason and message", func(t *testing.T) {
		w := workFixture(t, true, map[string]string{"work.federator.dev/hold-reason": "GateClosed",
			"work.federator.dev/hold-message": "gate shop/prod is closed"})
		d := newDispatchTest(t, interceptor.Funcs{}, []client.Object{w})
		d.reconcile(t, w)
		c := meta.FindStatusCondition(d.work(t, w).Status.Conditions, "Dispatching")
		if c == nil || c.Reason != "GateClosed" || c.Message != "gate shop/prod is closed" {
			t.Errorf("Dispatching condition = %+v", c)
		}
		if events := d.events(); len(events) != 1 || events[0] != "Normal WorkDispatching gate shop/prod is closed" {
			t.Errorf("events = %q", events)
		}
	})

	t.Run("a dispatched Work is applied, Applied=True with one WorkDispatching and one SyncSucceed event, and a second pass writes nothing", func(t *testing.T) {
		w := workFixture(t, false, nil)
		d := newDispatchTest(t, interceptor.Funcs{}, []client.Object{w})
		d.reconcile(t, w)
		dep, err := d.memberDeployment()
		if err != nil {
			t.Fatalf("member Deployment: %v", err)
		}
		version := dep.ResourceVersion
		d.reconcile(t, w)
		if dep, _ := d.memberDeployment(); dep.ResourceVersion != version {
			t.Errorf("second pass rewrote the member object: resourceVersion %s → %s", version, dep.ResourceVersion)
		}
		c := meta.FindStatusCondition(d.work(t, w).Status.Conditions, "Applied")
		if c == nil || c.Status != metav1.ConditionTrue || c.Reason != "AppliedSuccessful" {
			t.Errorf("Applied condition = %+v", c)
		}
		events := d.events()
		// Karmada's execution controller tells of the first dispatch too;
		// its e2e waits for this Event on each Work.
		if len(events) != 2 || events[0] != "Normal WorkDispatching Work is being dispatched to member clusters." ||
			!strings.HasPrefix(events[1], "Normal SyncSucceed Sync work(karmada-es-member1/web-1) to cluster(member1) successful.") {
			t.Errorf("events = %q, want one WorkDispatching (Karmada's message) then one SyncSucceed, and nothing else", events)
		}
	})

	t.Run("a Work being deleted while held loses its finalizer once its objects are gone from the member", func(t *testing.T) {
		w := workFixture(t, true, map[string]string{"work.federator.dev/hold-reason": "SuspendDispatching"})
		existing := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web",
			Labels:      map[string]string{"karmada.io/managed": "true"},
			Annotations: map[string]string{"work.karmada.io/name": "web-1", "work.karmada.io/namespace": "karmada-es-member1"}}}
		d := newDispatchTest(t, interceptor.Funcs{}, []client.Object{w}, existing)
		if err := d.hub.Delete(context.Background(), w); err != nil {
			t.Fatal(err)
		}
		d.reconcile(t, w)
		if _, err := d.memberDeployment(); !apierrors.IsNotFound(err) {
			t.Errorf("member Deployment: err = %v, want NotFound (deletion is never held)", err)
		}
		if err := d.hub.Get(context.Background(), client.ObjectKeyFromObject(w), &workv1alpha1.Work{}); !apierrors.IsNotFound(err) {
			t.Errorf("Work: err = %v, want NotFound (finalizer removed)", err)
		}
	})

	t.Run("a pass working from a stale Work sends no event and retries quietly", func(t *testing.T) {
		w := workFixture(t, true, nil)
		conflict := apierrors.NewConflict(schema.GroupResource{Group: "work.karmada.io", Resource: "works"}, w.Name,
			errors.New("the object has been modified"))
		d := newDispatchTest(t, interceptor.Funcs{
			SubResourcePatch: func(context.Context, client.Client, string, client.Object, client.Patch, ...client.SubResourcePatchOption) error {
				return conflict
			},
		}, []client.Object{w})
		res := d.reconcile(t, w)
		//lint:ignore SA1019 the quiet retry is the rate-limited Requeue
		if !res.Requeue {
			t.Errorf("result = %+v, want a rate-limited requeue", res)
		}
		if events := d.events(); len(events) != 0 {
			t.Errorf("events = %q, want none: the status recording the transition was not stored", events)
		}
	})
	t.Run("a pass reading a Work older than its own last status write spends no hub write on it", func(t *testing.T) {
		w := workFixture(t, true, nil)
		var stale *workv1alpha1.Work
		statusWrites := 0
		d := newDispatchTest(t, interceptor.Funcs{
			// The cache: behind once stale is set.
			Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
				if work, ok := obj.(*workv1alpha1.Work); ok && stale != nil {
					stale.DeepCopyInto(work)
					return nil
				}
				return c.Get(ctx, key, obj, opts...)
			},
			SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
				statusWrites++
				return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
			},
		}, []client.Object{w})
		before := d.work(t, w)
		d.reconcile(t, w)
		if statusWrites != 1 {
			t.Fatalf("status writes after the first pass = %d, want 1", statusWrites)
		}
		stale = before
		res := d.reconcile(t, w)
		if statusWrites != 1 {
			t.Errorf("status writes = %d, want still 1: a write from a Work older than the last one written is refused (409)", statusWrites)
		}
		//lint:ignore SA1019 the quiet retry is the rate-limited Requeue
		if !res.Requeue {
			t.Errorf("result = %+v, want a rate-limited requeue until the cache has the written status", res)
		}
		stale = nil
		d.reconcile(t, w)
		if statusWrites != 1 {
			t.Errorf("status writes = %d once the cache caught up, want still 1: nothing changed", statusWrites)
		}
	})
}

// A merge patch replaces the whole finalizer list: the execution finalizer
// is added to the Work as stored, so a finalizer another controller put on
// it after this controller's (cached) read stays.
func TestExecutionFinalizerKeepsAnotherAddedSinceTheRead(t *testing.T) {
	const theirs = "example.com/backup"
	w := workFixture(t, true, nil)
	w.Finalizers = nil
	raced := false
	d := newDispatchTest(t, interceptor.Funcs{
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			if !raced {
				// Another controller adds its finalizer between this
				// controller's read and its patch.
				raced = true
				stored := &workv1alpha1.Work{}
				if err := c.Get(ctx, client.ObjectKeyFromObject(obj), stored); err != nil {
					return err
				}
				stored.Finalizers = append(stored.Finalizers, theirs)
				if err := c.Update(ctx, stored); err != nil {
					return err
				}
			}
			return c.Patch(ctx, obj, patch, opts...)
		},
	}, []client.Object{w})
	for range 2 {
		// A pass refused for its stale read asks to be retried.
		d.reconcile(t, w)
	}
	got := d.work(t, w).Finalizers
	if !slices.Contains(got, theirs) || !slices.Contains(got, "karmada.io/execution-controller") {
		t.Errorf("finalizers = %q, want %s kept and karmada.io/execution-controller added", got, theirs)
	}
}
