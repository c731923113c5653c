package detector

import (
	"context"
	"time"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	"github.com/karmada-io/karmada/pkg/util/validation"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	policykeys "github.com/federator-dev/federator/apis/policy"
	"github.com/federator-dev/federator/pkg/placement"
)

// policyReconciler validates policies, reports what a person must fix as
// Events on the policy, and makes the detector watch the kinds it selects.
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
		return p.check(ctx, policy, *policykeys.SpecOf(policy))
	})
}

func (p *policyReconciler) check(ctx context.Context, policy client.Object, spec policyv1alpha1.PropagationSpec) (ctrl.Result, error) {
	if errs := validation.ValidatePropagationSpec(spec); len(errs) > 0 {
		p.d.recorder.Eventf(policy, corev1.EventTypeWarning, policykeys.EventReasonInvalidPolicy,
			"%v; nothing propagated by this policy changes until it is fixed", errs.ToAggregate())
		return ctrl.Result{}, nil
	}
	clusters := &clusterv1alpha1.ClusterList{}
	if err := p.d.client.List(ctx, clusters); err != nil {
		return ctrl.Result{}, err
	}
	if result, err := placement.Place(spec.Placement.DeepCopy(), clusters.Items, 0); err != nil {
		p.d.recorder.Eventf(policy, corev1.EventTypeWarning, policykeys.EventReasonInvalidPolicy, "%v", err)
	} else if len(result.Unknown) > 0 {
		p.d.recorder.Eventf(policy, corev1.EventTypeWarning, policykeys.EventReasonUnknownCluster,
			"spec.placement.clusterAffinity.clusterNames: %v name no registered Cluster; they get nothing until such a Cluster joins", result.Unknown)
	}
	if spec.Suspension != nil && spec.Suspension.DispatchingOnClusters != nil {
		known := map[string]bool{}
		for _, c := range clusters.Items {
			known[c.Name] = true
		}
		var unknown []string
		for _, n := range spec.Suspension.DispatchingOnClusters.ClusterNames {
			if !known[n] {
				unknown = append(unknown, n)
			}
		}
		if len(unknown) > 0 {
			p.d.recorder.Eventf(policy, corev1.EventTypeWarning, policykeys.EventReasonUnknownCluster,
				"spec.suspension.dispatchingOnClusters.clusterNames: %v name no registered Cluster", unknown)
		}
	}
	var retry bool
	for _, rs := range spec.ResourceSelectors {
		gvk := schema.FromAPIVersionAndKind(rs.APIVersion, rs.Kind)
		if err := p.d.watch(gvk); err != nil {
			p.d.recorder.Eventf(policy, corev1.EventTypeWarning, policykeys.EventReasonUnknownResourceKind,
				"spec.resourceSelectors: %v; retrying until the kind is served", err)
			retry = true
		}
	}
	if retry {
		return ctrl.Result{RequeueAfter: 15 * time.Second}, nil
	}
	return ctrl.Result{}, nil
}
