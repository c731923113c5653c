// Package namespacesync owns propagating hub namespaces to every member, as
// Karmada's namespace sync controller does: one Work per namespace and
// cluster, except reserved namespaces, default, kube-* and namespaces
// labelled namespace.karmada.io/skip-auto-propagation: "true"; the
// ClusterOverridePolicies that select a namespace apply per cluster.
package namespacesync

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"strings"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	"github.com/karmada-io/karmada/pkg/util/names"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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
	"github.com/federator-dev/federator/internal/overrides"
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
	// Override applies ClusterOverridePolicies to each cluster's namespace,
	// as Karmada's namespace sync controller does; overrides.Karmada(Client)
	// when nil.
	Override overrides.Func
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
	override := r.Override
	if override == nil {
		override = overrides.Karmada(r.Client)
	}
	workName := names.GenerateWorkName("Namespace", ns.Name, "")
	var errs []error
	for _, c := range clusters.Items {
		if !c.DeletionTimestamp.IsZero() {
			continue
		}
		workNamespace := names.GenerateExecutionSpaceName(c.Name)
		work, err := r.work(ctx, ns, client.ObjectKey{Namespace: workNamespace, Name: workName}, c.Name, override)
		if work == nil {
			errs = append(errs, err)
			continue
		}
		_, ensureErr := works.EnsureWork(ctx, r.Client, work, ownerLabel)
		errs = append(errs, err, ensureErr)
	}
	// A Work created by a pass the cache has not seen yet is retried
	// quietly, not logged as a failure.
	return retry.Quietly(ctrl.Result{}, errors.Join(errs...))
}

// work is the Work of namespace ns for one cluster: the namespace with the
// ClusterOverridePolicies that select it for that cluster applied (before
// the hub's own label, as Karmada applies them to the namespace as stored)
// and recorded in Karmada's annotation. When an override cannot be
// applied, the Work keeps its last manifest and names the policy and rule
// (the error is returned with it); nil when there is no last manifest.
func (r *Reconciler) work(ctx context.Context, ns *corev1.Namespace, key client.ObjectKey, cluster string,
	override overrides.Func) (*workv1alpha1.Work, error) {
	m := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace",
		"metadata": map[string]any{"name": ns.Name}}}
	if len(ns.Labels) > 0 {
		m.SetLabels(maps.Clone(ns.Labels))
	}
	applied, err := override(m, cluster)
	if err != nil {
		err = fmt.Errorf("namespace %s, cluster %s: %w", ns.Name, cluster, err)
		last := &workv1alpha1.Work{}
		if getErr := r.Client.Get(ctx, key, last); getErr != nil {
			return nil, errors.Join(err, client.IgnoreNotFound(getErr))
		}
		lastGood, annotations := overrides.LastGood(last, err)
		if lastGood == nil {
			return nil, err
		}
		m, applied = lastGood, annotations
	} else {
		m.SetLabels(withManaged(m.GetLabels()))
		annotations := m.GetAnnotations()
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations["work.karmada.io/name"], annotations["work.karmada.io/namespace"] = key.Name, key.Namespace
		m.SetAnnotations(annotations)
	}
	raw, marshalErr := json.Marshal(m.Object)
	if marshalErr != nil {
		return nil, marshalErr
	}
	return &workv1alpha1.Work{
		ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name,
			Labels:      map[string]string{ownerLabel: ns.Name},
			Annotations: applied,
			Finalizers:  []string{workkeys.ExecutionFinalizer},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Namespace", Name: ns.Name, UID: ns.UID,
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}},
		},
		Spec: workv1alpha1.WorkSpec{Workload: workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{
			{RawExtension: runtime.RawExtension{Raw: raw}}}}},
	}, err
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

func withManaged(labels map[string]string) map[string]string {
	out := map[string]string{workkeys.ManagedLabel: workkeys.ManagedLabelValue}
	for k, v := range labels {
		if k == "kubernetes.io/metadata.name" {
			continue
		}
		out[k] = v
	}
	return out
}

// Options tune the namespace sync controller; it has none yet.
type Options struct{}

// SetupWithManager registers the controller: namespaces, every namespace
// again when a Cluster joins or leaves, and the namespaces a
// ClusterOverridePolicy selects when it changes.
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
		Watches(&policyv1alpha1.ClusterOverridePolicy{}, handler.EnqueueRequestsFromMapFunc(
			func(ctx context.Context, o client.Object) []reconcile.Request {
				return overriddenNamespaces(ctx, c, o)
			})).
		Complete(&Reconciler{Client: c})
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
