// Package namespacesync owns propagating hub namespaces to every member, as
// Karmada's namespace sync controller does: one Work per namespace and
// cluster, except reserved namespaces, default, kube-* and namespaces
// labelled namespace.karmada.io/skip-auto-propagation: "true".
package namespacesync

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strings"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	"github.com/karmada-io/karmada/pkg/util/names"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	workkeys "github.com/federator-dev/federator/apis/work"
	"github.com/federator-dev/federator/internal/retry"
	"github.com/federator-dev/federator/internal/works"
)

// ownerLabel marks the Works this controller writes.
const ownerLabel = "namespace.federator.dev/name"

var skipped = regexp.MustCompile(`^kube-.*$`)

// Synced reports whether hub namespace ns is propagated (Karmada's
// namespaceShouldBeSynced plus the skip label).
func Synced(ns *corev1.Namespace) bool {
	if names.IsReservedNamespace(ns.Name) || ns.Name == names.NamespaceDefault || skipped.MatchString(ns.Name) {
		return false
	}
	return strings.ToLower(ns.Labels[workkeys.NamespaceSkipLabel]) != "true"
}

// Reconciler keeps one Work per synced namespace in every execution
// namespace and deletes them when the namespace goes or stops syncing.
type Reconciler struct {
	Client client.Client
}

func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ns := &corev1.Namespace{}
	err := r.Client.Get(ctx, req.NamespacedName, ns)
	if client.IgnoreNotFound(err) != nil {
		return ctrl.Result{}, err
	}
	if err != nil || !ns.DeletionTimestamp.IsZero() || !Synced(ns) {
		return ctrl.Result{}, r.deleteWorks(ctx, req.Name)
	}
	clusters := &clusterv1alpha1.ClusterList{}
	if err := r.Client.List(ctx, clusters); err != nil {
		return ctrl.Result{}, err
	}
	manifest := map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{
		"name":   ns.Name,
		"labels": withManaged(ns.Labels),
	}}
	workName := names.GenerateWorkName("Namespace", ns.Name, "")
	var errs []error
	for _, c := range clusters.Items {
		if !c.DeletionTimestamp.IsZero() {
			continue
		}
		workNamespace := names.GenerateExecutionSpaceName(c.Name)
		m := deepCopyMap(manifest)
		m["metadata"].(map[string]any)["annotations"] = map[string]any{
			"work.karmada.io/name": workName, "work.karmada.io/namespace": workNamespace}
		raw, err := json.Marshal(m)
		if err != nil {
			return ctrl.Result{}, err
		}
		work := &workv1alpha1.Work{
			ObjectMeta: metav1.ObjectMeta{Namespace: workNamespace, Name: workName,
				Labels:     map[string]string{ownerLabel: ns.Name},
				Finalizers: []string{workkeys.ExecutionFinalizer},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Namespace", Name: ns.Name, UID: ns.UID,
					Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}},
			},
			Spec: workv1alpha1.WorkSpec{Workload: workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{
				{RawExtension: runtime.RawExtension{Raw: raw}}}}},
		}
		_, err = works.EnsureWork(ctx, r.Client, work, ownerLabel)
		errs = append(errs, err)
	}
	// A Work created by a pass the cache has not seen yet is retried
	// quietly, not logged as a failure.
	return retry.Quietly(ctrl.Result{}, errors.Join(errs...))
}

func (r *Reconciler) deleteWorks(ctx context.Context, ns string) error {
	works := &workv1alpha1.WorkList{}
	if err := r.Client.List(ctx, works, client.MatchingLabels{ownerLabel: ns}); err != nil {
		return err
	}
	var errs []error
	for i := range works.Items {
		errs = append(errs, client.IgnoreNotFound(r.Client.Delete(ctx, &works.Items[i])))
	}
	return errors.Join(errs...)
}

func withManaged(labels map[string]string) map[string]any {
	out := map[string]any{workkeys.ManagedLabel: workkeys.ManagedLabelValue}
	for k, v := range labels {
		if k == "kubernetes.io/metadata.name" {
			continue
		}
		out[k] = v
	}
	return out
}

func deepCopyMap(m map[string]any) map[string]any {
	return runtime.DeepCopyJSON(m)
}

// Options tune the namespace sync controller; it has none yet.
type Options struct{}

// SetupWithManager registers the controller: namespaces, and every
// namespace again when a Cluster joins or leaves.
func SetupWithManager(mgr ctrl.Manager, _ Options) error {
	c := mgr.GetClient()
	return ctrl.NewControllerManagedBy(mgr).Named("namespace-sync").
		For(&corev1.Namespace{}, builder.WithPredicates(predicate.Or[client.Object](
			predicate.LabelChangedPredicate{}, predicate.GenerationChangedPredicate{}, deletion{}))).
		Watches(&clusterv1alpha1.Cluster{}, handler.EnqueueRequestsFromMapFunc(
			func(ctx context.Context, _ client.Object) []reconcile.Request {
				list := &corev1.NamespaceList{}
				if err := c.List(ctx, list); err != nil {
					return nil
				}
				reqs := make([]reconcile.Request, 0, len(list.Items))
				for _, ns := range list.Items {
					reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKey{Name: ns.Name}})
				}
				return reqs
			}), builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Complete(&Reconciler{Client: c})
}

type deletion struct{ predicate.Funcs }

func (deletion) Update(e event.UpdateEvent) bool {
	return e.ObjectOld.GetDeletionTimestamp().IsZero() && !e.ObjectNew.GetDeletionTimestamp().IsZero()
}
