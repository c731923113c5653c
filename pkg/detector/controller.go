package detector

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"
	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	"github.com/karmada-io/karmada/pkg/util/names"
	"github.com/karmada-io/karmada/pkg/util/validation"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/source"

	policykeys "github.com/federator-dev/federator/apis/policy"
	workkeys "github.com/federator-dev/federator/apis/work"
	"github.com/federator-dev/federator/internal/lanes"
	queuing "github.com/federator-dev/federator/internal/priority"
	"github.com/federator-dev/federator/internal/retry"
	"github.com/federator-dev/federator/pkg/hold"
	"github.com/federator-dev/federator/pkg/placement"
)

// Key names one resource template of any kind or, with Policy set, one
// PropagationPolicy / ClusterPropagationPolicy whose change must be fanned
// out to the templates it affects.
type Key struct {
	schema.GroupVersionKind
	Namespace, Name string
	Policy          bool
	// ByLazyPolicy marks a template queued by a change of a policy whose
	// spec.activationPreference is Lazy: the claim is recorded, but the
	// binding waits until the template itself next changes (Karmada's
	// ResourceChangeByKarmada). Set only for lazy policies, as Karmada
	// does, so a template has one key otherwise.
	ByLazyPolicy bool
}

// Reconciler is the detector: it watches the kinds policies select and
// keeps one binding per claimed template.
type Reconciler struct {
	client   client.Client
	mgr      ctrl.Manager
	recorder record.EventRecorder
	ctrl     controller.TypedController[Key]
	// noPolicyStatus: Options.NoPolicyStatus.
	noPolicyStatus bool

	mu      sync.Mutex
	watched map[schema.GroupVersionKind]bool
	// queue is the detector's own queue, captured from the first policy
	// event, so a policy's fan-out can enqueue templates.
	queue workqueue.TypedRateLimitingInterface[Key]
	// earlier holds, per policy Key, the versions of the policy that were
	// replaced before its fan-out ran: templates they selected are
	// re-evaluated too (a template the policy stops selecting, or one whose
	// claim is still on its way to the cache).
	earlier map[Key][]client.Object
	// suspensionChanged marks the policy Keys whose fan-out carries a
	// change of spec.suspension: their templates are queued at
	// queuing.Hold.
	suspensionChanged map[Key]bool
}

// kindIndex indexes policies by the kinds their resourceSelectors name, so
// a template reconcile reads only the policies that can claim it.
const kindIndex = "policy.federator.dev/selected-kind"

func selectedKinds(o client.Object) []string {
	selectors := policykeys.SpecOf(o).ResourceSelectors
	kinds := make([]string, 0, len(selectors))
	for _, rs := range selectors {
		if !slices.Contains(kinds, rs.Kind) {
			kinds = append(kinds, rs.Kind)
		}
	}
	return kinds
}

// Options tune the detector.
type Options struct {
	// Workers per controller.
	Workers int
	// NoPolicyStatus: the hub's policy CRDs serve no status subresource
	// (a Karmada hub's own CRDs, which federator may not update), so the
	// policy conditions are not written; their Warning Events still are.
	NoPolicyStatus bool
}

// SetupWithManager registers the detector: a template controller whose
// watches grow with the kinds policies select, and a policy controller that
// validates policies and adds those watches.
func SetupWithManager(mgr ctrl.Manager, o Options) error {
	d := &Reconciler{client: mgr.GetClient(), mgr: mgr, recorder: mgr.GetEventRecorderFor("resource-detector"),
		watched: map[schema.GroupVersionKind]bool{}, earlier: map[Key][]client.Object{}, suspensionChanged: map[Key]bool{},
		noPolicyStatus: o.NoPolicyStatus}
	for _, p := range []client.Object{&policyv1alpha1.PropagationPolicy{}, &policyv1alpha1.ClusterPropagationPolicy{}} {
		if err := mgr.GetFieldIndexer().IndexField(context.Background(), p, kindIndex, selectedKinds); err != nil {
			return err
		}
	}
	// A priority queue: a template whose holds change, and the templates of
	// a policy whose spec.suspension changes, go before bulk changes
	// (internal/priority).
	c, err := controller.NewTyped[Key]("detector", mgr, controller.TypedOptions[Key]{
		Reconciler: d, MaxConcurrentReconciles: o.Workers, UsePriorityQueue: ptr.To(true)})
	if err != nil {
		return err
	}
	d.ctrl = c
	// A policy change re-evaluates the templates the policy selects or
	// claims, before and after the change (Affects). Annotations do not
	// count: what they hold is decided by the binding controller.
	for _, p := range []client.Object{&policyv1alpha1.PropagationPolicy{}, &policyv1alpha1.ClusterPropagationPolicy{}} {
		if err := c.Watch(source.TypedKind[client.Object, Key](mgr.GetCache(), p,
			d.policyHandler(), predicate.GenerationChangedPredicate{})); err != nil {
			return err
		}
	}
	// A PriorityClass a policy's schedulePriority names resolves into its
	// bindings (SchedulePriority).
	if err := c.Watch(source.TypedKind[client.Object, Key](mgr.GetCache(), client.Object(&schedulingv1.PriorityClass{}),
		d.priorityClassChanges())); err != nil {
		return err
	}
	pr := &policyReconciler{d: d}
	for name, p := range map[string]client.Object{
		"propagationpolicy":        &policyv1alpha1.PropagationPolicy{},
		"clusterpropagationpolicy": &policyv1alpha1.ClusterPropagationPolicy{},
	} {
		_, clusterScoped := p.(*policyv1alpha1.ClusterPropagationPolicy)
		if err := ctrl.NewControllerManagedBy(mgr).Named(name).
			For(p, builder.WithPredicates(predicate.Or[client.Object](predicate.GenerationChangedPredicate{}, clusterAnnotationsChanged))).
			// A Cluster joining or leaving can make a name a policy lists
			// known or unknown (ClustersKnown).
			Watches(&clusterv1alpha1.Cluster{}, pr.clusterChanges(clusterScoped), builder.WithPredicates(joinsAndLeaves)).
			// ... and a PriorityClass coming or going, SchedulePriorityResolved.
			Watches(&schedulingv1.PriorityClass{}, pr.priorityClassChanges(clusterScoped)).
			Complete(pr.forKind(p)); err != nil {
			return err
		}
	}
	return nil
}

// joinsAndLeaves passes Cluster creations and deletions only.
var joinsAndLeaves = predicate.Funcs{
	UpdateFunc:  func(event.UpdateEvent) bool { return false },
	GenericFunc: func(event.GenericEvent) bool { return false },
}

// watch makes sure templates of gvk are watched.
func (d *Reconciler) watch(gvk schema.GroupVersionKind) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.watched[gvk] || SkippedGVK(gvk) {
		return nil
	}
	if _, err := d.mgr.GetRESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version); err != nil {
		return fmt.Errorf("the hub does not serve %s: %w", gvk, err)
	}
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(gvk)
	src := source.TypedKind[client.Object, Key](d.mgr.GetCache(), client.Object(obj),
		queuing.Handler(func(_ context.Context, o client.Object) []Key {
			return []Key{{GroupVersionKind: gvk, Namespace: o.GetNamespace(), Name: o.GetName()}}
		}, func(old, new client.Object) bool {
			return hold.AnnotationsChanged(old.GetAnnotations(), new.GetAnnotations())
		}), templateChanged{})
	if err := d.ctrl.Watch(src); err != nil {
		return err
	}
	d.watched[gvk] = true
	return nil
}

// policyHandler turns a policy event into one policy Key on the queue; the
// fan-out to templates runs in a worker (fanOut), never in the informer's
// event handler. For an update, the version replaced is kept for it.
func (d *Reconciler) policyHandler() handler.TypedEventHandler[client.Object, Key] {
	enqueue := func(q workqueue.TypedRateLimitingInterface[Key], policy client.Object, replaced client.Object) {
		key := Key{GroupVersionKind: policyGVK(policy), Namespace: policy.GetNamespace(), Name: policy.GetName(), Policy: true}
		// A suspension set, changed or lifted is fanned out, and its
		// templates taken, before bulk work.
		p := 0
		if replaced != nil && replaced != policy &&
			!equality.Semantic.DeepEqual(policykeys.SpecOf(replaced).Suspension, policykeys.SpecOf(policy).Suspension) {
			p = queuing.Hold
		}
		d.mu.Lock()
		d.queue = q
		if replaced != nil {
			d.earlier[key] = append(d.earlier[key], replaced)
		}
		if p == queuing.Hold {
			d.suspensionChanged[key] = true
		}
		d.mu.Unlock()
		queuing.Add(q, p, key)
	}
	return handler.TypedFuncs[client.Object, Key]{
		CreateFunc: func(_ context.Context, e event.TypedCreateEvent[client.Object], q workqueue.TypedRateLimitingInterface[Key]) {
			enqueue(q, e.Object, nil)
		},
		UpdateFunc: func(_ context.Context, e event.TypedUpdateEvent[client.Object], q workqueue.TypedRateLimitingInterface[Key]) {
			enqueue(q, e.ObjectNew, e.ObjectOld)
		},
		DeleteFunc: func(_ context.Context, e event.TypedDeleteEvent[client.Object], q workqueue.TypedRateLimitingInterface[Key]) {
			// Gone from the cache: the deleted version is what selected.
			enqueue(q, e.Object, e.Object)
		},
		GenericFunc: func(_ context.Context, e event.TypedGenericEvent[client.Object], q workqueue.TypedRateLimitingInterface[Key]) {
			enqueue(q, e.Object, nil)
		},
	}
}

func policyGVK(o client.Object) schema.GroupVersionKind {
	if _, ok := o.(*policyv1alpha1.ClusterPropagationPolicy); ok {
		return policyv1alpha1.SchemeGroupVersion.WithKind("ClusterPropagationPolicy")
	}
	return policyv1alpha1.SchemeGroupVersion.WithKind("PropagationPolicy")
}

// fanOut enqueues every watched template the policy affects, as it is now
// and as it was before the changes not yet fanned out.
func (d *Reconciler) fanOut(ctx context.Context, key Key) error {
	var current client.Object = &policyv1alpha1.PropagationPolicy{}
	if key.Kind == "ClusterPropagationPolicy" {
		current = &policyv1alpha1.ClusterPropagationPolicy{}
	}
	policies := []client.Object{}
	if err := d.client.Get(ctx, client.ObjectKey{Namespace: key.Namespace, Name: key.Name}, current); err == nil {
		policies = append(policies, current)
	} else if !apierrors.IsNotFound(err) {
		return err
	}
	d.mu.Lock()
	replaced := d.earlier[key]
	delete(d.earlier, key)
	queue := d.queue
	p := 0
	if d.suspensionChanged[key] {
		p = queuing.Hold
	}
	delete(d.suspensionChanged, key)
	d.mu.Unlock()
	policies = append(policies, replaced...)
	if len(policies) == 0 {
		return nil
	}
	keys, err := d.templatesAffectedBy(ctx, policies...)
	if err != nil {
		// Keep what was replaced for the retry.
		d.mu.Lock()
		d.earlier[key] = append(d.earlier[key], replaced...)
		if p == queuing.Hold {
			d.suspensionChanged[key] = true
		}
		d.mu.Unlock()
		return err
	}
	lazy := len(policies) > 0 && policies[0] == current && lazyActivation(current)
	for _, k := range keys {
		k.ByLazyPolicy = lazy
		queuing.Add(queue, p, k)
	}
	return nil
}

// templatesAffectedBy lists, from the cache and without copying, the
// watched templates any of policies affects.
func (d *Reconciler) templatesAffectedBy(ctx context.Context, policies ...client.Object) ([]Key, error) {
	d.mu.Lock()
	gvks := make([]schema.GroupVersionKind, 0, len(d.watched))
	for gvk := range d.watched {
		gvks = append(gvks, gvk)
	}
	d.mu.Unlock()
	// Only kinds one of the policies selects can be affected: claimed
	// templates are of a kind their policy selects.
	var kinds []string
	for _, p := range policies {
		kinds = append(kinds, selectedKinds(p)...)
	}
	opts := []client.ListOption{client.UnsafeDisableDeepCopy}
	if ns := policies[0].GetNamespace(); ns != "" {
		opts = append(opts, client.InNamespace(ns)) // a PropagationPolicy reaches its own namespace only
	}
	var keys []Key
	for _, gvk := range gvks {
		if !slices.Contains(kinds, gvk.Kind) {
			continue
		}
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := d.client.List(ctx, list, opts...); err != nil {
			return nil, fmt.Errorf("list %s to find the templates a policy change affects: %w", gvk, err)
		}
		for i := range list.Items {
			for _, p := range policies {
				if Affects(p, &list.Items[i]) {
					keys = append(keys, Key{GroupVersionKind: gvk, Namespace: list.Items[i].GetNamespace(), Name: list.Items[i].GetName()})
					break
				}
			}
		}
	}
	return keys, nil
}

// Reconcile keeps the binding of one template in line with the policy that
// claims it, or fans a policy change out to the templates it affects.
func (d *Reconciler) Reconcile(ctx context.Context, key Key) (ctrl.Result, error) {
	if key.Policy {
		return ctrl.Result{}, d.fanOut(ctx, key)
	}
	start := time.Now()
	outcome, err := d.reconcile(ctx, key)
	if outcome != "" && err == nil {
		ctrl.LoggerFrom(ctx).V(1).Info(outcome, "template", key.Kind+" "+client.ObjectKey{Namespace: key.Namespace, Name: key.Name}.String(),
			"duration", time.Since(start).Round(time.Millisecond).String())
	}
	return retry.Quietly(ctrl.Result{}, err)
}

// reconcile returns what it did, for the log.
func (d *Reconciler) reconcile(ctx context.Context, key Key) (string, error) {
	template := &unstructured.Unstructured{}
	template.SetGroupVersionKind(key.GroupVersionKind)
	err := d.client.Get(ctx, client.ObjectKey{Namespace: key.Namespace, Name: key.Name}, template)
	if apierrors.IsNotFound(err) {
		return "template gone: binding deleted", d.deleteBinding(ctx, key)
	}
	if err != nil {
		return "", err
	}
	if Skipped(template) || !template.GetDeletionTimestamp().IsZero() {
		return "", nil
	}
	// Only policies selecting this kind can claim it (kindIndex).
	selectsKind := client.MatchingFields{kindIndex: key.Kind}
	pps := &policyv1alpha1.PropagationPolicyList{}
	if key.Namespace != "" {
		if err := d.client.List(ctx, pps, client.InNamespace(key.Namespace), selectsKind); err != nil {
			return "", err
		}
	}
	cpps := &policyv1alpha1.ClusterPropagationPolicyList{}
	if err := d.client.List(ctx, cpps, selectsKind); err != nil {
		return "", err
	}
	claim, ok := Resolve(template, pps.Items, cpps.Items)
	if labels, annotations, changed := ClaimMetadata(template, claim, ok); changed {
		// Record the claim on the template as Karmada does; it keeps the
		// template with its policy until that policy lets go.
		held, wasHeld := stickyClaim(template, pps.Items, cpps.Items)
		patch := client.MergeFrom(template.DeepCopy())
		template.SetLabels(labels)
		template.SetAnnotations(annotations)
		if err := d.client.Patch(ctx, template, patch); err != nil {
			return "", err
		}
		if wasHeld && ok && held.Key() != claim.Key() {
			d.recorder.Event(template, corev1.EventTypeNormal, policykeys.EventReasonPreemptPolicySucceed, PreemptedMessage(claim, held))
		}
	}
	if !ok {
		// Like Karmada, a template no policy claims keeps what was
		// propagated; nothing is deleted because a policy went away.
		return "no policy claims it", nil
	}
	if err := d.foldAliases(ctx, claim); err != nil {
		return "", err
	}
	if errs := validation.ValidatePropagationSpec(*claim.Spec()); len(errs) > 0 {
		// Bad input changes nothing: the binding keeps its last good spec.
		d.recorder.Eventf(template, corev1.EventTypeWarning, policykeys.EventReasonApplyPolicyFailed,
			"policy %s is invalid, the template is left as it was: %v", claim.Key(), errs.ToAggregate())
		return "policy " + claim.Key() + " is invalid: template left as it was", nil
	}
	if key.ByLazyPolicy && claim.Spec().ActivationPreference == policyv1alpha1.LazyActivation {
		return "policy " + claim.Key() + " is Lazy: its change reaches the binding when the template next changes", nil
	}
	class, err := d.priorityClass(ctx, claim.Spec())
	if err != nil {
		return "", err
	}
	priority, err := SchedulePriority(claim.Spec(), class)
	if err != nil {
		// As Karmada: no binding, nor a changed one, while the priority
		// does not resolve; the policy's SchedulePriorityResolved says why,
		// and the PriorityClass's creation brings the template back here.
		d.recorder.Event(template, corev1.EventTypeWarning, policykeys.EventReasonApplyPolicyFailed, applyPolicyFailed(claim, err))
		return "policy " + claim.Key() + ": " + err.Error() + ": no binding written", nil
	}
	return d.writeBinding(ctx, template, claim, priority)
}

// applyPolicyFailed is Karmada's ApplyPolicyFailed message.
func applyPolicyFailed(claim Claim, err error) string {
	if claim.PropagationPolicy != nil {
		return fmt.Sprintf("Apply policy(%s) failed: %v", claim.Key(), err)
	}
	return fmt.Sprintf("Apply cluster policy(%s) failed: %v", claim.Key(), err)
}

// lazyActivation reports whether a policy's changes wait for each
// template's next change (spec.activationPreference: Lazy).
func lazyActivation(policy client.Object) bool {
	return policykeys.SpecOf(policy).ActivationPreference == policyv1alpha1.LazyActivation
}

// Binding returns the binding the detector writes for template and claim.
func Binding(template *unstructured.Unstructured, claim Claim, priority *workv1alpha2.SchedulePriority) (client.Object, *workv1alpha2.ResourceBindingSpec) {
	spec := claim.Spec()
	bs := workv1alpha2.ResourceBindingSpec{
		Resource: workv1alpha2.ObjectReference{
			APIVersion: template.GetAPIVersion(), Kind: template.GetKind(),
			Namespace: template.GetNamespace(), Name: template.GetName(),
			UID: template.GetUID(), ResourceVersion: template.GetResourceVersion(),
		},
		Replicas:                    replicas(template),
		Placement:                   spec.Placement.DeepCopy(),
		Suspension:                  suspension(claim),
		ConflictResolution:          spec.ConflictResolution,
		PreserveResourcesOnDeletion: spec.PreserveResourcesOnDeletion,
		PropagateDeps:               spec.PropagateDeps,
		SchedulerName:               spec.SchedulerName,
		Failover:                    spec.Failover.DeepCopy(),
		SchedulePriority:            priority,
	}
	meta := metav1.ObjectMeta{
		Name: names.GenerateBindingName(template.GetKind(), template.GetName()),
		// What Karmada's webhook adds at creation, so the binding controller
		// need not write the binding once more to add it.
		Finalizers: []string{bindingFinalizer(template)},
		Labels:     map[string]string{bindingIDLabel(template): uuid.NewString()},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: template.GetAPIVersion(), Kind: template.GetKind(),
			Name: template.GetName(), UID: template.GetUID(), Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}},
		Annotations: map[string]string{},
	}
	if digest := hold.AnnotationsDigest(template.GetAnnotations()); digest != "" {
		meta.Annotations[workkeys.TemplateHoldsAnnotation] = digest
	}
	if p := claim.PropagationPolicy; p != nil {
		meta.Annotations[policyv1alpha1.PropagationPolicyNamespaceAnnotation] = p.Namespace
		meta.Annotations[policyv1alpha1.PropagationPolicyNameAnnotation] = p.Name
	} else {
		meta.Annotations[policyv1alpha1.ClusterPropagationPolicyAnnotation] = claim.ClusterPropagationPolicy.Name
	}
	if template.GetNamespace() == "" {
		b := &workv1alpha2.ClusterResourceBinding{ObjectMeta: meta, Spec: bs}
		return b, &b.Spec
	}
	meta.Namespace = template.GetNamespace()
	b := &workv1alpha2.ResourceBinding{ObjectMeta: meta, Spec: bs}
	return b, &b.Spec
}

// suspension is the policy's spec.suspension, as Karmada carries it into
// the binding. Everything else that holds dispatching (the suspended
// annotation on the policy or the template, ...) is decided by pkg/hold in
// the binding controller, which reads the template and the policy itself.
func suspension(claim Claim) *workv1alpha2.Suspension {
	if p := claim.Spec().Suspension; p != nil {
		return &workv1alpha2.Suspension{Suspension: *p.DeepCopy()}
	}
	return nil
}

func replicas(template *unstructured.Unstructured) int32 {
	r, found, err := unstructured.NestedInt64(template.Object, "spec", "replicas")
	if !found || err != nil {
		return 0
	}
	return int32(r)
}

func (d *Reconciler) writeBinding(ctx context.Context, template *unstructured.Unstructured, claim Claim,
	priority *workv1alpha2.SchedulePriority) (string, error) {
	desired, spec := Binding(template, claim, priority)
	existing := desired.DeepCopyObject().(client.Object)
	err := d.client.Get(ctx, client.ObjectKeyFromObject(desired), existing)
	if apierrors.IsNotFound(err) {
		// Placed at creation, so the binding controller finds the placement
		// it would write and the binding costs the hub one write, not two.
		// It stays the binding controller's to change (clusters join and
		// leave); a placement error is left for it to report.
		clusters := &clusterv1alpha1.ClusterList{}
		if err := d.client.List(ctx, clusters, client.UnsafeDisableDeepCopy); err != nil {
			return "", err
		}
		if placed, err := placement.PlaceBinding(spec, clusters.Items, template.GetUID()); err == nil {
			spec.Clusters = placed.Targets
		}
		if err := d.client.Create(ctx, desired); err != nil {
			// AlreadyExists: created by an earlier pass the cache has not
			// seen yet; retried quietly.
			return "", err
		}
		d.recorder.Eventf(template, corev1.EventTypeNormal, policykeys.EventReasonApplyPolicySucceed, "Apply policy(%s) succeed", claim.Key())
		return "binding created (policy " + claim.Key() + ")", nil
	}
	if err != nil {
		return "", err
	}
	var have *workv1alpha2.ResourceBindingSpec
	switch b := existing.(type) {
	case *workv1alpha2.ResourceBinding:
		have = &b.Spec
	case *workv1alpha2.ClusterResourceBinding:
		have = &b.Spec
	}
	// Keep what other controllers own in the spec: the placement decision.
	spec.Clusters = have.Clusters
	annotations := existing.GetAnnotations()
	// A change of what holds goes in the hold lane, ahead of bulk writes
	// (internal/lanes).
	if !equality.Semantic.DeepEqual(spec.Suspension, have.Suspension) ||
		annotations[workkeys.TemplateHoldsAnnotation] != desired.GetAnnotations()[workkeys.TemplateHoldsAnnotation] {
		ctx = lanes.Hold(ctx)
	}
	sameAnnotations := true
	for k, v := range desired.GetAnnotations() {
		if annotations[k] != v {
			sameAnnotations = false
		}
	}
	// A claim that moved between kinds (preemption, or the claiming policy
	// gone) leaves no trace of the former one on the binding, as Karmada's
	// excludeClusterPolicy.
	// Nor a digest of template holds that are gone.
	for _, k := range append(slices.Concat(ppClaimAnnotations, cppClaimAnnotations), workkeys.TemplateHoldsAnnotation) {
		if _, wanted := desired.GetAnnotations()[k]; !wanted {
			if _, stale := annotations[k]; stale {
				delete(annotations, k)
				sameAnnotations = false
			}
		}
	}
	if equality.Semantic.DeepEqual(spec, have) && sameAnnotations &&
		equality.Semantic.DeepEqual(existing.GetOwnerReferences(), desired.GetOwnerReferences()) {
		return "binding unchanged", nil
	}
	*have = *spec
	if annotations == nil {
		annotations = map[string]string{}
	}
	for k, v := range desired.GetAnnotations() {
		annotations[k] = v
	}
	existing.SetAnnotations(annotations)
	existing.SetOwnerReferences(desired.GetOwnerReferences())
	return "binding updated (policy " + claim.Key() + ")", d.client.Update(ctx, existing)
}

// deleteBinding deletes the binding of a template that is gone, whatever
// its suspension: deletion is never held.
func (d *Reconciler) deleteBinding(ctx context.Context, key Key) error {
	name := names.GenerateBindingName(key.Kind, key.Name)
	var b client.Object = &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: name}}
	if key.Namespace == "" {
		b = &workv1alpha2.ClusterResourceBinding{ObjectMeta: metav1.ObjectMeta{Name: name}}
	}
	return client.IgnoreNotFound(d.client.Delete(ctx, b))
}

// templateChanged passes template updates that can change what members
// get: anything but status, bookkeeping metadata and the claim the detector
// itself records (reacting to its own claim would only race the cache).
type templateChanged struct{ predicate.Funcs }

func (templateChanged) Update(e event.UpdateEvent) bool {
	o, ok1 := e.ObjectOld.(*unstructured.Unstructured)
	n, ok2 := e.ObjectNew.(*unstructured.Unstructured)
	if !ok1 || !ok2 {
		return true
	}
	return !equality.Semantic.DeepEqual(significant(o), significant(n))
}

// significant is what of a template reaches its binding and members.
func significant(u *unstructured.Unstructured) map[string]any {
	c := u.DeepCopy()
	delete(c.Object, "status")
	for _, f := range []string{"resourceVersion", "managedFields", "generation"} {
		unstructured.RemoveNestedField(c.Object, "metadata", f)
	}
	labels, annotations, _ := ClaimMetadata(c, Claim{}, false)
	c.SetLabels(labels)
	c.SetAnnotations(annotations)
	return c.Object
}

func bindingFinalizer(template *unstructured.Unstructured) string {
	if template.GetNamespace() == "" {
		return workkeys.ClusterBindingFinalizer
	}
	return workkeys.BindingFinalizer
}

func bindingIDLabel(template *unstructured.Unstructured) string {
	if template.GetNamespace() == "" {
		return workv1alpha2.ClusterResourceBindingPermanentIDLabel
	}
	return workv1alpha2.ResourceBindingPermanentIDLabel
}
