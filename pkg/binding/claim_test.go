package binding

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/event"

	workkeys "github.com/federator-dev/federator/apis/work"
)

func (b *bindingTest) setImage(t *testing.T, image string) {
	t.Helper()
	dep := &appsv1.Deployment{}
	if err := b.hub.Get(context.Background(), client.ObjectKey{Namespace: "shop", Name: "web"}, dep); err != nil {
		t.Fatal(err)
	}
	dep.Spec.Template.Spec.Containers = []corev1.Container{{Name: "web", Image: image}}
	if err := b.hub.Update(context.Background(), dep); err != nil {
		t.Fatal(err)
	}
}

// policy is the PropagationPolicy shop/web as stored.
func (b *bindingTest) policy(t *testing.T) *policyv1alpha1.PropagationPolicy {
	t.Helper()
	pp := &policyv1alpha1.PropagationPolicy{}
	if err := b.hub.Get(context.Background(), client.ObjectKey{Namespace: "shop", Name: "web"}, pp); err != nil {
		t.Fatal(err)
	}
	return pp
}

// heldWith reports whether w is held with a hold message that mentions why.
func heldWith(w *workv1alpha1.Work, why string) bool {
	return ptr.Deref(w.Spec.SuspendDispatching, false) && strings.Contains(w.Annotations["work.federator.dev/hold-message"], why)
}

func workImage(w *workv1alpha1.Work) string {
	containers, _, _ := unstructured.NestedSlice(workkeys.FirstManifest(w).Object, "spec", "template", "spec", "containers")
	if len(containers) == 0 {
		return ""
	}
	image, _ := containers[0].(map[string]any)["image"].(string)
	return image
}

// A policy that held its template (the suspended annotation, a deletion
// delay) is deleted, as a GitOps prune does before applying it again: the
// Works keep the holds and the delay they had, and do not follow a template
// change, until a policy claims the template again and decides afresh.
func TestAPolicysHoldsOutliveThePolicy(t *testing.T) {
	ctx := context.Background()
	b := newBindingTest(t, nil, interceptor.Funcs{})
	pp := b.policy(t)
	b.setImage(t, "nginx:1.27")
	b.setDelay(t, pp, "10m")
	freeze := "change-freeze"
	b.annotate(t, pp, &freeze)
	b.reconcile(t)
	if !ptr.Deref(b.work(t, "member1").Spec.SuspendDispatching, false) {
		t.Fatal("the suspended policy does not hold member1")
	}

	if err := b.hub.Delete(ctx, pp); err != nil {
		t.Fatal(err)
	}
	b.setImage(t, "nginx:1.28")
	b.reconcile(t)
	for _, cluster := range []string{"member1", "member2"} {
		w := b.work(t, cluster)
		if !heldWith(w, "change-freeze") {
			t.Errorf("%s: the policy's hold was dropped with the policy: suspend=%v message=%q", cluster,
				ptr.Deref(w.Spec.SuspendDispatching, false), w.Annotations["work.federator.dev/hold-message"])
		}
		if got := workImage(w); got != "nginx:1.27" {
			t.Errorf("%s: the Work follows the unclaimed template: image %q", cluster, got)
		}
		if got := b.manifestDelay(t, cluster); got != "10m" {
			t.Errorf("%s: the deletion delay went with the policy: %q", cluster, got)
		}
	}
	rb := &workv1alpha2.ResourceBinding{}
	if err := b.hub.Get(ctx, bindingKey, rb); err != nil {
		t.Fatal(err)
	}
	if c := meta.FindStatusCondition(rb.Status.Conditions, "WorksSynced"); c == nil || c.Reason != "Unclaimed" ||
		!strings.Contains(c.Message, "PropagationPolicy shop/web") {
		t.Errorf("WorksSynced = %+v, want reason Unclaimed naming the policy", c)
	}

	// Applied again without the annotation: it decides afresh.
	again := &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"}, Spec: pp.Spec}
	if err := b.hub.Create(ctx, again); err != nil {
		t.Fatal(err)
	}
	b.reconcile(t)
	if w := b.work(t, "member1"); ptr.Deref(w.Spec.SuspendDispatching, false) || workImage(w) != "nginx:1.28" {
		t.Errorf("the re-applied policy, which holds nothing, left member1 held=%v image=%q",
			ptr.Deref(w.Spec.SuspendDispatching, false), workImage(w))
	}
}

// While no policy claims the template, a hold written meanwhile still
// holds: a Work released before the policy went, whose version has not
// reached its member yet, is held with its manifest as it was, and nothing
// is released until a policy claims the template again (found by the chaos
// checker, seed 2026: a member stored a version after the template held
// it, while the policy was deleted and not yet applied again).
func TestAHoldWrittenWhileUnclaimedHolds(t *testing.T) {
	ctx := context.Background()
	b := newBindingTest(t, nil, interceptor.Funcs{})
	pp := b.policy(t)
	b.setImage(t, "nginx:1.27")
	b.reconcile(t)
	if held(b.work(t, "member2")) {
		t.Fatal("member2 is held before anything holds it")
	}
	if err := b.hub.Delete(ctx, pp); err != nil {
		t.Fatal(err)
	}
	tpl := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"}}
	hold := func(value any) {
		t.Helper()
		raw, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{
			"suspended.propagation.federator.dev/member2": value}}})
		if err := b.hub.Patch(ctx, tpl, client.RawPatch(types.MergePatchType, raw)); err != nil {
			t.Fatal(err)
		}
	}
	hold("look first")
	b.reconcile(t)
	w := b.work(t, "member2")
	if !heldWith(w, "look first") && !heldWith(w, "suspended.propagation.federator.dev/member2") {
		t.Errorf("member2: the template's hold, written while unclaimed, does not hold: suspend=%v message=%q",
			held(w), w.Annotations["work.federator.dev/hold-message"])
	}
	if got := workImage(w); got != "nginx:1.27" {
		t.Errorf("member2: holding changed the manifest to %q", got)
	}
	if held(b.work(t, "member1")) {
		t.Error("member1, which nothing holds, was held")
	}
	rb := &workv1alpha2.ResourceBinding{}
	if err := b.hub.Get(ctx, bindingKey, rb); err != nil {
		t.Fatal(err)
	}
	if c := meta.FindStatusCondition(rb.Status.Conditions, "WorksSynced"); c == nil || c.Reason != "Unclaimed" ||
		!strings.Contains(c.Message, "held since, by what holds now: member2") {
		t.Errorf("WorksSynced = %+v, want reason Unclaimed saying member2 was held since", c)
	}

	// Lifted while unclaimed: nothing is released until a policy decides.
	hold(nil)
	b.reconcile(t)
	if !held(b.work(t, "member2")) {
		t.Error("member2 was released while no policy claims the template")
	}
}

// What held in the deleted policy, as the detector carried it onto the
// binding, holds while no policy claims the template.
func TestTheHoldsADeletedPolicyLeftOnItsBindingHold(t *testing.T) {
	ctx := context.Background()
	b := newBindingTest(t, nil, interceptor.Funcs{})
	b.setImage(t, "nginx:1.27")
	b.reconcile(t)
	if err := b.hub.Delete(ctx, b.policy(t)); err != nil {
		t.Fatal(err)
	}
	rb := &workv1alpha2.ResourceBinding{}
	if err := b.hub.Get(ctx, bindingKey, rb); err != nil {
		t.Fatal(err)
	}
	rb.Annotations["work.federator.dev/policy-holds"] = `{"suspended.propagation.federator.dev/member2":"look first"}`
	if err := b.hub.Update(ctx, rb); err != nil {
		t.Fatal(err)
	}
	b.reconcile(t)
	if w := b.work(t, "member2"); !heldWith(w, "PropagationPolicy shop/web") || workImage(w) != "nginx:1.27" {
		t.Errorf("member2: the deleted policy's hold, carried on the binding, does not hold: suspend=%v message=%q image=%q",
			held(w), w.Annotations["work.federator.dev/hold-message"], workImage(w))
	}
	if held(b.work(t, "member1")) {
		t.Error("member1, which nothing holds, was held")
	}
}

// The cache's policy lags the API server's: a suspension written just
// before a template change is not in it yet. The pass that would send the
// change out reads the policy afresh and holds.
func TestAReleaseIsConfirmedAgainstThePolicyTheAPIServerHas(t *testing.T) {
	b := newBindingTest(t, nil, interceptor.Funcs{})
	b.reconcile(t)
	pp := b.policy(t)
	cachedPolicy := pp.DeepCopy()
	freeze := "incident"
	b.annotate(t, pp, &freeze)
	// The controller's cache still has the policy without the annotation.
	stale := interceptor.NewClient(b.hub.(client.WithWatch), interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if p, ok := obj.(*policyv1alpha1.PropagationPolicy); ok {
				cachedPolicy.DeepCopyInto(p)
				return nil
			}
			return c.Get(ctx, key, obj, opts...)
		}})
	b.works.Client, b.works.APIReader = stale, b.hub
	b.setImage(t, "nginx:1.28")
	b.reconcile(t)
	for _, cluster := range []string{"member1", "member2"} {
		w := b.work(t, cluster)
		if !heldWith(w, "incident") {
			t.Errorf("%s: the change went out past the suspension the cache had not seen: suspend=%v image=%q", cluster,
				ptr.Deref(w.Spec.SuspendDispatching, false), workImage(w))
		}
	}
}

// A Work's spec or annotations changed (by anyone, the binding controller
// included) brings its binding back; a status write does not.
func TestWorkIntentChanged(t *testing.T) {
	base := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Generation: 1, Annotations: map[string]string{"a": "1"}}}
	spec := base.DeepCopy()
	spec.Generation = 2
	annotated := base.DeepCopy()
	annotated.Annotations["work.federator.dev/hold-reason"] = "SuspendDispatching"
	status := base.DeepCopy()
	status.Status.Conditions = []metav1.Condition{{Type: "Applied", Status: metav1.ConditionTrue}}
	for name, tc := range map[string]struct {
		new  *workv1alpha1.Work
		want bool
	}{
		"spec changed":        {spec, true},
		"annotations changed": {annotated, true},
		"status changed":      {status, false},
	} {
		if got := (workIntentChanged{}).Update(event.UpdateEvent{ObjectOld: base, ObjectNew: tc.new}); got != tc.want {
			t.Errorf("%s: Update = %v, want %v", name, got, tc.want)
		}
	}
	if !(workIntentChanged{}).Delete(event.DeleteEvent{Object: base}) {
		t.Error("a deleted Work does not bring its binding back")
	}
}

// The policy suspends (the cache has it too), but the detector has not yet
// copied spec.suspension into the binding (just after a restart, it works
// through every template): the pass that would send a template change out
// holds it. Found by test/chaos (SEED=44): the binding's old suspension
// released a cluster the policy had just added.
func TestAReleaseIsConfirmedAgainstThePolicyTheBindingLags(t *testing.T) {
	ctx := context.Background()
	b := newBindingTest(t, nil, interceptor.Funcs{})
	b.reconcile(t)
	pp := b.policy(t)
	pp.Spec.Suspension = &policyv1alpha1.Suspension{DispatchingOnClusters: &policyv1alpha1.SuspendClusters{ClusterNames: []string{"member2"}}}
	if err := b.hub.Update(ctx, pp); err != nil {
		t.Fatal(err)
	}
	b.works.APIReader = b.hub
	b.setImage(t, "nginx:1.28")
	b.reconcile(t)
	if w := b.work(t, "member2"); !heldWith(w, "dispatchingOnClusters") {
		t.Errorf("member2: the change went out past the suspension the binding does not carry yet: suspend=%v image=%q message=%q",
			ptr.Deref(w.Spec.SuspendDispatching, false), workImage(w), w.Annotations["work.federator.dev/hold-message"])
	}
	if w := b.work(t, "member1"); ptr.Deref(w.Spec.SuspendDispatching, false) || workImage(w) != "nginx:1.28" {
		t.Errorf("member1, which nothing holds, was held=%v image=%q", ptr.Deref(w.Spec.SuspendDispatching, false), workImage(w))
	}
}

// A Cluster that leaves is taken out of a binding no policy claims (whose
// Works otherwise keep what they last had), and its Work is deleted: the
// Cluster's finalizer waits until no binding targets it, so an unclaimed
// binding would hold an unjoin for ever (found by the full suite).
func TestALeavingClusterLeavesAnUnclaimedBinding(t *testing.T) {
	ctx := context.Background()
	b := newBindingTest(t, nil, interceptor.Funcs{})
	b.reconcile(t)
	if err := b.hub.Delete(ctx, b.policy(t)); err != nil {
		t.Fatal(err)
	}
	member2 := &clusterv1alpha1.Cluster{}
	if err := b.hub.Get(ctx, client.ObjectKey{Name: "member2"}, member2); err != nil {
		t.Fatal(err)
	}
	member2.Finalizers = []string{"karmada.io/cluster-controller"}
	if err := b.hub.Update(ctx, member2); err != nil {
		t.Fatal(err)
	}
	if err := b.hub.Delete(ctx, member2); err != nil {
		t.Fatal(err)
	}
	work := b.work(t, "member2")
	b.reconcile(t)
	rb := &workv1alpha2.ResourceBinding{}
	if err := b.hub.Get(ctx, bindingKey, rb); err != nil {
		t.Fatal(err)
	}
	if len(rb.Spec.Clusters) != 1 || rb.Spec.Clusters[0].Name != "member1" {
		t.Errorf("the unclaimed binding targets %+v, want member1 only", rb.Spec.Clusters)
	}
	gone := &workv1alpha1.Work{}
	err := b.hub.Get(ctx, client.ObjectKeyFromObject(work), gone)
	if err == nil && gone.DeletionTimestamp.IsZero() {
		t.Error("the leaving cluster's Work was not deleted")
	}
	if w := b.work(t, "member1"); !w.DeletionTimestamp.IsZero() {
		t.Error("member1's Work, which stays, is being deleted")
	}
}

// A policy deleted and created again under the same name is another policy
// until the detector records its claim on the binding (the permanent-id
// label, as Karmada's claim does): the binding's placement and suspension
// are still the deleted one's, so its Works stay as they were, and follow
// the template again only once the binding names the new policy (found by
// the chaos checker: a member the new policy left out was sent versions
// from the deleted policy's placement).
func TestAPolicyCreatedAgainClaimsOnlyOnceTheBindingNamesIt(t *testing.T) {
	ctx := context.Background()
	b := newBindingTest(t, nil, interceptor.Funcs{})
	pp := b.policy(t)
	b.setImage(t, "nginx:1.27")
	label := func(obj client.Object, id string) {
		t.Helper()
		patch := []byte(`{"metadata":{"labels":{"` + policyv1alpha1.PropagationPolicyPermanentIDLabel + `":"` + id + `"}}}`)
		if err := b.hub.Patch(ctx, obj, client.RawPatch(types.MergePatchType, patch)); err != nil {
			t.Fatal(err)
		}
	}
	rb := &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: bindingKey.Namespace, Name: bindingKey.Name}}
	label(pp, "first")
	label(rb, "first")
	b.reconcile(t)
	if got := workImage(b.work(t, "member1")); got != "nginx:1.27" {
		t.Fatalf("claimed by the policy it names, member1's Work has %q", got)
	}

	if err := b.hub.Delete(ctx, pp); err != nil {
		t.Fatal(err)
	}
	again := &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web",
		Labels: map[string]string{policyv1alpha1.PropagationPolicyPermanentIDLabel: "second"}}, Spec: pp.Spec}
	if err := b.hub.Create(ctx, again); err != nil {
		t.Fatal(err)
	}
	b.setImage(t, "nginx:1.28")
	b.reconcile(t)
	if got := workImage(b.work(t, "member1")); got != "nginx:1.27" {
		t.Errorf("the binding still names the deleted policy, yet member1's Work follows the template: %q", got)
	}
	if err := b.hub.Get(ctx, bindingKey, rb); err != nil {
		t.Fatal(err)
	}
	if c := meta.FindStatusCondition(rb.Status.Conditions, "WorksSynced"); c == nil || c.Reason != "Unclaimed" {
		t.Errorf("WorksSynced = %+v, want reason Unclaimed until the new policy's claim is on the binding", c)
	}

	label(rb, "second") // the detector records the new policy's claim
	b.reconcile(t)
	if got := workImage(b.work(t, "member1")); got != "nginx:1.28" {
		t.Errorf("claimed by the new policy, member1's Work has %q", got)
	}
}
