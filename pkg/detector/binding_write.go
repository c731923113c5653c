package detector

import (
	"context"
	"errors"
	"slices"

	"github.com/google/uuid"
	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	"github.com/karmada-io/karmada/pkg/util/names"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policykeys "github.com/federator-dev/federator/apis/policy"
	workkeys "github.com/federator-dev/federator/apis/work"
	"github.com/federator-dev/federator/internal/holdwrites"
	"github.com/federator-dev/federator/internal/retry"
	"github.com/federator-dev/federator/pkg/hold"
	"github.com/federator-dev/federator/pkg/placement"
)

// The ResourceBinding the detector writes for a claimed template, and its
// removal when the template is no longer claimed.

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
	// The claim as Karmada's claimFunc records it on the binding too: the
	// policy's name and its permanent ID, which tells a policy created
	// again under the same name from the one that wrote the binding.
	if p := claim.PropagationPolicy; p != nil {
		meta.Annotations[policyv1alpha1.PropagationPolicyNamespaceAnnotation] = p.Namespace
		meta.Annotations[policyv1alpha1.PropagationPolicyNameAnnotation] = p.Name
		meta.Labels[policyv1alpha1.PropagationPolicyPermanentIDLabel] = claim.PermanentID()
	} else {
		meta.Annotations[policyv1alpha1.ClusterPropagationPolicyAnnotation] = claim.ClusterPropagationPolicy.Name
		meta.Labels[policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel] = claim.PermanentID()
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
	priority *workv1alpha2.SchedulePriority, floor *int64) (string, error) {
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
		*floor = desired.GetGeneration()
		return "binding created (policy " + claim.Key() + ")", nil
	}
	if err != nil {
		return "", err
	}
	if !existing.GetDeletionTimestamp().IsZero() {
		// Being deleted: the template was deleted and this is it created
		// again before the binding's deletion ended (its finalizer not yet
		// removed, a cache behind). A write would go with the binding and
		// leave the template with none; the binding is created afresh once
		// it is gone (its deletion brings the template back, controller.go),
		// and its Works then take back their members' countdowns.
		return "", apierrors.NewConflict(workv1alpha2.Resource(bindingResource(existing)), cache.MetaObjectToName(existing).String(),
			errors.New("the binding is being deleted; it is created again for the template once it is gone"))
	}
	have := bindingSpec(existing)
	// Keep what other controllers own in the spec: the placement decision.
	spec.Clusters = have.Clusters
	annotations := existing.GetAnnotations()
	// A change of what holds goes in the hold lane, ahead of bulk writes
	// (internal/holdwrites).
	if !equality.Semantic.DeepEqual(spec.Suspension, have.Suspension) ||
		annotations[workkeys.TemplateHoldsAnnotation] != desired.GetAnnotations()[workkeys.TemplateHoldsAnnotation] {
		ctx = holdwrites.Hold(ctx)
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
	// Nor what held in a deleted policy: the claiming policy decides now.
	for _, k := range append(slices.Concat(ppClaimAnnotations, cppClaimAnnotations), workkeys.TemplateHoldsAnnotation,
		workkeys.PolicyHoldsAnnotation) {
		if _, wanted := desired.GetAnnotations()[k]; !wanted {
			if _, stale := annotations[k]; stale {
				delete(annotations, k)
				sameAnnotations = false
			}
		}
	}
	labels := existing.GetLabels()
	sameLabels := true
	for _, k := range slices.Concat(ppClaimLabels, cppClaimLabels) {
		want, wanted := desired.GetLabels()[k]
		if have, ok := labels[k]; ok != wanted || have != want {
			sameLabels = false
			if labels == nil {
				labels = map[string]string{}
			}
			if wanted {
				labels[k] = want
			} else {
				delete(labels, k)
			}
		}
	}
	if equality.Semantic.DeepEqual(spec, have) && sameAnnotations && sameLabels &&
		equality.Semantic.DeepEqual(existing.GetOwnerReferences(), desired.GetOwnerReferences()) {
		*floor = existing.GetGeneration()
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
	existing.SetLabels(labels)
	existing.SetOwnerReferences(desired.GetOwnerReferences())
	if err := d.client.Update(ctx, existing); err != nil {
		return "", err
	}
	*floor = existing.GetGeneration()
	return "binding updated (policy " + claim.Key() + ")", nil
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

// bindingResource is the resource name of a ResourceBinding or
// ClusterResourceBinding, for errors.
func bindingResource(b client.Object) string {
	if _, ok := b.(*workv1alpha2.ClusterResourceBinding); ok {
		return "clusterresourcebindings"
	}
	return "resourcebindings"
}

// bindingSpec is the spec of a ResourceBinding or ClusterResourceBinding.
func bindingSpec(b client.Object) *workv1alpha2.ResourceBindingSpec {
	switch o := b.(type) {
	case *workv1alpha2.ResourceBinding:
		return &o.Spec
	case *workv1alpha2.ClusterResourceBinding:
		return &o.Spec
	}
	return nil
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

// templateAtLeast reads the template key names from the cache or, when the
// cache holds a version older than its binding records
// (spec.resource.resourceVersion), from the API server: after a change of
// leader or a restart of the hub's API server, the binding informer may
// have caught up while the template's has not, and a binding written from
// that template would take the template's holds and content back to a
// version the user has already replaced.
func (d *Reconciler) templateAtLeast(ctx context.Context, key Key) (*unstructured.Unstructured, error) {
	var b client.Object = &workv1alpha2.ResourceBinding{}
	if key.Namespace == "" {
		b = &workv1alpha2.ClusterResourceBinding{}
	}
	var floor string
	err := d.client.Get(ctx, client.ObjectKey{Namespace: key.Namespace, Name: names.GenerateBindingName(key.Kind, key.Name)}, b)
	switch {
	case err == nil:
		floor = bindingSpec(b).Resource.ResourceVersion
	case !apierrors.IsNotFound(err):
		return nil, err
	}
	template := &unstructured.Unstructured{}
	template.SetGroupVersionKind(key.GroupVersionKind)
	api := d.apiReader
	if api == nil {
		api = d.client
	}
	fresh, err := retry.ReadAtLeast(ctx, d.client, api, client.ObjectKey{Namespace: key.Namespace, Name: key.Name}, template, floor)
	if fresh && err == nil {
		ctrl.LoggerFrom(ctx).V(1).Info("the template cache is behind its binding: template read from the API server",
			"resourceVersion", template.GetResourceVersion())
	}
	return template, err
}
