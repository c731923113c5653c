package binding

import (
	"context"
	"errors"
	"fmt"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	"github.com/karmada-io/karmada/pkg/util/names"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/federator-dev/federator/internal/bindingview"
)

// Clusters that leave. A Cluster being deleted (or gone) is taken out of
// every binding's targets and its Works are deleted, whatever else the
// binding is waiting for: no policy claims it (its Works otherwise keep
// what they last had), its placement does not resolve, or its holds. Like
// Karmada's scheduler, which takes a deleted cluster out of every binding:
// the Cluster's finalizer waits until no binding targets it.

// dropLeft removes the clusters that are leaving from b's targets and
// deletes their Works; it returns those clusters.
func (r *Reconciler) dropLeft(ctx context.Context, b bindingview.View) ([]string, error) {
	if len(b.Spec.Clusters) == 0 {
		return nil, nil
	}
	clusters := &clusterv1alpha1.ClusterList{}
	if err := r.Client.List(ctx, clusters, client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	staying := map[string]bool{}
	for i := range clusters.Items {
		if clusters.Items[i].DeletionTimestamp.IsZero() {
			staying[clusters.Items[i].Name] = true
		}
	}
	var kept []workv1alpha2.TargetCluster
	var left []string
	for _, t := range b.Spec.Clusters {
		if staying[t.Name] {
			kept = append(kept, t)
		} else {
			left = append(left, t.Name)
		}
	}
	if len(left) == 0 {
		return nil, nil
	}
	patch := client.MergeFrom(b.Snapshot())
	b.Spec.Clusters = kept
	if err := r.Client.Patch(ctx, b.Obj, patch); err != nil {
		return nil, err
	}
	existing, err := bindingview.WorksOf(ctx, r.Client, b)
	if err != nil {
		return left, err
	}
	var errs []error
	for i := range existing {
		cluster, err := names.GetClusterName(existing[i].Namespace)
		if err != nil || staying[cluster] {
			continue
		}
		if err := r.Client.Delete(ctx, &existing[i]); client.IgnoreNotFound(err) != nil {
			errs = append(errs, fmt.Errorf("cluster %s: %w", cluster, err))
		}
	}
	return left, errors.Join(errs...)
}
