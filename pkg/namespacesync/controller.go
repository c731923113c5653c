// Package namespacesync owns propagating hub namespaces to every member, as
// Karmada's namespace sync controller does: one Work per namespace and
// cluster, except reserved namespaces, default, kube-* and namespaces
// labelled namespace.karmada.io/skip-auto-propagation: "true"; the
// ClusterOverridePolicies that select a namespace apply per cluster. On
// the clusters where a policy places a namespace, its binding writes that
// Work instead (claimed.go). A namespace the hub stops propagating
// (deleted or skip-labelled) is removed from a member only once nothing of
// the hub's in it is held or counting down there (Keepers).
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
	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	"github.com/karmada-io/karmada/pkg/util/names"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workkeys "github.com/federator-dev/federator/apis/work"
	"github.com/federator-dev/federator/internal/countdown"
	"github.com/federator-dev/federator/internal/overrides"
	"github.com/federator-dev/federator/internal/retry"
	"github.com/federator-dev/federator/internal/works"
)

// ownerLabel marks the Works this controller writes.
const ownerLabel = workkeys.NamespaceWorkLabel

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
	// Tombstones reads the countdowns recorded in an execution namespace,
	// uncached: a Work seen gone from the cache has recorded its countdown
	// before it went, and only a fresh read is sure to see that record.
	// Client when nil.
	Tombstones client.Reader
	// APIReader confirms, past the cache, that the ClusterResourceBinding
	// of a namespace Work is gone before namespace sync takes the Work
	// back (claimed.go); Client when nil.
	APIReader client.Reader
	// Recorder sends NamespaceKept and NamespaceReleased; none when nil.
	Recorder record.EventRecorder
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
	if err != nil {
		return ctrl.Result{}, r.removeWorks(ctx, req.Name, nil)
	}
	if !ns.DeletionTimestamp.IsZero() || !Synced(ns) {
		return ctrl.Result{}, r.removeWorks(ctx, req.Name, ns)
	}
	clusters := &clusterv1alpha1.ClusterList{}
	if err := r.Client.List(ctx, clusters); err != nil {
		return ctrl.Result{}, err
	}
	override := r.Override
	if override == nil {
		override = overrides.Karmada(r.Client)
	}
	claim, err := r.claimOf(ctx, ns.Name)
	if err != nil {
		return ctrl.Result{}, err
	}
	workName := names.GenerateWorkName("Namespace", ns.Name, "")
	var errs []error
	for _, c := range clusters.Items {
		if !c.DeletionTimestamp.IsZero() {
			continue
		}
		key := client.ObjectKey{Namespace: names.GenerateExecutionSpaceName(c.Name), Name: workName}
		if claim.takes(c.Name) {
			errs = append(errs, r.handOver(ctx, key, ns.Name, claim))
			continue
		}
		if ours, err := r.takeBack(ctx, key, ns.Name, claim); err != nil || !ours {
			errs = append(errs, err)
			continue
		}
		work, err := r.work(ctx, ns, key, c.Name, override)
		if work == nil {
			errs = append(errs, err)
			continue
		}
		_, ensureErr := works.EnsureWork(ctx, r.Client, work, ownerLabel)
		errs = append(errs, err, ensureErr, r.adopt(ctx, work))
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

// removeWorks deletes the Works of namespace name, and with them the
// member namespaces, in each cluster where nothing of the hub's in it is
// held or counting down; elsewhere it keeps the Work and says why on it.
// hubNamespace is nil when the hub namespace is gone.
func (r *Reconciler) removeWorks(ctx context.Context, name string, hubNamespace *corev1.Namespace) error {
	list := &workv1alpha1.WorkList{}
	if err := r.Client.List(ctx, list, client.MatchingLabels{ownerLabel: name}); err != nil {
		return err
	}
	var errs []error
	for i := range list.Items {
		w := &list.Items[i]
		if !w.DeletionTimestamp.IsZero() {
			continue
		}
		cluster, keepers, err := r.keepers(ctx, name, w.Namespace)
		switch {
		case err != nil:
			errs = append(errs, err)
		case len(keepers) == 0:
			errs = append(errs, r.release(ctx, w, hubNamespace, cluster))
		default:
			errs = append(errs, r.keep(ctx, w, hubNamespace, KeptMessage(name, cluster, keepers)))
		}
	}
	return errors.Join(errs...)
}

// keepers is what keeps namespace ns in the cluster of execution namespace
// workNamespace (Keepers); nothing keeps it in a cluster that left.
func (r *Reconciler) keepers(ctx context.Context, ns, workNamespace string) (string, []string, error) {
	cluster, err := names.GetClusterName(workNamespace)
	if err != nil {
		return workNamespace, nil, nil
	}
	c := &clusterv1alpha1.Cluster{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: cluster}, c); apierrors.IsNotFound(err) || err == nil && !c.DeletionTimestamp.IsZero() {
		return cluster, nil, nil
	} else if err != nil {
		return cluster, nil, err
	}
	// Works first, tombstones after, uncached: a Work with a deletion
	// delay recorded its countdown before it went, so when the cache no
	// longer has it, the fresh read below has its record (or the
	// countdown has already ended).
	inCluster := &workv1alpha1.WorkList{}
	if err := r.Client.List(ctx, inCluster, client.InNamespace(workNamespace), client.MatchingFields{manifestNamespaceIndex: ns}); err != nil {
		return cluster, nil, err
	}
	cms := &corev1.ConfigMapList{}
	if err := r.tombstones().List(ctx, cms, client.InNamespace(workNamespace), client.HasLabels{workkeys.TombstoneLabel}); err != nil {
		return cluster, nil, fmt.Errorf("namespace %s, cluster %s: reading its deletion countdowns: %w", ns, cluster, err)
	}
	var tombstones []countdown.Tombstone
	for i := range cms.Items {
		if t, err := countdown.FromConfigMap(&cms.Items[i]); err == nil {
			tombstones = append(tombstones, t)
		}
	}
	return cluster, Keepers(ns, inCluster.Items, tombstones), nil
}

// keep leaves the namespace's Work for one cluster in place and records
// why on it; it takes the Work from the hub namespace's garbage collection
// (its owner reference), which would otherwise delete it, and the member
// namespace, once the hub namespace is gone. The event tells of a new
// reason only.
func (r *Reconciler) keep(ctx context.Context, w *workv1alpha1.Work, hubNamespace *corev1.Namespace, message string) error {
	if w.Annotations[workkeys.NamespaceKeptAnnotation] == message && len(w.OwnerReferences) == 0 {
		return nil
	}
	before := w.DeepCopy()
	w.OwnerReferences = nil
	metav1.SetMetaDataAnnotation(&w.ObjectMeta, workkeys.NamespaceKeptAnnotation, message)
	if err := r.Client.Patch(ctx, w, client.MergeFrom(before)); err != nil {
		return client.IgnoreNotFound(err)
	}
	ctrl.LoggerFrom(ctx).V(1).Info("kept: "+message, "work", client.ObjectKeyFromObject(w))
	if before.Annotations[workkeys.NamespaceKeptAnnotation] != message {
		r.event(hubNamespace, w, workkeys.EventReasonNamespaceKept, message)
	}
	return nil
}

// release deletes the namespace's Work for one cluster: the dispatcher
// then removes the namespace from that member.
func (r *Reconciler) release(ctx context.Context, w *workv1alpha1.Work, hubNamespace *corev1.Namespace, cluster string) error {
	if err := r.Client.Delete(ctx, w); err != nil {
		return client.IgnoreNotFound(err)
	}
	ns := w.Labels[ownerLabel]
	ctrl.LoggerFrom(ctx).V(1).Info("removed from "+cluster, "work", client.ObjectKeyFromObject(w))
	if w.Annotations[workkeys.NamespaceKeptAnnotation] != "" {
		r.event(hubNamespace, w, workkeys.EventReasonNamespaceReleased, fmt.Sprintf(
			"namespace %s removed from %s: nothing of the hub's in it is held or counting down there any more", ns, cluster))
	}
	return nil
}

// adopt gives a kept Work back to the hub namespace that propagates it
// again (skip label removed, or namespace created anew): its owner
// reference back, its kept annotation gone.
func (r *Reconciler) adopt(ctx context.Context, desired *workv1alpha1.Work) error {
	w := &workv1alpha1.Work{}
	if err := r.Client.Get(ctx, client.ObjectKeyFromObject(desired), w); err != nil {
		return client.IgnoreNotFound(err)
	}
	_, kept := w.Annotations[workkeys.NamespaceKeptAnnotation]
	if w.Labels[ownerLabel] != desired.Labels[ownerLabel] || !kept && equality.Semantic.DeepEqual(w.OwnerReferences, desired.OwnerReferences) {
		return nil
	}
	before := w.DeepCopy()
	w.OwnerReferences = desired.OwnerReferences
	delete(w.Annotations, workkeys.NamespaceKeptAnnotation)
	return r.Client.Patch(ctx, w, client.MergeFrom(before))
}

// event tells a person about a kept namespace: on the hub Namespace while
// it is there to read (`kubectl describe namespace`), else on the Work.
func (r *Reconciler) event(hubNamespace *corev1.Namespace, w *workv1alpha1.Work, reason, message string) {
	if r.Recorder == nil {
		return
	}
	var target runtime.Object = w
	if hubNamespace != nil && hubNamespace.DeletionTimestamp.IsZero() {
		target = hubNamespace
	}
	r.Recorder.Event(target, corev1.EventTypeNormal, reason, message)
}

func (r *Reconciler) tombstones() client.Reader {
	if r.Tombstones == nil {
		return r.Client
	}
	return r.Tombstones
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
