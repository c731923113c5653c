package dispatch

import (
	"context"
	"fmt"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	workkeys "github.com/federator-dev/federator/apis/work"
	"github.com/federator-dev/federator/internal/finalizers"
	"github.com/federator-dev/federator/internal/leaving"
)

// delete removes the Work's objects from the member, whatever holds the
// Work: deletion is never blocked by a suspension, only delayed by a
// deletion delay. Either way the Work is released at once, so neither it
// nor its binding waits for a countdown: the countdown is recorded in a
// tombstone of its own, and the Work can be written again if the object
// is placed here again. What the deletion does in the member is
// leaving.DeletionOf's to say (a member that leaves, a Work that preserves).
func (r *WorkReconciler) delete(ctx context.Context, work *workv1alpha1.Work) (string, error) {
	if !controllerutil.ContainsFinalizer(work, workkeys.ExecutionFinalizer) {
		return "", nil
	}
	outcome := "released"
	cluster := &clusterv1alpha1.Cluster{}
	if err := r.Hub.Get(ctx, client.ObjectKey{Name: r.Cluster}, cluster); apierrors.IsNotFound(err) {
		cluster = nil
	} else if err != nil {
		return "", err
	}
	switch how := leaving.DeletionOf(cluster, work); how {
	case leaving.LeaveObjects:
		if cluster != nil && !cluster.DeletionTimestamp.IsZero() && !ptr.Deref(work.Spec.PreserveResourcesOnDeletion, false) {
			outcome = "released: cluster " + r.Cluster + " leaves while not Ready, its objects stay"
		}
	default:
		member, err := r.Members.Client(ctx, r.Cluster)
		if err != nil {
			return "", err
		}
		for _, m := range work.Spec.Workload.Manifests {
			manifest, err := decodeManifest(m)
			if err != nil {
				return "", err
			}
			release, err := r.memberSlot(ctx)
			if err != nil {
				return "", err
			}
			did, err := r.removeManifest(ctx, member, manifest, work.Namespace, work.Name, how == leaving.RemoveLeaving)
			release()
			if err != nil {
				return "", fmt.Errorf("delete %s %s from cluster %s: %w", manifest.GetKind(), toolscache.MetaObjectToName(manifest).String(), r.Cluster, err)
			}
			if did != "" {
				outcome = fmt.Sprintf("%s %s: %s", manifest.GetKind(), toolscache.MetaObjectToName(manifest).String(), did)
			}
		}
	}
	return outcome, finalizers.Remove(ctx, r.Hub, work, workkeys.ExecutionFinalizer)
}
