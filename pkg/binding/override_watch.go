package binding

import (
	"context"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/federator-dev/federator/internal/bindingview"
)

// ResourceKindIndex indexes bindings by their template's
// "<apiVersion>/<kind>", what an override policy's resourceSelectors name
// first.
const ResourceKindIndex = "binding.federator.dev/resource-kind"

func resourceKind(o client.Object) []string {
	if s := bindingview.Of(o).Spec; s != nil {
		return []string{s.Resource.APIVersion + "/" + s.Resource.Kind}
	}
	return nil
}

// bindingsOverriddenBy enqueues the bindings whose templates an override
// policy may select, before and after a change, so adding, changing or
// deleting an override re-renders their Works at once (deleting one
// re-renders without it). Selection is by kind, namespace and name through
// ResourceKindIndex; a label selector is not evaluated here (the binding
// does not carry its template's labels), so a few bindings more than needed
// are rendered again, and stay unchanged.
func bindingsOverriddenBy(c client.Reader, clusterScoped bool) handler.EventHandler {
	enqueue := func(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request], objs ...client.Object) {
		for _, o := range objs {
			for _, req := range overriddenBindings(ctx, c, clusterScoped, o) {
				q.Add(req)
			}
		}
	}
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(ctx, q, e.Object)
		},
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			if e.ObjectOld.GetGeneration() != e.ObjectNew.GetGeneration() {
				enqueue(ctx, q, e.ObjectOld, e.ObjectNew)
			}
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(ctx, q, e.Object)
		},
	}
}

// overriddenBindings lists the bindings of one scope whose templates the
// override policy p may select: an OverridePolicy selects in its own
// namespace only (so never a ClusterResourceBinding's cluster-scoped
// template), a ClusterOverridePolicy anywhere; no resourceSelectors select
// everything in that scope.
func overriddenBindings(ctx context.Context, c client.Reader, clusterScoped bool, p client.Object) []reconcile.Request {
	var spec policyv1alpha1.OverrideSpec
	namespace := ""
	switch p := p.(type) {
	case *policyv1alpha1.OverridePolicy:
		if clusterScoped {
			return nil
		}
		spec, namespace = p.Spec, p.Namespace
	case *policyv1alpha1.ClusterOverridePolicy:
		spec = p.Spec
	default:
		return nil
	}
	list := func(opts ...client.ListOption) []client.Object {
		if namespace != "" && !clusterScoped {
			opts = append(opts, client.InNamespace(namespace))
		}
		l := bindingList(clusterScoped)
		if err := c.List(ctx, l, opts...); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "listing the bindings an override policy selects", "policy", client.ObjectKeyFromObject(p))
			return nil
		}
		return items(l)
	}
	var reqs []reconcile.Request
	seen := map[client.ObjectKey]bool{}
	add := func(objs []client.Object, name, selectorNamespace string) {
		for _, o := range objs {
			s := bindingview.Of(o).Spec
			if name != "" && s.Resource.Name != name || selectorNamespace != "" && s.Resource.Namespace != selectorNamespace {
				continue
			}
			if key := client.ObjectKeyFromObject(o); !seen[key] {
				seen[key] = true
				reqs = append(reqs, reconcile.Request{NamespacedName: key})
			}
		}
	}
	if len(spec.ResourceSelectors) == 0 {
		add(list(), "", "")
		return reqs
	}
	for _, rs := range spec.ResourceSelectors {
		add(list(client.MatchingFields{ResourceKindIndex: rs.APIVersion + "/" + rs.Kind}), rs.Name, rs.Namespace)
	}
	return reqs
}

// items are the bindings a ResourceBindingList or ClusterResourceBindingList holds.
func items(list client.ObjectList) []client.Object {
	objs, _ := meta.ExtractList(list)
	out := make([]client.Object, 0, len(objs))
	for _, o := range objs {
		if b, ok := o.(client.Object); ok {
			out = append(out, b)
		}
	}
	return out
}
