package binding

import (
	"context"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workkeys "github.com/federator-dev/federator/apis/work"
	"github.com/federator-dev/federator/internal/conditions"
)

// Two controllers write one binding status: the binding controller owns
// the conditions Scheduled, WorksSynced, Approved, DeletionDelay and
// Dispatching; the status controller owns aggregatedStatus and
// FullyApplied. A JSON merge patch replaces the whole conditions list, so a
// write that changes conditions must start from the stored list, not from
// a cache that may not have the other controller's (or its own) last write
// yet.
var (
	worksConditions  = []string{workkeys.ConditionScheduled, workkeys.ConditionWorksSynced, workkeys.ConditionApproved, workkeys.ConditionDeletionDelay, workkeys.ConditionBindingDispatching}
	statusConditions = []string{workkeys.ConditionFullyApplied}
)

// writeOwnedStatus stores what b's status says of the fields a controller
// owns (owned conditions, and aggregatedStatus when withAggregated). It
// reports whether it wrote.
//
// When no owned condition changed, it patches from the cached copy without
// a lock: what it sends is recomputed whole on every pass, and nothing else
// is in the patch. When one changed, it reads the binding fresh from the
// API server, carries the owned fields over, and patches that with a lock,
// so a conflict means a real race, not a stale cache.
func writeOwnedStatus(ctx context.Context, c client.Client, fresh client.Reader, b view, before client.Object,
	owned []string, withAggregated bool) (bool, error) {
	if sameConditions(statusOf(before).Conditions, b.status.Conditions, owned) {
		return conditions.PatchStatus(ctx, c, before, b.obj, false)
	}
	stored := newView(b.clusterScoped)
	if err := fresh.Get(ctx, client.ObjectKeyFromObject(b.obj), stored.obj); err != nil {
		return false, err
	}
	storedBefore := stored.snapshot()
	for _, t := range owned {
		if cond := meta.FindStatusCondition(b.status.Conditions, t); cond != nil {
			meta.SetStatusCondition(&stored.status.Conditions, *cond)
		} else {
			meta.RemoveStatusCondition(&stored.status.Conditions, t)
		}
	}
	if withAggregated {
		stored.status.AggregatedStatus = b.status.AggregatedStatus
	}
	written, err := conditions.PatchStatus(ctx, c, storedBefore, stored.obj, true)
	if err == nil {
		*b.status = *stored.status
		b.obj.SetResourceVersion(stored.obj.GetResourceVersion())
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
