package detector

import (
	"context"
	"fmt"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"

	policykeys "github.com/federator-dev/federator/apis/policy"
)

// SchedulePriority is what Karmada's detector writes into a binding's
// spec.schedulePriority for a policy's spec.schedulePriority (the
// PriorityBasedScheduling feature, on here): the value of the hub's
// PriorityClass named, for priorityClassSource KubePriorityClass. class is
// the PriorityClass, nil when there is none. An error means no binding may
// be written: the class does not exist, or the source is one Karmada does
// not support either (its messages).
func SchedulePriority(spec *policyv1alpha1.PropagationSpec, class *schedulingv1.PriorityClass) (*workv1alpha2.SchedulePriority, error) {
	sp := spec.SchedulePriority
	if sp == nil {
		return nil, nil
	}
	switch sp.PriorityClassSource {
	case policyv1alpha1.KubePriorityClass:
		if class == nil {
			return nil, apierrors.NewNotFound(schedulingv1.Resource("priorityclasses"), sp.PriorityClassName)
		}
		return &workv1alpha2.SchedulePriority{Priority: class.Value}, nil
	case policyv1alpha1.PodPriorityClass:
		return nil, fmt.Errorf("priority class source is PodPriorityClass, but PodPriorityClass is not supported yet")
	case policyv1alpha1.FederatedPriorityClass:
		return nil, fmt.Errorf("priority class source is FederatedPriorityClass, but FederatedPriorityClass is not supported yet")
	}
	return nil, fmt.Errorf("unsupported priority class source")
}

// SchedulePriorityResolved is the policy's condition of that type: True
// with the priority when the binding gets it, False with why no binding is
// written; ok=false when the policy sets no schedulePriority (no condition).
func SchedulePriorityResolved(spec *policyv1alpha1.PropagationSpec, class *schedulingv1.PriorityClass) (metav1.Condition, bool) {
	if spec.SchedulePriority == nil {
		return metav1.Condition{}, false
	}
	p, err := SchedulePriority(spec, class)
	switch {
	case err == nil:
		return metav1.Condition{Type: policykeys.ConditionSchedulePriorityResolved, Status: metav1.ConditionTrue,
			Reason:  policykeys.ReasonPriorityClassFound,
			Message: fmt.Sprintf("PriorityClass %s gives the policy's bindings priority %d.", spec.SchedulePriority.PriorityClassName, p.Priority)}, true
	case apierrors.IsNotFound(err):
		return metav1.Condition{Type: policykeys.ConditionSchedulePriorityResolved, Status: metav1.ConditionFalse,
			Reason: policykeys.ReasonPriorityClassNotFound,
			Message: fmt.Sprintf("spec.schedulePriority.priorityClassName: PriorityClass %q does not exist on the hub; "+
				"no template this policy selects gets a binding (nor a changed one) until it is created", spec.SchedulePriority.PriorityClassName)}, true
	}
	return metav1.Condition{Type: policykeys.ConditionSchedulePriorityResolved, Status: metav1.ConditionFalse,
		Reason:  policykeys.ReasonUnsupportedPriorityClassSource,
		Message: "spec.schedulePriority.priorityClassSource: " + err.Error() + "; no template this policy selects gets a binding until it is fixed"}, true
}

// priorityClass reads the PriorityClass a policy's schedulePriority names
// from the cache; nil when it names none or it does not exist.
func (d *Reconciler) priorityClass(ctx context.Context, spec *policyv1alpha1.PropagationSpec) (*schedulingv1.PriorityClass, error) {
	if spec.SchedulePriority == nil || spec.SchedulePriority.PriorityClassName == "" {
		return nil, nil
	}
	pc := &schedulingv1.PriorityClass{}
	err := d.client.Get(ctx, client.ObjectKey{Name: spec.SchedulePriority.PriorityClassName}, pc)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return pc, nil
}

// policiesNaming calls f for each policy whose schedulePriority names the
// PriorityClass pc.
func (d *Reconciler) policiesNaming(ctx context.Context, pc client.Object, f func(client.Object)) error {
	pps := &policyv1alpha1.PropagationPolicyList{}
	cpps := &policyv1alpha1.ClusterPropagationPolicyList{}
	if err := d.client.List(ctx, pps); err != nil {
		return err
	}
	if err := d.client.List(ctx, cpps); err != nil {
		return err
	}
	names := func(spec *policyv1alpha1.PropagationSpec) bool {
		return spec.SchedulePriority != nil && spec.SchedulePriority.PriorityClassName == pc.GetName()
	}
	for i := range pps.Items {
		if names(&pps.Items[i].Spec) {
			f(&pps.Items[i])
		}
	}
	for i := range cpps.Items {
		if names(&cpps.Items[i].Spec) {
			f(&cpps.Items[i])
		}
	}
	return nil
}

// priorityClassChanges re-evaluates, when a PriorityClass comes, goes or
// changes its value, the templates of the policies that name it: as for a
// change of those policies.
func (d *Reconciler) priorityClassChanges() handler.TypedEventHandler[client.Object, Key] {
	enqueue := func(ctx context.Context, pc client.Object, q workqueue.TypedRateLimitingInterface[Key]) {
		d.mu.Lock()
		d.queue = q
		d.mu.Unlock()
		_ = d.policiesNaming(ctx, pc, func(p client.Object) {
			q.Add(Key{GroupVersionKind: policyGVK(p), Namespace: p.GetNamespace(), Name: p.GetName(), Policy: true})
		})
	}
	return handler.TypedFuncs[client.Object, Key]{
		CreateFunc: func(ctx context.Context, e event.TypedCreateEvent[client.Object], q workqueue.TypedRateLimitingInterface[Key]) {
			enqueue(ctx, e.Object, q)
		},
		UpdateFunc: func(ctx context.Context, e event.TypedUpdateEvent[client.Object], q workqueue.TypedRateLimitingInterface[Key]) {
			o, ok1 := e.ObjectOld.(*schedulingv1.PriorityClass)
			n, ok2 := e.ObjectNew.(*schedulingv1.PriorityClass)
			if !ok1 || !ok2 || o.Value != n.Value {
				enqueue(ctx, e.ObjectNew, q)
			}
		},
		DeleteFunc: func(ctx context.Context, e event.TypedDeleteEvent[client.Object], q workqueue.TypedRateLimitingInterface[Key]) {
			enqueue(ctx, e.Object, q)
		},
	}
}
