package binding

import (
	"context"
	"slices"
	"time"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	gatingv1alpha1 "github.com/federator-dev/federator/apis/gating/v1alpha1"
	rolloutsv1alpha1 "github.com/federator-dev/federator/apis/rollouts/v1alpha1"
	"github.com/federator-dev/federator/internal/bindingview"
	"github.com/federator-dev/federator/internal/conditions"
	"github.com/federator-dev/federator/internal/holdqueue"
	"github.com/federator-dev/federator/pkg/hold"
	"github.com/federator-dev/federator/pkg/placement"
)

// Which bindings an event on another object concerns (a Cluster, a
// policy, a Rollout, a Gate; a Work's is bindingview.OfWork), and which
// updates matter at all.

func bindingList(clusterScoped bool) client.ObjectList {
	if clusterScoped {
		return &workv1alpha2.ClusterResourceBindingList{}
	}
	return &workv1alpha2.ResourceBindingList{}
}

func requests(list client.ObjectList) []reconcile.Request {
	var reqs []reconcile.Request
	for _, b := range items(list) {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(b)})
	}
	return reqs
}

func allBindings(c client.Reader, clusterScoped bool) handler.MapFunc {
	return func(ctx context.Context, _ client.Object) []reconcile.Request {
		list := bindingList(clusterScoped)
		if err := c.List(ctx, list); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "listing every binding to decide again")
			return nil
		}
		return requests(list)
	}
}

// bindingsAffectedByCluster enqueues, for a Cluster that joins, leaves,
// changes its spec or the APIs it serves, every binding; for a Cluster
// relabelled, the bindings whose placement selects by labels; for a
// Cluster that lists other gates, the bindings that target it. Other
// changes (an annotation of someone else's, the status the cluster status
// controller keeps current) concern no binding.
func bindingsAffectedByCluster(c client.Reader, clusterScoped bool) handler.EventHandler {
	all := allBindings(c, clusterScoped)
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			addAll(q, all(ctx, e.Object))
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			addAll(q, all(ctx, e.Object))
		},
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			o, n := e.ObjectOld, e.ObjectNew
			if o.GetGeneration() != n.GetGeneration() || n.GetDeletionTimestamp() != nil ||
				(apiEnablementsChanged{}).Update(e) {
				addAll(q, all(ctx, n))
				return
			}
			labels := !equality.Semantic.DeepEqual(o.GetLabels(), n.GetLabels())
			gates := o.GetAnnotations()[gatingv1alpha1.GatesAnnotation] != n.GetAnnotations()[gatingv1alpha1.GatesAnnotation]
			if !labels && !gates {
				return
			}
			list := bindingList(clusterScoped)
			if err := c.List(ctx, list); err != nil {
				ctrl.LoggerFrom(ctx).Error(err, "listing bindings to re-place after a Cluster change", "cluster", n.GetName())
				return
			}
			var overridden func(namespace string) bool
			if labels {
				overridden = overridesByLabels(ctx, c)
			}
			for _, b := range items(list) {
				v := bindingview.Of(b)
				req := reconcile.Request{NamespacedName: client.ObjectKeyFromObject(b)}
				targets := slices.ContainsFunc(v.Spec.Clusters, func(t workv1alpha2.TargetCluster) bool { return t.Name == n.GetName() })
				switch {
				case gates && targets:
					// The gates a Cluster waits for are holds.
					holdqueue.Add(q, holdqueue.Hold, req)
				case labels && (placement.SelectsByLabels(v.Spec.Placement) || targets && overridden(b.GetNamespace())):
					// Its placement may select by them, and the overrides
					// of what it sends the Cluster (a rule's
					// targetCluster.labelSelector) too.
					q.Add(req)
				}
			}
		},
	}
}

// overridesByLabels says, for a namespace, whether an OverridePolicy
// there or any ClusterOverridePolicy selects clusters by their labels:
// only then can a relabel change what a binding there sends a Cluster.
// Fail safe: a list that fails counts as one that does.
func overridesByLabels(ctx context.Context, c client.Reader) func(namespace string) bool {
	byLabels := func(rules []policyv1alpha1.RuleWithCluster, target *policyv1alpha1.ClusterAffinity) bool {
		if target != nil && target.LabelSelector != nil {
			return true
		}
		return slices.ContainsFunc(rules, func(r policyv1alpha1.RuleWithCluster) bool {
			return r.TargetCluster != nil && r.TargetCluster.LabelSelector != nil
		})
	}
	cops := &policyv1alpha1.ClusterOverridePolicyList{}
	ops := &policyv1alpha1.OverridePolicyList{}
	if c.List(ctx, cops) != nil || c.List(ctx, ops) != nil {
		return func(string) bool { return true }
	}
	for _, p := range cops.Items {
		//lint:ignore SA1019 Karmada still applies the deprecated field, so a relabel can change what it selects
		if byLabels(p.Spec.OverrideRules, p.Spec.TargetCluster) {
			return func(string) bool { return true }
		}
	}
	namespaces := map[string]bool{}
	for _, p := range ops.Items {
		//lint:ignore SA1019 Karmada still applies the deprecated field, so a relabel can change what it selects
		if byLabels(p.Spec.OverrideRules, p.Spec.TargetCluster) {
			namespaces[p.Namespace] = true
		}
	}
	return func(ns string) bool { return namespaces[ns] }
}

func addAll(q workqueue.TypedRateLimitingInterface[reconcile.Request], reqs []reconcile.Request) {
	for _, r := range reqs {
		q.Add(r)
	}
}

// bindingsOfPolicy maps a policy to the bindings it claims, by PolicyIndex.
func bindingsOfPolicy(c client.Reader, clusterScoped bool, kind string) handler.MapFunc {
	return func(ctx context.Context, p client.Object) []reconcile.Request {
		list := bindingList(clusterScoped)
		if err := c.List(ctx, list, client.MatchingFields{PolicyIndex: policyIndexValue(kind, p.GetNamespace(), p.GetName())}); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "listing the bindings of a policy", "policy", client.ObjectKeyFromObject(p))
			return nil
		}
		return requests(list)
	}
}

// bindingsOfRollout maps a Rollout to the bindings of the policy it
// governs: what it releases (its status) is their RolloutStage hold.
func bindingsOfRollout(c client.Reader, clusterScoped bool, policyKind string) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []reconcile.Request {
		var name string
		switch r := o.(type) {
		case *rolloutsv1alpha1.Rollout:
			name = r.Spec.PolicyRef.Name
		case *rolloutsv1alpha1.ClusterRollout:
			name = r.Spec.PolicyRef.Name
		}
		list := bindingList(clusterScoped)
		if err := c.List(ctx, list, client.MatchingFields{PolicyIndex: policyIndexValue(policyKind, o.GetNamespace(), name)}); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "listing the bindings of a rollout's policy", "rollout", client.ObjectKeyFromObject(o))
			return nil
		}
		return requests(list)
	}
}

// bindingsWaitingFor maps a Gate to the bindings that wait for it: those
// whose template lists it (as waiters recorded them), those of the policies
// that list it, and every binding when a Cluster lists it.
func bindingsWaitingFor(c client.Reader, clusterScoped bool, waiters *gateWaiters) handler.MapFunc {
	return func(ctx context.Context, g client.Object) []reconcile.Request {
		ref := g.GetNamespace() + "/" + g.GetName()
		lists := func(o client.Object, namespace string) bool {
			v, ok := o.GetAnnotations()[gatingv1alpha1.GatesAnnotation]
			if !ok {
				return false
			}
			for _, gate := range hold.ParseGates(v, namespace, "") {
				if gate.Ref == ref {
					return true
				}
			}
			return false
		}
		clusters := &clusterv1alpha1.ClusterList{}
		if err := c.List(ctx, clusters); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "listing Clusters that may wait for a gate", "gate", ref)
			return nil
		}
		for i := range clusters.Items {
			if lists(&clusters.Items[i], "") {
				return allBindings(c, clusterScoped)(ctx, g)
			}
		}
		reqs := waiters.of(ref)
		pps := &policyv1alpha1.PropagationPolicyList{}
		cpps := &policyv1alpha1.ClusterPropagationPolicyList{}
		if err := c.List(ctx, pps); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "listing policies that may wait for a gate", "gate", ref)
		}
		if err := c.List(ctx, cpps); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "listing policies that may wait for a gate", "gate", ref)
		}
		for i := range pps.Items {
			if lists(&pps.Items[i], pps.Items[i].Namespace) {
				reqs = append(reqs, bindingsOfPolicy(c, clusterScoped, "PropagationPolicy")(ctx, &pps.Items[i])...)
			}
		}
		for i := range cpps.Items {
			if lists(&cpps.Items[i], "") {
				reqs = append(reqs, bindingsOfPolicy(c, clusterScoped, "ClusterPropagationPolicy")(ctx, &cpps.Items[i])...)
			}
		}
		return reqs
	}
}

// gateOpenedChanged passes a Gate that appears, goes, or whose Opened
// condition changes: what its waiters' holds depend on.
type gateOpenedChanged struct{ predicate.Funcs }

func (gateOpenedChanged) Update(e event.UpdateEvent) bool {
	o, ok1 := e.ObjectOld.(*gatingv1alpha1.Gate)
	n, ok2 := e.ObjectNew.(*gatingv1alpha1.Gate)
	if !ok1 || !ok2 {
		return true
	}
	return conditions.Changed(o.Status.Conditions, n.Status.Conditions, gatingv1alpha1.ConditionOpened, conditions.StatusAndMessage)
}

// apiEnablementsChanged passes a Cluster whose status says it serves other
// APIs, or says so with another certainty (CompleteAPIEnablements):
// placement skips clusters that do not serve a template's kind, so a CRD
// installed in a member places the bindings that waited for it.
type apiEnablementsChanged struct{ predicate.Funcs }

func (apiEnablementsChanged) Update(e event.UpdateEvent) bool {
	o, ok1 := e.ObjectOld.(*clusterv1alpha1.Cluster)
	n, ok2 := e.ObjectNew.(*clusterv1alpha1.Cluster)
	if !ok1 || !ok2 {
		return true
	}
	return conditions.Changed(o.Status.Conditions, n.Status.Conditions, clusterv1alpha1.ClusterConditionCompleteAPIEnablements, conditions.StatusOnly) ||
		!equality.Semantic.DeepEqual(o.Status.APIEnablements, n.Status.APIEnablements)
}

// workIntentChanged passes a Work deleted, and a Work whose spec or
// annotations changed (not its status): its binding compares it with what
// it wants and writes it again where they differ. That includes the
// binding controller's own writes, on purpose: a pass that compared with a
// cached Work one write behind may have left a Work as it should not be,
// and the event of that write, once the cache has it, brings the pass
// that sees it. Creates are the binding's own and carry what it wanted.
type workIntentChanged struct{ predicate.Funcs }

func (workIntentChanged) Create(event.CreateEvent) bool   { return false }
func (workIntentChanged) Generic(event.GenericEvent) bool { return false }

func (workIntentChanged) Update(e event.UpdateEvent) bool {
	return e.ObjectOld.GetGeneration() != e.ObjectNew.GetGeneration() ||
		!equality.Semantic.DeepEqual(e.ObjectOld.GetAnnotations(), e.ObjectNew.GetAnnotations()) ||
		!equality.Semantic.DeepEqual(e.ObjectOld.GetLabels(), e.ObjectNew.GetLabels())
}

// workBatch gathers the events of one binding's Works (written at once)
// into one pass of the binding controller.
const workBatch = 100 * time.Millisecond
