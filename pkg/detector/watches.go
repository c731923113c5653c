package detector

import (
	"context"
	"fmt"
	"slices"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/source"

	policykeys "github.com/federator-dev/federator/apis/policy"
	"github.com/federator-dev/federator/internal/holdqueue"
	"github.com/federator-dev/federator/pkg/hold"
)

// What reaches the detector's queue: templates of every kind a policy selects,
// and policies and clusters fanned out to the templates they affect.

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
		holdqueue.Handler(func(_ context.Context, o client.Object) []Key {
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
			p = holdqueue.Hold
		}
		d.mu.Lock()
		d.queue = q
		if replaced != nil {
			d.earlier[key] = append(d.earlier[key], replaced)
		}
		if p == holdqueue.Hold {
			d.suspensionChanged[key] = true
		}
		d.mu.Unlock()
		holdqueue.Add(q, p, key)
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
		p = holdqueue.Hold
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
		if p == holdqueue.Hold {
			d.suspensionChanged[key] = true
		}
		d.mu.Unlock()
		return err
	}
	lazy := len(policies) > 0 && policies[0] == current && lazyActivation(current)
	for _, k := range keys {
		k.ByLazyPolicy = lazy
		holdqueue.Add(queue, p, k)
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
