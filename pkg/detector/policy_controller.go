package detector

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	"github.com/karmada-io/karmada/pkg/util/validation"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	policykeys "github.com/federator-dev/federator/apis/policy"
	"github.com/federator-dev/federator/internal/conditions"
	"github.com/federator-dev/federator/internal/retry"
	"github.com/federator-dev/federator/pkg/hold"
	"github.com/federator-dev/federator/pkg/placement"
)

// policyReconciler validates policies, reports what a person must fix (the
// ClustersKnown condition on the policy, and Events), and makes the
// detector watch the kinds policies select.
type policyReconciler struct{ d *Reconciler }

func (p *policyReconciler) forKind(obj client.Object) reconcile.Reconciler {
	_, clusterScoped := obj.(*policyv1alpha1.ClusterPropagationPolicy)
	return reconcile.Func(func(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
		var policy client.Object = &policyv1alpha1.PropagationPolicy{}
		if clusterScoped {
			policy = &policyv1alpha1.ClusterPropagationPolicy{}
		}
		if err := p.d.client.Get(ctx, req.NamespacedName, policy); err != nil {
			return ctrl.Result{}, client.IgnoreNotFound(err)
		}
		stored, err := p.d.stored(ctx, policy)
		if err != nil {
			return retry.Quietly(ctrl.Result{}, err)
		}
		if !policy.GetDeletionTimestamp().IsZero() {
			return retry.Quietly(ctrl.Result{}, p.letGo(ctx, policy, stored))
		}
		// The finalizer is added beside the check, not before it: a policy
		// whose finalizer cannot be added yet (a conflict) is still
		// checked, and the kinds it selects watched.
		held := p.holdOn(ctx, policy)
		result, err := p.check(ctx, policy, stored, *policykeys.FoldAliases(policykeys.SpecOf(policy), stored))
		return retry.Quietly(result, errors.Join(held, err))
	})
}

// clusterChanges re-checks every policy of one kind when a Cluster joins or
// leaves: the names a policy lists may now be known, or no longer.
func (p *policyReconciler) clusterChanges(clusterScoped bool) handler.EventHandler {
	return handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, _ client.Object) []reconcile.Request {
		var list client.ObjectList = &policyv1alpha1.PropagationPolicyList{}
		if clusterScoped {
			list = &policyv1alpha1.ClusterPropagationPolicyList{}
		}
		if err := p.d.client.List(ctx, list); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "listing policies to re-check their cluster names")
			return nil
		}
		var requests []reconcile.Request
		for _, o := range policyItems(list) {
			requests = append(requests, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(o)})
		}
		return requests
	})
}

func policyItems(list client.ObjectList) []client.Object {
	var out []client.Object
	switch l := list.(type) {
	case *policyv1alpha1.PropagationPolicyList:
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
	case *policyv1alpha1.ClusterPropagationPolicyList:
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
	}
	return out
}

// priorityClassChanges re-checks the policies of one kind that name a
// PriorityClass when it comes, goes or changes (SchedulePriorityResolved).
func (p *policyReconciler) priorityClassChanges(clusterScoped bool) handler.EventHandler {
	return handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, pc client.Object) []reconcile.Request {
		var requests []reconcile.Request
		err := p.d.policiesNaming(ctx, pc, func(o client.Object) {
			if _, cpp := o.(*policyv1alpha1.ClusterPropagationPolicy); cpp == clusterScoped {
				requests = append(requests, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(o)})
			}
		})
		if err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "listing policies that name a PriorityClass", "priorityClass", pc.GetName())
		}
		return requests
	})
}

func (p *policyReconciler) check(ctx context.Context, policy client.Object, stored *unstructured.Unstructured, spec policyv1alpha1.PropagationSpec) (ctrl.Result, error) {
	if errs := validation.ValidatePropagationSpec(spec); len(errs) > 0 {
		p.d.recorder.Eventf(policy, corev1.EventTypeWarning, policykeys.EventReasonInvalidPolicy,
			"%v; nothing propagated by this policy changes until it is fixed", errs.ToAggregate())
		return ctrl.Result{}, nil
	}
	// The kinds first: templates propagate whether or not the policy's
	// status can be written (a Karmada hub's policy CRDs may serve none).
	var retryKinds bool
	for _, rs := range spec.ResourceSelectors {
		gvk := schema.FromAPIVersionAndKind(rs.APIVersion, rs.Kind)
		if err := p.d.watch(gvk); err != nil {
			p.d.recorder.Eventf(policy, corev1.EventTypeWarning, policykeys.EventReasonUnknownResourceKind,
				"spec.resourceSelectors: %v; retrying until the kind is served", err)
			retryKinds = true
		}
	}
	clusters := &clusterv1alpha1.ClusterList{}
	if err := p.d.client.List(ctx, clusters); err != nil {
		return ctrl.Result{}, err
	}
	var unknownPlaced []string
	if result, err := placement.Place(spec.Placement.DeepCopy(), clusters.Items, 0); err != nil {
		p.d.recorder.Eventf(policy, corev1.EventTypeWarning, policykeys.EventReasonInvalidPolicy, "%v", err)
	} else {
		unknownPlaced = result.Unknown
	}
	known := make([]string, 0, len(clusters.Items))
	for _, c := range clusters.Items {
		known = append(known, c.Name)
	}
	class, err := p.d.priorityClass(ctx, &spec)
	if err != nil {
		return ctrl.Result{}, err
	}
	conds := []metav1.Condition{ClustersKnown(spec, policy.GetAnnotations(), known, unknownPlaced)}
	priority, setsPriority := SchedulePriorityResolved(&spec, class)
	if setsPriority {
		conds = append(conds, priority)
	}
	if err := p.recordConditions(ctx, policy, stored, conds, !setsPriority); err != nil {
		return ctrl.Result{}, err
	}
	if retryKinds {
		return ctrl.Result{RequeueAfter: 15 * time.Second}, nil
	}
	return ctrl.Result{}, nil
}

// ClustersKnown is the policy's ClustersKnown condition: False when its
// suspension list or a suspended.propagation.federator.dev/<cluster>
// annotation among annotations names a cluster that is not registered
// (every cluster of its bindings is then held, pkg/hold's fail-safe rule)
// or its placement names one in unknownPlaced; True otherwise. known lists
// the registered Clusters.
func ClustersKnown(spec policyv1alpha1.PropagationSpec, annotations map[string]string, known, unknownPlaced []string) metav1.Condition {
	unknownSuspended := hold.UnknownSuspendedClusters(spec.Suspension, known)
	var problems []string
	reason := ""
	if len(unknownSuspended) > 0 {
		reason = policykeys.ReasonUnknownSuspendedCluster
		problems = append(problems, fmt.Sprintf("spec.suspension.dispatchingOnClusters.clusterNames: %s name no registered Cluster; "+
			"dispatching to every cluster of this policy's bindings is held until the name is fixed or such a Cluster joins", hold.QuotedNames(unknownSuspended)))
	}
	if keys := hold.UnknownClusterAnnotations(annotations, known); len(keys) > 0 {
		reason = policykeys.ReasonUnknownSuspendedCluster
		problems = append(problems, fmt.Sprintf("metadata.annotations: %s name no registered Cluster; "+
			"dispatching to every cluster of this policy's bindings is held until the annotation is fixed or removed, or such a Cluster joins", hold.QuotedNames(keys)))
	}
	if len(unknownPlaced) > 0 {
		if reason == "" {
			reason = policykeys.ReasonUnknownPlacementCluster
		}
		problems = append(problems, fmt.Sprintf("spec.placement.clusterAffinity.clusterNames: %s name no registered Cluster; "+
			"they get nothing until such a Cluster joins", hold.QuotedNames(unknownPlaced)))
	}
	if reason == "" {
		return metav1.Condition{Type: policykeys.ConditionClustersKnown, Status: metav1.ConditionTrue,
			Reason: policykeys.ReasonClustersKnown, Message: "Every cluster the policy names is a registered Cluster."}
	}
	return metav1.Condition{Type: policykeys.ConditionClustersKnown, Status: metav1.ConditionFalse,
		Reason: reason, Message: strings.Join(problems, "; also ")}
}

// recordConditions writes conds into the policy's status.conditions when
// they changed (without SchedulePriorityResolved when dropPriority: the
// policy no longer sets a priority), and tells of each change to False with
// a Warning Event once the write is stored (so each transition is told
// once). Where the hub serves no policy status (Options.NoPolicyStatus) it
// writes nothing and tells of every condition that is False.
func (p *policyReconciler) recordConditions(ctx context.Context, policy client.Object, stored *unstructured.Unstructured,
	want []metav1.Condition, dropPriority bool) error {
	if p.d.noPolicyStatus {
		// Nowhere to record a transition: each check that finds a problem
		// tells of it (checks run when the policy, the Clusters or a
		// PriorityClass change, not on a timer).
		for _, cond := range want {
			if cond.Status == metav1.ConditionFalse {
				p.d.recorder.Event(policy, corev1.EventTypeWarning, conditionEventReason(cond), cond.Message)
			}
		}
		return nil
	}
	conds := conditions.Of(stored)
	var turnedFalse []metav1.Condition
	for _, cond := range want {
		if conditions.Set(&conds, stored.GetGeneration(), cond) && cond.Status == metav1.ConditionFalse {
			turnedFalse = append(turnedFalse, cond)
		}
	}
	if dropPriority {
		meta.RemoveStatusCondition(&conds, policykeys.ConditionSchedulePriorityResolved)
	}
	after := stored.DeepCopy()
	if err := conditions.SetOn(after, conds); err != nil {
		return err
	}
	// Locked: the Event below tells of the transition this write stores.
	if _, err := conditions.PatchStatus(ctx, p.d.client, stored, after, true); err != nil {
		return err
	}
	for _, cond := range turnedFalse {
		p.d.recorder.Event(policy, corev1.EventTypeWarning, conditionEventReason(cond), cond.Message)
	}
	return nil
}

// conditionEventReason is the reason of the Warning Event that tells of a
// policy condition turned False: UnknownCluster for ClustersKnown, the
// condition's reason otherwise.
func conditionEventReason(cond metav1.Condition) string {
	if cond.Type == policykeys.ConditionClustersKnown {
		return policykeys.EventReasonUnknownCluster
	}
	return cond.Reason
}
