package namespacesync

import (
	"context"
	"testing"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	"github.com/karmada-io/karmada/pkg/util/names"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/federator-dev/federator/apis/policy"
	"github.com/federator-dev/federator/internal/works"
)

// claimedHub is a hub whose namespace shop is propagated to member1 and
// member2, with the reconciler of its namespace sync.
type claimedHub struct {
	t   *testing.T
	hub client.Client
	r   *Reconciler
}

func newClaimedHub(t *testing.T, objs ...client.Object) *claimedHub {
	objs = append(objs, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop", UID: "shop-uid"}},
		&clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member1"}},
		&clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member2"}})
	hub := fake.NewClientBuilder().WithScheme(policy.NewScheme()).WithObjects(objs...).
		WithIndex(&workv1alpha1.Work{}, manifestNamespaceIndex, manifestNamespaces).Build()
	return &claimedHub{t: t, hub: hub, r: &Reconciler{Client: hub, Override: func(*unstructured.Unstructured, string) (map[string]string, error) {
		return nil, nil
	}}}
}

func (h *claimedHub) reconcile() {
	h.t.Helper()
	if _, err := h.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKey{Name: "shop"}}); err != nil {
		h.t.Fatalf("namespace sync: %v", err)
	}
}

// work is shop's namespace Work in cluster's execution namespace; nil when
// there is none.
func (h *claimedHub) work(cluster string) *workv1alpha1.Work {
	h.t.Helper()
	w := &workv1alpha1.Work{}
	err := h.hub.Get(context.Background(), client.ObjectKey{Namespace: names.GenerateExecutionSpaceName(cluster),
		Name: names.GenerateWorkName("Namespace", "shop", "")}, w)
	if client.IgnoreNotFound(err) != nil {
		h.t.Fatal(err)
	}
	if err != nil {
		return nil
	}
	return w
}

// bindingWrites writes, as the binding controller does (works.EnsureWork
// under the binding's permanent-id label), the held Work of shop's
// ClusterResourceBinding for cluster.
func (h *claimedHub) bindingWrites(cluster string) error {
	raw := []byte(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"shop","labels":{"karmada.io/managed":"true"}}}`)
	w := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: names.GenerateExecutionSpaceName(cluster),
		Name:        names.GenerateWorkName("Namespace", "shop", ""),
		Labels:      map[string]string{workv1alpha2.ClusterResourceBindingPermanentIDLabel: "shop-binding-id"},
		Annotations: map[string]string{workv1alpha2.ClusterResourceBindingAnnotationKey: shopBinding().Name},
		Finalizers:  []string{"karmada.io/execution-controller"}},
		Spec: workv1alpha1.WorkSpec{SuspendDispatching: ptr.To(true),
			Workload: workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}}}}}
	_, err := works.EnsureWork(context.Background(), h.hub, w, workv1alpha2.ClusterResourceBindingPermanentIDLabel)
	return err
}

// shopBinding is the ClusterResourceBinding of a ClusterPropagationPolicy
// that claims namespace shop, suspended, placed on member1.
func shopBinding() *workv1alpha2.ClusterResourceBinding {
	return &workv1alpha2.ClusterResourceBinding{ObjectMeta: metav1.ObjectMeta{Name: names.GenerateBindingName("Namespace", "shop"),
		Labels: map[string]string{workv1alpha2.ClusterResourceBindingPermanentIDLabel: "shop-binding-id"}},
		Spec: workv1alpha2.ResourceBindingSpec{
			Resource:   workv1alpha2.ObjectReference{APIVersion: "v1", Kind: "Namespace", Name: "shop"},
			Clusters:   []workv1alpha2.TargetCluster{{Name: "member1"}},
			Suspension: &workv1alpha2.Suspension{Suspension: policyv1alpha1.Suspension{Dispatching: ptr.To(true)}}},
		Status: workv1alpha2.ResourceBindingStatus{Conditions: []metav1.Condition{{Type: workv1alpha2.Scheduled,
			Status: metav1.ConditionTrue, Reason: "Success", LastTransitionTime: metav1.Now()}}}}
}

// A Namespace a ClusterPropagationPolicy claims is held like any template:
// where its binding places it, namespace sync writes no Work of its own,
// so the binding controller's held Work is the one there; elsewhere the
// namespace is propagated as before.
func TestNamespaceSyncLeavesAClaimedNamespaceToItsBinding(t *testing.T) {
	h := newClaimedHub(t, shopBinding())
	h.reconcile()
	if w := h.work("member1"); w != nil {
		t.Errorf("namespace sync wrote shop's Work in member1, where its ClusterResourceBinding places it: labels %v", w.Labels)
	}
	if w := h.work("member2"); w == nil || w.Labels[ownerLabel] != "shop" {
		t.Errorf("member2, where no policy places shop, lost its namespace Work: %v", w)
	}
	if err := h.bindingWrites("member1"); err != nil {
		t.Fatalf("the binding controller's write of the held Work in member1: %v", err)
	}
	h.reconcile()
	if w := h.work("member1"); w == nil || !ptr.Deref(w.Spec.SuspendDispatching, false) || w.Labels[ownerLabel] != "" {
		t.Errorf("shop's Work in member1 after namespace sync ran again: %+v, want the binding's, held", w)
	}
}

// A namespace propagated before a policy claimed it: namespace sync hands
// the Work it wrote to the binding in place (the member namespace, and all
// in it, is not deleted in between), the binding holds it, namespace sync
// leaves it held; when the binding is gone, namespace sync takes it back.
func TestNamespaceSyncHandsAClaimedNamespaceOverAndTakesItBack(t *testing.T) {
	h := newClaimedHub(t)
	h.reconcile()
	written := h.work("member1")
	if written == nil {
		t.Fatal("namespace sync wrote no Work for shop in member1")
	}

	if err := h.hub.Create(context.Background(), shopBinding()); err != nil {
		t.Fatal(err)
	}
	h.reconcile()
	if err := h.bindingWrites("member1"); err != nil {
		t.Fatalf("the binding controller's write of the held Work in member1: %v", err)
	}
	h.reconcile()
	w := h.work("member1")
	if w == nil || w.UID != written.UID || !w.DeletionTimestamp.IsZero() {
		t.Fatalf("shop's Work in member1 was deleted in the hand-over (the member namespace with it): %+v", w)
	}
	if !ptr.Deref(w.Spec.SuspendDispatching, false) || w.Labels[ownerLabel] != "" {
		t.Errorf("shop's Work in member1: held %v, labels %v; want held, the binding's", ptr.Deref(w.Spec.SuspendDispatching, false), w.Labels)
	}
	if w := h.work("member2"); w == nil || w.Labels[ownerLabel] != "shop" {
		t.Errorf("member2's namespace Work is no longer namespace sync's: %v", w)
	}

	if err := h.hub.Delete(context.Background(), shopBinding()); err != nil {
		t.Fatal(err)
	}
	h.reconcile()
	w = h.work("member1")
	if w == nil || w.UID != written.UID || !w.DeletionTimestamp.IsZero() {
		t.Fatalf("shop's Work in member1 was deleted when namespace sync took it back: %+v", w)
	}
	if w.Labels[ownerLabel] != "shop" || w.Labels[workv1alpha2.ClusterResourceBindingPermanentIDLabel] != "" ||
		ptr.Deref(w.Spec.SuspendDispatching, false) {
		t.Errorf("shop's Work in member1 once its binding is gone: labels %v, held %v; want namespace sync's, propagated",
			w.Labels, ptr.Deref(w.Spec.SuspendDispatching, false))
	}
}
