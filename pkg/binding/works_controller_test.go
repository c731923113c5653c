package binding

import (
	"context"
	"errors"
	"strings"
	"testing"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/federator-dev/federator/apis/policy"
	"github.com/federator-dev/federator/internal/bindingview"
	"github.com/federator-dev/federator/internal/fixture"
)

const bindingName = "web-deployment"

type bindingTest struct {
	hub      client.Client
	works    *Reconciler
	recorder *record.FakeRecorder
}

// newBindingTest is a hub with member1 and member2, the Deployment shop/web
// and its PropagationPolicy shop/web placing it on both, and the binding the
// detector wrote for them. suspension is the policy's (and so the
// binding's) spec.suspension.
func newBindingTest(t *testing.T, suspension *policyv1alpha1.Suspension, funcs interceptor.Funcs) *bindingTest {
	t.Helper()
	placement := &policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1", "member2"}}}
	dep := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", UID: "tpl-uid", Generation: 1},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
	}
	pp := &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"},
		Spec: policyv1alpha1.PropagationSpec{Placement: *placement, Suspension: suspension}}
	rb := &workv1alpha2.ResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: bindingName, Generation: 1,
			Labels:     map[string]string{workv1alpha2.ResourceBindingPermanentIDLabel: "rb-id"},
			Finalizers: []string{"karmada.io/binding-controller"},
			Annotations: map[string]string{policyv1alpha1.PropagationPolicyNamespaceAnnotation: "shop",
				policyv1alpha1.PropagationPolicyNameAnnotation: "web"}},
		Spec: workv1alpha2.ResourceBindingSpec{
			Resource:  workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: "web", UID: "tpl-uid"},
			Placement: placement,
		},
	}
	if suspension != nil {
		rb.Spec.Suspension = &workv1alpha2.Suspension{Suspension: *suspension}
	}
	hub := fakeHub().
		WithObjects(dep, pp, rb,
			servingDeployments("member1"), servingDeployments("member2")).
		WithStatusSubresource(&workv1alpha2.ResourceBinding{}, &workv1alpha1.Work{}, &appsv1.Deployment{}).
		WithInterceptorFuncs(funcs).Build()
	recorder := record.NewFakeRecorder(100)
	return &bindingTest{hub: hub, recorder: recorder,
		works: &Reconciler{Client: hub, Recorder: recorder}}
}

// servingDeployments is a member whose status says it serves apps/v1
// Deployments, as the cluster status controller records it.
func servingDeployments(name string) *clusterv1alpha1.Cluster {
	return &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name},
		Status: clusterv1alpha1.ClusterStatus{
			APIEnablements: []clusterv1alpha1.APIEnablement{{GroupVersion: "apps/v1",
				Resources: []clusterv1alpha1.APIResource{{Name: "deployments", Kind: "Deployment"}}}},
			Conditions: []metav1.Condition{{Type: clusterv1alpha1.ClusterConditionCompleteAPIEnablements,
				Status: metav1.ConditionTrue, Reason: "Complete"}},
		}}
}

var bindingKey = types.NamespacedName{Namespace: "shop", Name: bindingName}

func (b *bindingTest) reconcile(t *testing.T) {
	t.Helper()
	if _, err := b.works.Reconcile(context.Background(), ctrl.Request{NamespacedName: bindingKey}); err != nil {
		t.Fatalf("reconcile: %v", err)
	}
}

// deleteBinding deletes the test's binding, as the detector does when its
// template goes; its finalizer holds it.
func (b *bindingTest) deleteBinding(t *testing.T) {
	t.Helper()
	rb := &workv1alpha2.ResourceBinding{}
	if err := b.hub.Get(context.Background(), bindingKey, rb); err != nil {
		t.Fatal(err)
	}
	if err := b.hub.Delete(context.Background(), rb); err != nil {
		t.Fatal(err)
	}
}

func (b *bindingTest) events() []string { return fixture.Events(b.recorder) }

func (b *bindingTest) work(t *testing.T, cluster string) *workv1alpha1.Work {
	t.Helper()
	w := &workv1alpha1.Work{}
	if err := b.hub.Get(context.Background(), client.ObjectKey{Namespace: "karmada-es-" + cluster, Name: "web-deployment-0"}, w); err != nil {
		list := &workv1alpha1.WorkList{}
		_ = b.hub.List(context.Background(), list, client.InNamespace("karmada-es-"+cluster))
		if len(list.Items) != 1 {
			t.Fatalf("works in karmada-es-%s: %d", cluster, len(list.Items))
		}
		return &list.Items[0]
	}
	return w
}

func (b *bindingTest) annotate(t *testing.T, obj client.Object, value *string) {
	t.Helper()
	patch := `{"metadata":{"annotations":{"propagation.federator.dev/suspended":null}}}`
	if value != nil {
		patch = `{"metadata":{"annotations":{"propagation.federator.dev/suspended":"` + *value + `"}}}`
	}
	if err := b.hub.Patch(context.Background(), obj, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		t.Fatal(err)
	}
}

// dispatching is the binding's Dispatching condition (empty when none).
func (b *bindingTest) dispatching(t *testing.T) metav1.Condition {
	t.Helper()
	rb := &workv1alpha2.ResourceBinding{}
	if err := b.hub.Get(context.Background(), bindingKey, rb); err != nil {
		t.Fatal(err)
	}
	if c := meta.FindStatusCondition(rb.Status.Conditions, "Dispatching"); c != nil {
		return *c
	}
	return metav1.Condition{}
}

func held(w *workv1alpha1.Work) bool { return ptr.Deref(w.Spec.SuspendDispatching, false) }

func TestBindingReconcilerHolds(t *testing.T) {
	template := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"}}
	pp := &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"}}

	t.Run("a first propagation writes a dispatched Work per target and says nothing of holds", func(t *testing.T) {
		b := newBindingTest(t, nil, interceptor.Funcs{})
		b.reconcile(t)
		for _, c := range []string{"member1", "member2"} {
			if w := b.work(t, c); held(w) || w.Annotations["work.federator.dev/hold-reason"] != "" {
				t.Errorf("%s: Work held=%v annotations=%v", c, held(w), w.Annotations)
			}
		}
		if events := b.events(); len(events) != 0 {
			t.Errorf("events = %q, want none", events)
		}
	})

	t.Run("the suspended annotation on the template holds every Work, says why on it, and tells the template once", func(t *testing.T) {
		b := newBindingTest(t, nil, interceptor.Funcs{})
		b.reconcile(t)
		b.annotate(t, template, ptr.To("incident 4711"))
		b.reconcile(t)
		b.reconcile(t)
		for _, c := range []string{"member1", "member2"} {
			w := b.work(t, c)
			if !held(w) || w.Annotations["work.federator.dev/hold-reason"] != "SuspendDispatching" ||
				!strings.Contains(w.Annotations["work.federator.dev/hold-message"], `on Deployment shop/web ("incident 4711")`) {
				t.Errorf("%s: Work held=%v annotations=%v", c, held(w), w.Annotations)
			}
		}
		want := []string{"Normal DispatchingSuspended dispatching suspended to every cluster (policy shop/web): incident 4711"}
		if events := b.events(); !equalStrings(events, want) {
			t.Errorf("events = %q, want %q", events, want)
		}
		if c := b.dispatching(t); c.Status != metav1.ConditionFalse || c.Reason != "SuspendDispatching" ||
			!strings.HasPrefix(c.Message, "member1, member2: ") || !strings.Contains(c.Message, `("incident 4711")`) {
			t.Errorf("binding Dispatching = %+v, want False naming both clusters and the note", c)
		}

		b.annotate(t, template, nil)
		b.reconcile(t)
		b.reconcile(t)
		for _, c := range []string{"member1", "member2"} {
			if w := b.work(t, c); held(w) || w.Annotations["work.federator.dev/hold-message"] != "" {
				t.Errorf("%s: after resume Work held=%v annotations=%v", c, held(w), w.Annotations)
			}
		}
		want = []string{"Normal DispatchingResumed dispatching resumed to every cluster (policy shop/web)"}
		if events := b.events(); !equalStrings(events, want) {
			t.Errorf("events = %q, want %q", events, want)
		}
		if c := b.dispatching(t); c.Status != metav1.ConditionTrue || c.Reason != "Dispatching" {
			t.Errorf("binding Dispatching after resume = %+v, want True", c)
		}
	})

	t.Run("the suspended annotation on the policy holds every Work", func(t *testing.T) {
		b := newBindingTest(t, nil, interceptor.Funcs{})
		b.annotate(t, pp, ptr.To("true"))
		b.reconcile(t)
		for _, c := range []string{"member1", "member2"} {
			if w := b.work(t, c); !held(w) || !strings.Contains(w.Annotations["work.federator.dev/hold-message"], "PropagationPolicy shop/web") {
				t.Errorf("%s: Work held=%v annotations=%v", c, held(w), w.Annotations)
			}
		}
	})

	t.Run("spec.suspension.dispatchingOnClusters holds only the listed cluster", func(t *testing.T) {
		b := newBindingTest(t, &policyv1alpha1.Suspension{DispatchingOnClusters: &policyv1alpha1.SuspendClusters{ClusterNames: []string{"member2"}}}, interceptor.Funcs{})
		b.reconcile(t)
		if w := b.work(t, "member1"); held(w) {
			t.Errorf("member1 held: %v", w.Annotations)
		}
		if w := b.work(t, "member2"); !held(w) || !strings.Contains(w.Annotations["work.federator.dev/hold-message"], "dispatchingOnClusters") {
			t.Errorf("member2: Work held=%v annotations=%v", held(w), w.Annotations)
		}
		if c := b.dispatching(t); c.Status != metav1.ConditionFalse || !strings.HasPrefix(c.Message, "member2: ") || strings.Contains(c.Message, "member1") {
			t.Errorf("binding Dispatching = %+v, want False for member2 only", c)
		}
	})

	t.Run("a Work that cannot be written sets WorksSynced=False with one SyncWorkFailed event however often it fails", func(t *testing.T) {
		forbidden := apierrors.NewForbidden(schema.GroupResource{Group: "work.karmada.io", Resource: "works"}, "web", errors.New("quota exceeded"))
		b := newBindingTest(t, nil, interceptor.Funcs{
			Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
				if _, ok := obj.(*workv1alpha1.Work); ok {
					return forbidden
				}
				return c.Create(ctx, obj, opts...)
			},
		})
		for range 3 {
			_, _ = b.works.Reconcile(context.Background(), ctrl.Request{NamespacedName: bindingKey})
		}
		rb := &workv1alpha2.ResourceBinding{}
		if err := b.hub.Get(context.Background(), bindingKey, rb); err != nil {
			t.Fatal(err)
		}
		c := meta.FindStatusCondition(rb.Status.Conditions, "WorksSynced")
		if c == nil || c.Status != metav1.ConditionFalse || c.Reason != "SyncWorkFailed" || !strings.Contains(c.Message, "quota exceeded") {
			t.Errorf("WorksSynced = %+v", c)
		}
		events := b.events()
		if len(events) != 1 || !strings.HasPrefix(events[0], "Warning SyncWorkFailed ") {
			t.Errorf("events = %q, want one SyncWorkFailed", events)
		}
	})
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestBindingReconcilerSkipsClustersLackingTheKind: a member whose complete
// list of APIs lacks the template's kind gets no Work, the Scheduled
// condition names it with Karmada's words, and once the member serves the
// kind the next reconcile writes its Work.
func TestBindingReconcilerSkipsClustersLackingTheKind(t *testing.T) {
	b := newBindingTest(t, nil, interceptor.Funcs{})
	ctx := context.Background()
	member2 := &clusterv1alpha1.Cluster{}
	if err := b.hub.Get(ctx, client.ObjectKey{Name: "member2"}, member2); err != nil {
		t.Fatal(err)
	}
	serving := member2.Status.APIEnablements
	member2.Status.APIEnablements = []clusterv1alpha1.APIEnablement{{GroupVersion: "v1",
		Resources: []clusterv1alpha1.APIResource{{Name: "configmaps", Kind: "ConfigMap"}}}}
	if err := b.hub.Update(ctx, member2); err != nil {
		t.Fatal(err)
	}
	b.reconcile(t)

	b.work(t, "member1")
	works := &workv1alpha1.WorkList{}
	if err := b.hub.List(ctx, works, client.InNamespace("karmada-es-member2")); err != nil || len(works.Items) != 0 {
		t.Errorf("Works for member2 = %d (%v), want none", len(works.Items), err)
	}
	rb := &workv1alpha2.ResourceBinding{}
	if err := b.hub.Get(ctx, bindingKey, rb); err != nil {
		t.Fatal(err)
	}
	if got := clusterNames(rb.Spec.Clusters); !equalStrings(got, []string{"member1"}) {
		t.Errorf("spec.clusters = %v, want [member1]", got)
	}
	want := "Binding has been scheduled successfully. 1 cluster(s) did not have the API resource: " +
		"apps/v1, kind=Deployment is not served by member2; each is placed as soon as it serves it."
	if c := meta.FindStatusCondition(rb.Status.Conditions, "Scheduled"); c == nil || c.Status != metav1.ConditionTrue || c.Message != want {
		t.Errorf("Scheduled = %+v, want True with message %q", c, want)
	}

	member2.Status.APIEnablements = serving
	if err := b.hub.Update(ctx, member2); err != nil {
		t.Fatal(err)
	}
	b.reconcile(t)
	b.work(t, "member2")
	if err := b.hub.Get(ctx, bindingKey, rb); err != nil {
		t.Fatal(err)
	}
	if c := meta.FindStatusCondition(rb.Status.Conditions, "Scheduled"); c == nil || c.Message != "Binding has been scheduled successfully." {
		t.Errorf("Scheduled = %+v once member2 serves Deployments", c)
	}
}

func clusterNames(targets []workv1alpha2.TargetCluster) []string {
	var names []string
	for _, t := range targets {
		names = append(names, t.Name)
	}
	return names
}

// Bad input: an override policy that cannot be applied to member1 leaves
// member1's Work with its last manifest and says, on the Work and on the
// binding, which policy and rule and why; member2's Work follows the
// template as usual, nothing is deleted, and fixing the policy clears both.
func TestBindingReconcilerKeepsTheLastGoodManifestOfABrokenOverride(t *testing.T) {
	b := newBindingTest(t, nil, interceptor.Funcs{})
	ctx := context.Background()
	b.reconcile(t)
	good := string(b.work(t, "member1").Spec.Workload.Manifests[0].Raw)

	broken := &policyv1alpha1.OverridePolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "broken"},
		Spec: policyv1alpha1.OverrideSpec{OverrideRules: []policyv1alpha1.RuleWithCluster{{
			TargetCluster: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}},
			Overriders: policyv1alpha1.Overriders{
				LabelsOverrider: []policyv1alpha1.LabelAnnotationOverrider{{Operator: policyv1alpha1.OverriderOpAdd, Value: map[string]string{"tier": "canary"}}},
				Plaintext:       []policyv1alpha1.PlaintextOverrider{{Path: "/spec/nothing", Operator: policyv1alpha1.OverriderOpRemove}},
			}}}}}
	if err := b.hub.Create(ctx, broken); err != nil {
		t.Fatal(err)
	}
	dep := &appsv1.Deployment{}
	if err := b.hub.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "web"}, dep); err != nil {
		t.Fatal(err)
	}
	dep.Spec.Replicas = ptr.To[int32](3)
	if err := b.hub.Update(ctx, dep); err != nil {
		t.Fatal(err)
	}
	if _, err := b.works.Reconcile(ctx, ctrl.Request{NamespacedName: bindingKey}); err == nil {
		t.Fatal("reconcile succeeded with a broken override")
	}

	const why = "OverridePolicy shop/broken spec.overrideRules[0] cannot be applied: error in remove for path: '/spec/nothing'"
	w1 := b.work(t, "member1")
	if got := string(w1.Spec.Workload.Manifests[0].Raw); got != good {
		t.Errorf("member1's Work changed to\n %s\nwant its last good manifest\n %s", got, good)
	}
	if got := w1.Annotations["work.federator.dev/override-failed"]; !strings.HasPrefix(got, why) {
		t.Errorf("member1's Work override-failed = %q, want it to start %q", got, why)
	}
	if w2 := b.work(t, "member2"); !strings.Contains(string(w2.Spec.Workload.Manifests[0].Raw), `"replicas":3`) ||
		w2.Annotations["work.federator.dev/override-failed"] != "" {
		t.Errorf("member2's Work does not follow the template: %s %v", w2.Spec.Workload.Manifests[0].Raw, w2.Annotations)
	}
	rb := &workv1alpha2.ResourceBinding{}
	if err := b.hub.Get(ctx, bindingKey, rb); err != nil {
		t.Fatal(err)
	}
	c := meta.FindStatusCondition(rb.Status.Conditions, "WorksSynced")
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != "SyncWorkFailed" ||
		!strings.HasPrefix(c.Message, "cluster member1: "+why) || !strings.HasSuffix(c.Message, "(its Work keeps the last manifest that could be built)") {
		t.Errorf("WorksSynced = %+v, want False naming member1, the policy and the rule", c)
	}

	if err := b.hub.Delete(ctx, broken); err != nil {
		t.Fatal(err)
	}
	b.reconcile(t)
	w1 = b.work(t, "member1")
	if _, ok := w1.Annotations["work.federator.dev/override-failed"]; ok || !strings.Contains(string(w1.Spec.Workload.Manifests[0].Raw), `"replicas":3`) {
		t.Errorf("member1's Work once the policy is gone: %s %v", w1.Spec.Workload.Manifests[0].Raw, w1.Annotations)
	}
	if err := b.hub.Get(ctx, bindingKey, rb); err != nil {
		t.Fatal(err)
	}
	if c := meta.FindStatusCondition(rb.Status.Conditions, "WorksSynced"); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("WorksSynced = %+v once the policy is gone, want True", c)
	}
}

// fakeHub is a fake hub client builder with the indexes the controllers
// list by.
func fakeHub() *fake.ClientBuilder {
	return fake.NewClientBuilder().WithScheme(policy.NewScheme()).WithIndex(&workv1alpha1.Work{}, bindingview.WorkBindingIndex, bindingview.WorkBinding)
}
