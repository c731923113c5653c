package softdelete

import (
	"context"
	"errors"
	"fmt"

	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	"github.com/karmada-io/karmada/pkg/util/names"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workkeys "github.com/federator-dev/federator/apis/work"
	"github.com/federator-dev/federator/internal/countdown"
	"github.com/federator-dev/federator/internal/retry"
)

// reconcileKept ends the countdown of a Work the hub keeps for a Pull
// cluster (countdown.KeepWork): the same decision as for a member object,
// made from the Work — its mark says whether the countdown still runs (the
// binding controller removes it when it places the object there again) —
// and ended by deleting the Work, for the cluster's agent to delete the
// object.
func (r *Reconciler) reconcileKept(ctx context.Context, t countdown.Tombstone) (ctrl.Result, string, error) {
	work := &workv1alpha1.Work{}
	var observed countdown.Observed
	switch err := r.fresh().Get(ctx, client.ObjectKey{Namespace: names.GenerateExecutionSpaceName(t.Cluster), Name: t.Work}, work); {
	case apierrors.IsNotFound(err):
	case err != nil:
		return ctrl.Result{}, "", err
	case work.DeletionTimestamp.IsZero():
		observed = countdown.Observed{Exists: true, UID: work.UID}
		observed.StartedAt, observed.HasStartedAt = countdown.StartedAt(work)
	}
	now := r.Clock.Now()
	if result, outcome, done, err := r.decide(ctx, t, observed, now,
		fmt.Sprintf("%s: its Work %s in %s is gone from the hub (deleted directly)", t.Object(), t.Work, names.GenerateExecutionSpaceName(t.Cluster))); done {
		return result, outcome, err
	}
	if r.Frozen != nil {
		// The agent deletes as soon as the Work goes: a freeze holds it
		// here. The deletion is delayed, not taken back.
		var held retryAfter
		if err := r.Frozen(ctx, t.Cluster); errors.As(err, &held) {
			return ctrl.Result{RequeueAfter: held.RetryAfter()}, fmt.Sprintf("%s in %s: due, held: %v", t.Object(), t.Cluster, err), nil
		} else if err != nil {
			return ctrl.Result{}, "", err
		}
	}
	if err := countdown.EndKeptWork(ctx, r.Hub, work); apierrors.IsConflict(err) {
		return retry.Soon(), "", nil
	} else if err != nil {
		return ctrl.Result{}, "", err
	}
	return ctrl.Result{}, "work deleted", r.end(ctx, t, corev1.EventTypeNormal, workkeys.EventReasonSoftDeletionCompleted, r.deletedMessage(t, now), true)
}
