package namespacesync

import (
	"context"
	"fmt"

	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	"github.com/karmada-io/karmada/pkg/util/names"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workkeys "github.com/federator-dev/federator/apis/work"
)

// A Namespace a (Cluster)PropagationPolicy claims is a template like any
// other: its ClusterResourceBinding's Works carry it, held as the policy
// says, to the clusters the binding places it on. Both controllers name
// that Work alike (names.GenerateWorkName), and a Work is written by one
// owner only (works.EnsureWork), so on those clusters namespace sync
// writes none: it hands the Work it wrote over to the binding, and takes
// it back once the binding is gone. Either way the Work is relabelled in
// place, never deleted: deleting it would remove the namespace, and all in
// it, from the member until the other writer brought it back.
//
// Karmada's namespace sync (v1.16) knows no claims: it and the binding
// controller both write the Work, and its write replaces the spec, so it
// would release a suspended policy's hold; that part is not matched. Like
// it, a namespace is still propagated to every cluster the policy does
// not place it on.

// claim is what namespace ns's ClusterResourceBinding takes from namespace
// sync.
type claim struct {
	// binding is the binding's name, "" when there is none; id its
	// permanent id, the label its Works carry ("" until the binding
	// controller has given it one).
	binding, id string
	// placed says whether clusters is the binding controller's decision.
	placed   bool
	clusters map[string]bool
}

// claimOf reads the ClusterResourceBinding Karmada names for namespace ns.
// One being deleted still claims: its Works go with it (the binding's
// finalizer), and namespace sync writes again once it is gone.
func (r *Reconciler) claimOf(ctx context.Context, ns string) (claim, error) {
	b := &workv1alpha2.ClusterResourceBinding{}
	err := r.Client.Get(ctx, client.ObjectKey{Name: names.GenerateBindingName("Namespace", ns)}, b)
	if err != nil {
		return claim{}, client.IgnoreNotFound(err)
	}
	if b.Spec.Resource.APIVersion != "v1" || b.Spec.Resource.Kind != "Namespace" || b.Spec.Resource.Name != ns {
		return claim{}, nil
	}
	c := claim{binding: b.Name, id: b.Labels[workv1alpha2.ClusterResourceBindingPermanentIDLabel], clusters: map[string]bool{},
		placed: len(b.Spec.Clusters) > 0 || meta.FindStatusCondition(b.Status.Conditions, workkeys.ConditionScheduled) != nil}
	for _, t := range b.Spec.Clusters {
		c.clusters[t.Name] = true
	}
	return c, nil
}

// takes says whether the binding, not namespace sync, writes the
// namespace's Work for cluster: where it places the namespace, and
// everywhere until its placement is decided, so that namespace sync's
// write does not race a suspended policy's hold.
func (c claim) takes(cluster string) bool {
	return c.binding != "" && (!c.placed || c.clusters[cluster])
}

// handOver gives the binding the namespace Work namespace sync wrote at
// key: its owner label becomes the binding's (so the binding controller
// writes it, holds and all) and its binding annotation brings the binding
// controller the Work's event. It waits for the binding's placement and
// permanent id, whose writes bring the namespace here again.
func (r *Reconciler) handOver(ctx context.Context, key client.ObjectKey, ns string, c claim) error {
	if !c.placed || c.id == "" {
		return nil
	}
	w := &workv1alpha1.Work{}
	if err := r.Client.Get(ctx, key, w); err != nil {
		return client.IgnoreNotFound(err)
	}
	if w.Labels[ownerLabel] != ns || !w.DeletionTimestamp.IsZero() {
		return nil
	}
	before := w.DeepCopy()
	delete(w.Labels, ownerLabel)
	w.Labels[workv1alpha2.ClusterResourceBindingPermanentIDLabel] = c.id
	metav1.SetMetaDataAnnotation(&w.ObjectMeta, workv1alpha2.ClusterResourceBindingAnnotationKey, c.binding)
	delete(w.Annotations, workkeys.NamespaceKeptAnnotation)
	// The binding's Works go with the binding, not with the hub namespace.
	w.OwnerReferences = nil
	if err := r.Client.Patch(ctx, w, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("namespace %s: handing Work %s over to ClusterResourceBinding %s, which claims it: %w", ns, key, c.binding, err)
	}
	return nil
}

// takeBack makes namespace sync's again the namespace Work at key that a
// ClusterResourceBinding wrote, once the API server confirms that binding
// is gone (a binding the cache has not seen yet keeps it: taking it would
// release its hold). It says whether namespace sync may write the Work
// now: false while a binding that exists has it (that binding deletes
// the Works of clusters it no longer places the namespace on, and
// namespace sync writes again once it has).
func (r *Reconciler) takeBack(ctx context.Context, key client.ObjectKey, ns string, c claim) (bool, error) {
	w := &workv1alpha1.Work{}
	if err := r.Client.Get(ctx, key, w); err != nil {
		return true, client.IgnoreNotFound(err)
	}
	id := w.Labels[workv1alpha2.ClusterResourceBindingPermanentIDLabel]
	if w.Labels[ownerLabel] != "" || id == "" || !w.DeletionTimestamp.IsZero() {
		return true, nil
	}
	if id == c.id {
		return false, nil
	}
	list := &workv1alpha2.ClusterResourceBindingList{}
	if err := r.fresh().List(ctx, list, client.MatchingLabels{workv1alpha2.ClusterResourceBindingPermanentIDLabel: id}); err != nil {
		return false, fmt.Errorf("namespace %s: whether the ClusterResourceBinding of Work %s still exists: %w", ns, key, err)
	}
	if len(list.Items) > 0 {
		return false, nil
	}
	before := w.DeepCopy()
	delete(w.Labels, workv1alpha2.ClusterResourceBindingPermanentIDLabel)
	w.Labels[ownerLabel] = ns
	delete(w.Annotations, workv1alpha2.ClusterResourceBindingAnnotationKey)
	if err := r.Client.Patch(ctx, w, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		return false, fmt.Errorf("namespace %s: taking Work %s back from its ClusterResourceBinding, which is gone: %w", ns, key, err)
	}
	return true, nil
}

// fresh reads past the cache; Client when no APIReader is set.
func (r *Reconciler) fresh() client.Reader {
	if r.APIReader != nil {
		return r.APIReader
	}
	return r.Client
}
