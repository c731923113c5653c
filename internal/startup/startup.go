// Package startup owns what a federator process does as its controller
// manager starts, the hub's controllers and a Pull cluster's agent alike:
// the namespace of its leader-election Lease, and telling a person once it
// runs.
package startup

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// EnsureNamespace creates namespace name through c when it is missing, as
// out of a cluster (a kubeconfig beside it) it may be. A process not
// allowed to read namespaces is told nothing: its Lease namespace is its
// own. The error is the create's, for the caller to say what it was for.
func EnsureNamespace(ctx context.Context, c client.Client, name string) error {
	err := c.Get(ctx, client.ObjectKey{Name: name}, &corev1.Namespace{})
	if !apierrors.IsNotFound(err) {
		return nil
	}
	err = c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// WhenSynced calls ready, unless nil, once mgr's caches have synced on the
// replica that leads.
func WhenSynced(mgr manager.Manager, ready func()) error {
	if ready == nil {
		return nil
	}
	return mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		if mgr.GetCache().WaitForCacheSync(ctx) {
			ready()
		}
		return nil
	}))
}
