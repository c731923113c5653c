// Package finalizers owns how controllers add and remove their finalizer
// on an object read from a cache.
//
// A JSON merge patch replaces metadata.finalizers whole: a list computed
// from a cached copy that lags the API server would drop a finalizer
// another controller added since the read, or put back one its owner
// removed. Each patch here carries the resourceVersion of the read, so a
// stale read gets a conflict (retry.CacheBehind) and nothing is written;
// the controller's next pass reads the object again.
package finalizers

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// Add puts finalizer on obj unless it is there already. obj is updated
// with what the API server stored.
func Add(ctx context.Context, c client.Writer, obj client.Object, finalizer string) error {
	if controllerutil.ContainsFinalizer(obj, finalizer) {
		return nil
	}
	patch := client.MergeFromWithOptions(obj.DeepCopyObject().(client.Object), client.MergeFromWithOptimisticLock{})
	controllerutil.AddFinalizer(obj, finalizer)
	return c.Patch(ctx, obj, patch)
}

// Remove takes finalizer off obj if it is there. obj is updated with what
// the API server stored; an object already gone is no error.
func Remove(ctx context.Context, c client.Writer, obj client.Object, finalizer string) error {
	if !controllerutil.ContainsFinalizer(obj, finalizer) {
		return nil
	}
	patch := client.MergeFromWithOptions(obj.DeepCopyObject().(client.Object), client.MergeFromWithOptimisticLock{})
	controllerutil.RemoveFinalizer(obj, finalizer)
	return client.IgnoreNotFound(c.Patch(ctx, obj, patch))
}
