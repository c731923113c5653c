package bindingview

import (
	"context"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workkeys "github.com/federator-dev/federator/apis/work"
	"github.com/federator-dev/federator/internal/conditions"
)

// Two controllers write one binding status: the binding controller
// (pkg/binding) owns the conditions Scheduled, WorksSynced, Approved,
// DeletionDelay and Dispatching; the binding status controller
// (pkg/bindingstatus) owns aggregatedStatus and FullyApplied. A JSON merge patch replaces the whole conditions list, so a
// write that changes conditions must start from the stored list, not from
// a cache that may not have the other controller's (or its own) last write
// yet.
var (
	// WorksConditions are the binding controller's.
	WorksConditions = []string{workkeys.ConditionScheduled, workkeys.ConditionWorksSynced, workkeys.ConditionApproved, workkeys.ConditionDeletionDelay, workkeys.ConditionBindingDispatching}
	// StatusConditions are the binding status controller's.
	StatusConditions = []string{workkeys.ConditionFullyApplied}
)

// WriteOwnedStatus stores what b's status says of the fields a controller
// owns (owned conditions, and aggregatedStatus when withAggregated). It
// reports whether it wrote.
//
// When no owned condition changed, it patches from the cached copy without
// a lock: what it sends is recomputed whole on every pass, and nothing else
// is in the patch. When one changed, it reads the binding fresh from the
// API server, carries the owned fields over, and patches that with a lock,
// so a conflict means a real race, not a stale cache.
func WriteOwnedStatus(ctx context.Context, c client.Client, fresh client.Reader, b View, before client.Object,
	owned []string, withAggregated bool) (bool, error) {
	if sameConditions(statusOf(before).Conditions, b.Status.Conditions, owned) {
		return conditions.PatchStatus(ctx, c, before, b.Obj, false)
	}
	stored := New(b.ClusterScoped)
	if err := fresh.Get(ctx, client.ObjectKeyFromObject(b.Obj), stored.Obj); err != nil {
		return false, err
	}
	storedBefore := stored.Snapshot()
	for _, t := range owned {
		if cond := meta.FindStatusCondition(b.Status.Conditions, t); cond != nil {
			meta.SetStatusCondition(&stored.Status.Conditions, *cond)
		} else {
			meta.RemoveStatusCondition(&stored.Status.Conditions, t)
		}
	}
	if withAggregated {
		stored.Status.AggregatedStatus = b.Status.AggregatedStatus
	}
	written, err := conditions.PatchStatus(ctx, c, storedBefore, stored.Obj, true)
	if err == nil {
		*b.Status = *stored.Status
		b.Obj.SetResourceVersion(stored.Obj.GetResourceVersion())
	}
	return written, err
}

func sameConditions(a, b []metav1.Condition, types []string) bool {
	for _, t := range types {
		if !equality.Semantic.DeepEqual(meta.FindStatusCondition(a, t), meta.FindStatusCondition(b, t)) {
			return false
		}
	}
	return true
}
