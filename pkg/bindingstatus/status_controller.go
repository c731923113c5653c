package bindingstatus

import (
	"context"
	"slices"
	"strings"

	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	"github.com/karmada-io/karmada/pkg/util/names"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workkeys "github.com/federator-dev/federator/apis/work"
	"github.com/federator-dev/federator/internal/bindingview"
	"github.com/federator-dev/federator/internal/conditions"
	"github.com/federator-dev/federator/internal/retry"
)

// Reconciler aggregates the Works of one kind of binding into the
// binding's status and, for workloads, into the hub template's status
// (Karmada's binding status controller).
type Reconciler struct {
	Client client.Client
	// APIReader reads bindings uncached before FullyApplied changes;
	// Client when nil.
	APIReader     client.Reader
	ClusterScoped bool
}

// Reconcile writes aggregatedStatus and FullyApplied from the binding's
// Works, then the template's status.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return retry.Quietly(ctrl.Result{}, r.reconcile(ctx, req))
}

func (r *Reconciler) reconcile(ctx context.Context, req ctrl.Request) error {
	b := bindingview.New(r.ClusterScoped)
	if err := r.Client.Get(ctx, req.NamespacedName, b.Obj); err != nil {
		return client.IgnoreNotFound(err)
	}
	if !b.Obj.GetDeletionTimestamp().IsZero() {
		return nil
	}
	existing, err := bindingview.WorksOf(ctx, r.Client, b)
	if err != nil {
		return err
	}
	if len(existing) == 0 {
		// No Work written yet: nothing to aggregate. The first Work status
		// brings this controller back; a write now would only race the
		// binding controller's first one.
		return nil
	}
	before := b.Snapshot()
	current := aggregate(b, existing)
	fresh := r.APIReader
	if fresh == nil {
		fresh = r.Client
	}
	if _, err := bindingview.WriteOwnedStatus(ctx, r.Client, fresh, b, before, bindingview.StatusConditions, true); err != nil {
		return err
	}
	tpl, err := template(ctx, r.Client, b)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	return r.writeTemplateStatus(ctx, tpl, b.Status.AggregatedStatus, current)
}

// template reads the binding's resource template from the cache.
func template(ctx context.Context, c client.Reader, b bindingview.View) (*unstructured.Unstructured, error) {
	t := bindingview.TemplateObject(b)
	err := c.Get(ctx, client.ObjectKeyFromObject(t), t)
	return t, err
}

// aggregate writes the Works' state into the binding's status as Karmada
// does: one aggregatedStatus item per target, and FullyApplied. It returns
// the clusters that run the latest template: their Work is dispatched and
// applied at its current generation.
func aggregate(b bindingview.View, existing []workv1alpha1.Work) map[string]bool {
	byCluster := map[string]*workv1alpha1.Work{}
	for i := range existing {
		if cluster, err := names.GetClusterName(existing[i].Namespace); err == nil {
			byCluster[cluster] = &existing[i]
		}
	}
	var items []workv1alpha2.AggregatedStatusItem
	current := map[string]bool{}
	allApplied := len(b.Spec.Clusters) > 0
	for _, target := range b.Spec.Clusters {
		item := workv1alpha2.AggregatedStatusItem{ClusterName: target.Name}
		if w := byCluster[target.Name]; w != nil {
			if c := meta.FindStatusCondition(w.Status.Conditions, workkeys.ConditionApplied); c != nil {
				item.Applied = c.Status == metav1.ConditionTrue
				if !item.Applied {
					item.AppliedMessage = c.Message
				}
				current[target.Name] = item.Applied && c.ObservedGeneration == w.Generation &&
					meta.IsStatusConditionTrue(w.Status.Conditions, workkeys.ConditionDispatching)
			}
			if len(w.Status.ManifestStatuses) > 0 {
				item.Status = w.Status.ManifestStatuses[0].Status
				item.Health = workv1alpha2.ResourceHealth(w.Status.ManifestStatuses[0].Health)
			}
		}
		allApplied = allApplied && item.Applied
		items = append(items, item)
	}
	slices.SortFunc(items, func(a, b workv1alpha2.AggregatedStatusItem) int { return strings.Compare(a.ClusterName, b.ClusterName) })
	b.Status.AggregatedStatus = items
	full := metav1.Condition{Type: workkeys.ConditionFullyApplied, Status: metav1.ConditionTrue,
		Reason: workkeys.ReasonFullyApplied, Message: workkeys.MessageFullyApplied}
	if !allApplied {
		full = metav1.Condition{Type: workkeys.ConditionFullyApplied, Status: metav1.ConditionFalse,
			Reason: workkeys.ReasonNotFullyApplied, Message: workkeys.MessageNotFullyApplied}
	}
	conditions.Set(&b.Status.Conditions, bindingview.Unstamped, full)
	return current
}

// writeTemplateStatus aggregates the members' status into a workload
// template on the hub, as Karmada does, writing only when it changed.
func (r *Reconciler) writeTemplateStatus(ctx context.Context, tpl *unstructured.Unstructured,
	items []workv1alpha2.AggregatedStatusItem, current map[string]bool) error {
	status, changed, err := TemplateStatus(tpl, items, current)
	if err != nil || !changed {
		return err
	}
	patch := client.MergeFrom(tpl.DeepCopy())
	tpl.Object["status"] = status
	return r.Client.Status().Patch(ctx, tpl, patch)
}
