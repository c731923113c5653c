package binding

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	"github.com/karmada-io/karmada/pkg/util/names"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	workkeys "github.com/federator-dev/federator/apis/work"
	"github.com/federator-dev/federator/pkg/placement"
)

// Condition types and reasons on bindings (Karmada's strings).
const (
	ConditionScheduled        = workv1alpha2.Scheduled
	ConditionFullyApplied     = workv1alpha2.FullyApplied
	ReasonSuccess             = workv1alpha2.BindingReasonSuccess
	ReasonNoClusterFit        = workv1alpha2.BindingReasonNoClusterFit
	ReasonUnschedulable       = "Unschedulable"
	ReasonFullyApplied        = "FullyAppliedSuccess"
	ReasonNotFullyApplied     = "FullyAppliedFailed"
	EventReasonScheduleFailed = "ScheduleBindingFailed"
	EventReasonSyncWorkFailed = "SyncWorkFailed"
)

// view is what the controller needs of a ResourceBinding or a
// ClusterResourceBinding, so one Reconcile serves both.
type view struct {
	obj           client.Object
	spec          *workv1alpha2.ResourceBindingSpec
	status        *workv1alpha2.ResourceBindingStatus
	clusterScoped bool
}

func (v view) finalizer() string {
	if v.clusterScoped {
		return workkeys.ClusterBindingFinalizer
	}
	return workkeys.BindingFinalizer
}

func (v view) idLabel() string {
	if v.clusterScoped {
		return workv1alpha2.ClusterResourceBindingPermanentIDLabel
	}
	return workv1alpha2.ResourceBindingPermanentIDLabel
}

// Reconciler turns one kind of binding into Works.
type Reconciler struct {
	Client        client.Client
	Recorder      record.EventRecorder
	ClusterScoped bool
}

func (r *Reconciler) newView() view {
	if r.ClusterScoped {
		b := &workv1alpha2.ClusterResourceBinding{}
		return view{obj: b, spec: &b.Spec, status: &b.Status, clusterScoped: true}
	}
	b := &workv1alpha2.ResourceBinding{}
	return view{obj: b, spec: &b.Spec, status: &b.Status}
}

// Reconcile places the binding, writes one Work per target cluster, deletes
// the Works of clusters no longer targeted and aggregates their status.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	result, err := r.reconcile(ctx, req)
	if cacheBehind(err) {
		// The cache is behind a write; the next attempt sees it.
		return ctrl.Result{RequeueAfter: 100 * time.Millisecond}, nil
	}
	return result, err
}

func (r *Reconciler) reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	b := r.newView()
	if err := r.Client.Get(ctx, req.NamespacedName, b.obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !b.obj.GetDeletionTimestamp().IsZero() {
		return ctrl.Result{}, r.finalize(ctx, b)
	}
	if err := r.ensureIdentity(ctx, b); err != nil {
		return ctrl.Result{}, err
	}

	template, err := r.template(ctx, b)
	if apierrors.IsNotFound(err) {
		// The detector deletes bindings whose template is gone.
		return ctrl.Result{}, nil
	}
	if err != nil {
		return ctrl.Result{}, err
	}

	clusters := &clusterv1alpha1.ClusterList{}
	if err := r.Client.List(ctx, clusters); err != nil {
		return ctrl.Result{}, err
	}
	result, err := placement.PlaceForTemplate(b.spec.Placement, clusters.Items, b.spec.Replicas, template.GetUID())
	status := b.status.DeepCopy()
	if err != nil {
		if setBindingCondition(status, metav1.Condition{Type: ConditionScheduled, Status: metav1.ConditionFalse,
			Reason: ReasonUnschedulable, Message: err.Error()}) {
			r.Recorder.Event(b.obj, corev1.EventTypeWarning, EventReasonScheduleFailed, err.Error())
		}
		return ctrl.Result{}, r.writeStatus(ctx, b, status)
	}
	if !equality.Semantic.DeepEqual(result.Targets, b.spec.Clusters) && !(len(result.Targets) == 0 && len(b.spec.Clusters) == 0) {
		b.spec.Clusters = result.Targets
		if err := r.Client.Update(ctx, b.obj); err != nil {
			return ctrl.Result{}, err
		}
	}

	syncErr := r.syncWorks(ctx, b, template)
	if cacheBehind(syncErr) {
		// Routine: a Work changed or appeared since the cache saw it. Try
		// again quietly.
		return ctrl.Result{RequeueAfter: 100 * time.Millisecond}, nil
	}
	if syncErr != nil {
		r.Recorder.Event(b.obj, corev1.EventTypeWarning, EventReasonSyncWorkFailed, syncErr.Error())
	}
	current, err := r.aggregate(ctx, b, status, result)
	if err != nil {
		return ctrl.Result{}, errors.Join(syncErr, err)
	}
	if err := r.writeStatus(ctx, b, status); err != nil {
		return ctrl.Result{}, errors.Join(syncErr, err)
	}
	return ctrl.Result{}, errors.Join(syncErr, r.writeTemplateStatus(ctx, template, status.AggregatedStatus, current))
}

// writeTemplateStatus reflects the members' status into a Deployment
// template on the hub, as Karmada does, writing only when it changed.
func (r *Reconciler) writeTemplateStatus(ctx context.Context, template *unstructured.Unstructured,
	items []workv1alpha2.AggregatedStatusItem, current map[string]bool) error {
	if gvk := template.GroupVersionKind(); gvk.Group != "apps" || gvk.Kind != "Deployment" {
		return nil
	}
	var old appsv1.DeploymentStatus
	if s, found, _ := unstructured.NestedMap(template.Object, "status"); found {
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(s, &old); err != nil {
			return err
		}
	}
	next := DeploymentStatus(items, current, template.GetGeneration(), old)
	if next.Replicas == old.Replicas && next.ReadyReplicas == old.ReadyReplicas && next.UpdatedReplicas == old.UpdatedReplicas &&
		next.AvailableReplicas == old.AvailableReplicas && next.UnavailableReplicas == old.UnavailableReplicas &&
		next.ObservedGeneration == old.ObservedGeneration {
		return nil
	}
	patch := client.MergeFrom(template.DeepCopy())
	for field, v := range map[string]int64{
		"replicas": int64(next.Replicas), "readyReplicas": int64(next.ReadyReplicas),
		"updatedReplicas": int64(next.UpdatedReplicas), "availableReplicas": int64(next.AvailableReplicas),
		"unavailableReplicas": int64(next.UnavailableReplicas), "observedGeneration": next.ObservedGeneration,
	} {
		if err := unstructured.SetNestedField(template.Object, v, "status", field); err != nil {
			return err
		}
	}
	return r.Client.Status().Patch(ctx, template, patch)
}

// ensureIdentity adds the finalizer and the permanent-id label Karmada's
// webhook would add, so Works can be found after the binding is gone.
func (r *Reconciler) ensureIdentity(ctx context.Context, b view) error {
	labels := b.obj.GetLabels()
	if controllerutil.ContainsFinalizer(b.obj, b.finalizer()) && labels[b.idLabel()] != "" {
		return nil
	}
	if labels == nil {
		labels = map[string]string{}
	}
	if labels[b.idLabel()] == "" {
		labels[b.idLabel()] = uuid.NewString()
	}
	b.obj.SetLabels(labels)
	controllerutil.AddFinalizer(b.obj, b.finalizer())
	return r.Client.Update(ctx, b.obj)
}

func (r *Reconciler) template(ctx context.Context, b view) (*unstructured.Unstructured, error) {
	t := &unstructured.Unstructured{}
	t.SetAPIVersion(b.spec.Resource.APIVersion)
	t.SetKind(b.spec.Resource.Kind)
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: b.spec.Resource.Namespace, Name: b.spec.Resource.Name}, t)
	return t, err
}

// syncWorks writes the Work of every target and deletes the others.
func (r *Reconciler) syncWorks(ctx context.Context, b view, template *unstructured.Unstructured) error {
	var errs []error
	wanted := map[string]bool{}
	workName := names.GenerateWorkName(template.GetKind(), template.GetName(), template.GetNamespace())
	for _, target := range b.spec.Clusters {
		ns := names.GenerateExecutionSpaceName(target.Name)
		wanted[ns] = true
		o := Origin{ClusterScoped: b.clusterScoped, BindingNamespace: b.obj.GetNamespace(), BindingName: b.obj.GetName(),
			BindingID: b.obj.GetLabels()[b.idLabel()], WorkNamespace: ns, WorkName: workName,
			ConflictResolution: b.spec.ConflictResolution}
		manifest, err := Manifest(template, target, b.spec.Replicas > 0, o)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if err := r.writeWork(ctx, b, manifest, o, SuspendDispatching(b.spec.Suspension, target.Name)); err != nil {
			errs = append(errs, fmt.Errorf("cluster %s: %w", target.Name, err))
		}
	}
	works, err := r.works(ctx, b)
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	for i := range works {
		if !wanted[works[i].Namespace] {
			if err := r.Client.Delete(ctx, &works[i]); client.IgnoreNotFound(err) != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// writeWork creates the Work or updates it when what it carries changed.
func (r *Reconciler) writeWork(ctx context.Context, b view, manifest *unstructured.Unstructured, o Origin, suspend bool) error {
	raw, err := json.Marshal(manifest.Object)
	if err != nil {
		return err
	}
	labels := map[string]string{b.idLabel(): o.BindingID}
	annotations := map[string]string{}
	if b.clusterScoped {
		annotations[workv1alpha2.ClusterResourceBindingAnnotationKey] = o.BindingName
	} else {
		annotations[workv1alpha2.ResourceBindingNamespaceAnnotationKey] = o.BindingNamespace
		annotations[workv1alpha2.ResourceBindingNameAnnotationKey] = o.BindingName
	}
	annotations[workv1alpha2.ResourceConflictResolutionAnnotation] = manifest.GetAnnotations()[workv1alpha2.ResourceConflictResolutionAnnotation]
	spec := workv1alpha1.WorkSpec{
		Workload:                    workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}}},
		SuspendDispatching:          ptr.To(suspend),
		PreserveResourcesOnDeletion: b.spec.PreserveResourcesOnDeletion,
	}

	return EnsureWork(ctx, r.Client, &workv1alpha1.Work{
		ObjectMeta: metav1.ObjectMeta{Namespace: o.WorkNamespace, Name: o.WorkName, Labels: labels,
			Annotations: annotations, Finalizers: []string{workkeys.ExecutionFinalizer}},
		Spec: spec,
	}, b.idLabel())
}

// EnsureWork creates desired, or updates the stored Work when what it
// carries differs. ownerLabel names the label that must match on an
// existing Work: a Work written for another owner is never taken over.
func EnsureWork(ctx context.Context, c client.Client, desired *workv1alpha1.Work, ownerLabel string) error {
	work := &workv1alpha1.Work{}
	err := c.Get(ctx, client.ObjectKeyFromObject(desired), work)
	if apierrors.IsNotFound(err) {
		desired = desired.DeepCopy()
		metav1.SetMetaDataLabel(&desired.ObjectMeta, workv1alpha2.WorkPermanentIDLabel, uuid.NewString())
		return c.Create(ctx, desired)
	}
	if err != nil {
		return err
	}
	if !work.DeletionTimestamp.IsZero() {
		return fmt.Errorf("work %s/%s is being deleted", work.Namespace, work.Name)
	}
	if want := desired.Labels[ownerLabel]; work.Labels[ownerLabel] != want {
		return fmt.Errorf("work %s/%s belongs to another owner (label %s=%q, want %q)", work.Namespace, work.Name,
			ownerLabel, work.Labels[ownerLabel], want)
	}
	if workUpToDate(work, desired.Spec, desired.Annotations) {
		return nil
	}
	for k, v := range desired.Annotations {
		metav1.SetMetaDataAnnotation(&work.ObjectMeta, k, v)
	}
	work.Spec = desired.Spec
	return c.Update(ctx, work)
}

// workUpToDate compares what the Work carries, manifests by content (the
// API server may re-encode them).
func workUpToDate(work *workv1alpha1.Work, spec workv1alpha1.WorkSpec, annotations map[string]string) bool {
	for k, v := range annotations {
		if work.Annotations[k] != v {
			return false
		}
	}
	if ptr.Deref(work.Spec.SuspendDispatching, false) != ptr.Deref(spec.SuspendDispatching, false) ||
		ptr.Deref(work.Spec.PreserveResourcesOnDeletion, false) != ptr.Deref(spec.PreserveResourcesOnDeletion, false) ||
		len(work.Spec.Workload.Manifests) != len(spec.Workload.Manifests) {
		return false
	}
	for i := range spec.Workload.Manifests {
		// Both sides are JSON with sorted keys, so the steady state is an
		// exact byte match; decoding is the fallback for a re-encoding.
		if bytes.Equal(work.Spec.Workload.Manifests[i].Raw, spec.Workload.Manifests[i].Raw) {
			continue
		}
		var have, want any
		if json.Unmarshal(work.Spec.Workload.Manifests[i].Raw, &have) != nil ||
			json.Unmarshal(spec.Workload.Manifests[i].Raw, &want) != nil ||
			!equality.Semantic.DeepEqual(have, want) {
			return false
		}
	}
	return true
}

func (r *Reconciler) works(ctx context.Context, b view) ([]workv1alpha1.Work, error) {
	id := b.obj.GetLabels()[b.idLabel()]
	if id == "" {
		return nil, nil
	}
	works := &workv1alpha1.WorkList{}
	err := r.Client.List(ctx, works, client.MatchingLabels{b.idLabel(): id})
	return works.Items, err
}

// aggregate writes the Works' state into the binding's status as Karmada
// does: one aggregatedStatus item per target, and FullyApplied.
// It returns the clusters that run the latest template: their Work is
// dispatched and applied at its current generation.
func (r *Reconciler) aggregate(ctx context.Context, b view, status *workv1alpha2.ResourceBindingStatus, result placement.Result) (map[string]bool, error) {
	scheduled := metav1.Condition{Type: ConditionScheduled, Status: metav1.ConditionTrue, Reason: ReasonSuccess,
		Message: "Binding has been scheduled successfully."}
	if len(result.Targets) == 0 {
		scheduled = metav1.Condition{Type: ConditionScheduled, Status: metav1.ConditionFalse, Reason: ReasonNoClusterFit,
			Message: "0 clusters are available for the placement"}
	}
	setBindingCondition(status, scheduled)

	works, err := r.works(ctx, b)
	if err != nil {
		return nil, err
	}
	byCluster := map[string]*workv1alpha1.Work{}
	for i := range works {
		if cluster, err := names.GetClusterName(works[i].Namespace); err == nil {
			byCluster[cluster] = &works[i]
		}
	}
	var items []workv1alpha2.AggregatedStatusItem
	current := map[string]bool{}
	allApplied := len(b.spec.Clusters) > 0
	for _, target := range b.spec.Clusters {
		item := workv1alpha2.AggregatedStatusItem{ClusterName: target.Name}
		if w := byCluster[target.Name]; w != nil {
			if c := meta.FindStatusCondition(w.Status.Conditions, workv1alpha1.WorkApplied); c != nil {
				item.Applied = c.Status == metav1.ConditionTrue
				if !item.Applied {
					item.AppliedMessage = c.Message
				}
				current[target.Name] = item.Applied && c.ObservedGeneration == w.Generation &&
					meta.IsStatusConditionTrue(w.Status.Conditions, workv1alpha1.WorkDispatching)
			}
			if len(w.Status.ManifestStatuses) > 0 {
				item.Status = w.Status.ManifestStatuses[0].Status
				item.Health = workv1alpha2.ResourceHealth(w.Status.ManifestStatuses[0].Health)
			}
		}
		allApplied = allApplied && item.Applied
		items = append(items, item)
	}
	slices.SortFunc(items, func(a, b workv1alpha2.AggregatedStatusItem) int {
		if a.ClusterName < b.ClusterName {
			return -1
		}
		if a.ClusterName > b.ClusterName {
			return 1
		}
		return 0
	})
	status.AggregatedStatus = items
	full := metav1.Condition{Type: ConditionFullyApplied, Status: metav1.ConditionTrue, Reason: ReasonFullyApplied,
		Message: "All works have been successfully applied"}
	if !allApplied {
		full = metav1.Condition{Type: ConditionFullyApplied, Status: metav1.ConditionFalse, Reason: ReasonNotFullyApplied,
			Message: "Failed to apply all works, see status.aggregatedStatus for details"}
	}
	setBindingCondition(status, full)
	return current, nil
}

func setBindingCondition(status *workv1alpha2.ResourceBindingStatus, cond metav1.Condition) bool {
	if old := meta.FindStatusCondition(status.Conditions, cond.Type); old != nil &&
		old.Status == cond.Status && old.Reason == cond.Reason && old.Message == cond.Message {
		return false
	}
	meta.SetStatusCondition(&status.Conditions, cond)
	return true
}

// writeStatus writes status only when it differs from the stored one.
func (r *Reconciler) writeStatus(ctx context.Context, b view, status *workv1alpha2.ResourceBindingStatus) error {
	if equality.Semantic.DeepEqual(status, b.status) {
		return nil
	}
	// A merge patch carries no resourceVersion: the status is computed whole
	// from the Works, so a reconcile from a slightly stale binding is
	// corrected by the next one instead of failing with a conflict.
	patch := client.MergeFrom(b.obj.DeepCopyObject().(client.Object))
	*b.status = *status
	return r.Client.Status().Patch(ctx, b.obj, patch)
}

// finalize deletes the binding's Works (their own finalizer then removes
// the objects from members) and releases the binding.
func (r *Reconciler) finalize(ctx context.Context, b view) error {
	if !controllerutil.ContainsFinalizer(b.obj, b.finalizer()) {
		return nil
	}
	works, err := r.works(ctx, b)
	if err != nil {
		return err
	}
	for i := range works {
		if err := r.Client.Delete(ctx, &works[i]); client.IgnoreNotFound(err) != nil {
			return err
		}
	}
	controllerutil.RemoveFinalizer(b.obj, b.finalizer())
	return client.IgnoreNotFound(r.Client.Update(ctx, b.obj))
}

// cacheBehind reports whether err only says that the cache was behind the
// API server: optimistic-concurrency conflicts, or creates of Works that
// already exist. Both resolve themselves on the next read; neither is a
// failure a person needs to hear about.
func cacheBehind(err error) bool {
	if err == nil {
		return false
	}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range joined.Unwrap() {
			if !cacheBehind(e) {
				return false
			}
		}
		return true
	}
	return apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err)
}
