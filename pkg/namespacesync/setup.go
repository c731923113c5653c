package namespacesync

import (
	"context"
	"encoding/json"
	"slices"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/federator-dev/federator/internal/countdown"
)

// Options tune the namespace sync controller; it has none yet.
type Options struct{}

// SetupWithManager registers the controller: namespaces, every namespace
// again when a Cluster joins or leaves, the namespaces a
// ClusterOverridePolicy selects when it changes, a namespace when the
// ClusterResourceBinding of a policy that claims it changes, and a
// namespace the hub no longer propagates when a Work or a countdown in it
// changes (what keeps it in a member may have ended).
func SetupWithManager(mgr ctrl.Manager, _ Options) error {
	c := mgr.GetClient()
	tombstones, err := countdown.NewCache(mgr, "")
	if err != nil {
		return err
	}
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &workv1alpha1.Work{}, manifestNamespaceIndex, manifestNamespaces); err != nil {
		return err
	}
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
		Watches(&policyv1alpha1.ClusterOverridePolicy{}, handler.EnqueueRequestsFromMapFunc(
			func(ctx context.Context, o client.Object) []reconcile.Request {
				return overriddenNamespaces(ctx, c, o)
			})).
		// A policy that claims a namespace takes its Works where it
		// places it, and gives them back when its binding goes.
		Watches(&workv1alpha2.ClusterResourceBinding{}, handler.EnqueueRequestsFromMapFunc(
			func(_ context.Context, o client.Object) []reconcile.Request {
				return claimedNamespace(o)
			})).
		Watches(&workv1alpha1.Work{}, handler.EnqueueRequestsFromMapFunc(
			func(ctx context.Context, o client.Object) []reconcile.Request {
				return unpropagated(ctx, c, namespacesOfWork(o))
			}), builder.WithPredicates(predicate.Or[client.Object](predicate.GenerationChangedPredicate{}, deletion{}))).
		WatchesRawSource(source.Kind(tombstones, client.Object(&corev1.ConfigMap{}), handler.EnqueueRequestsFromMapFunc(
			func(ctx context.Context, o client.Object) []reconcile.Request {
				cm, ok := o.(*corev1.ConfigMap)
				if !ok || cm.Data["namespace"] == "" {
					return nil
				}
				return unpropagated(ctx, c, []string{cm.Data["namespace"]})
			}))).
		Complete(&Reconciler{Client: c, Tombstones: mgr.GetAPIReader(), APIReader: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorderFor("namespace-sync-controller")})
}

// claimedNamespace is the namespace a ClusterResourceBinding of a
// Namespace claims; none for a binding of another kind.
func claimedNamespace(o client.Object) []reconcile.Request {
	b, ok := o.(*workv1alpha2.ClusterResourceBinding)
	if !ok || b.Spec.Resource.APIVersion != "v1" || b.Spec.Resource.Kind != "Namespace" || b.Spec.Resource.Name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: b.Spec.Resource.Name}}}
}

// manifestNamespaceIndex indexes Works by the namespaces of their objects
// (manifestNamespaces), so what keeps a namespace in a member is read from
// the Works in it alone.
const manifestNamespaceIndex = "namespacesync.manifestNamespace"

// namespacesOfWork are the namespaces a Work's change may concern: the
// one a namespace Work carries, the namespaces of another Work's objects.
func namespacesOfWork(o client.Object) []string {
	if ns := o.GetLabels()[ownerLabel]; ns != "" {
		return []string{ns}
	}
	return manifestNamespaces(o)
}

// manifestNamespaces are the namespaces of a Work's objects.
func manifestNamespaces(o client.Object) []string {
	w, ok := o.(*workv1alpha1.Work)
	if !ok {
		return nil
	}
	var out []string
	for _, m := range w.Spec.Workload.Manifests {
		var meta manifestMeta
		if json.Unmarshal(m.Raw, &meta) == nil && meta.Metadata.Namespace != "" && !slices.Contains(out, meta.Metadata.Namespace) {
			out = append(out, meta.Metadata.Namespace)
		}
	}
	return out
}

// unpropagated keeps of namespaces those the hub no longer propagates
// (gone, being deleted or skip-labelled): only there can a Work or a
// countdown keep a member namespace.
func unpropagated(ctx context.Context, c client.Reader, namespaces []string) []reconcile.Request {
	var reqs []reconcile.Request
	for _, name := range namespaces {
		ns := &corev1.Namespace{}
		err := c.Get(ctx, client.ObjectKey{Name: name}, ns)
		if client.IgnoreNotFound(err) != nil || err == nil && ns.DeletionTimestamp.IsZero() && Synced(ns) {
			continue
		}
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKey{Name: name}})
	}
	return reqs
}

// overriddenNamespaces are the namespaces a ClusterOverridePolicy may
// select, rendered again when it is added, changed or deleted (old and new,
// so a namespace it stops selecting loses its override): as Karmada's
// namespace sync controller, those its v1 Namespace selectors name, every
// namespace when one names none; and, unlike Karmada's watch (its override
// manager does apply them), every namespace for a policy without selectors.
func overriddenNamespaces(ctx context.Context, c client.Reader, o client.Object) []reconcile.Request {
	cop, ok := o.(*policyv1alpha1.ClusterOverridePolicy)
	if !ok {
		return nil
	}
	all := len(cop.Spec.ResourceSelectors) == 0
	var reqs []reconcile.Request
	for _, rs := range cop.Spec.ResourceSelectors {
		if rs.APIVersion != "v1" || rs.Kind != "Namespace" {
			continue
		}
		if rs.Name == "" {
			all = true
			break
		}
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKey{Name: rs.Name}})
	}
	if !all {
		return reqs
	}
	list := &corev1.NamespaceList{}
	if err := c.List(ctx, list); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing the namespaces a ClusterOverridePolicy selects", "policy", cop.Name)
		return nil
	}
	reqs = make([]reconcile.Request, 0, len(list.Items))
	for _, ns := range list.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKey{Name: ns.Name}})
	}
	return reqs
}

type deletion struct{ predicate.Funcs }

func (deletion) Update(e event.UpdateEvent) bool {
	return e.ObjectOld.GetDeletionTimestamp().IsZero() && !e.ObjectNew.GetDeletionTimestamp().IsZero()
}
