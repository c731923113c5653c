// Package holdqueue owns the order in which federator's controllers take
// their work: a change of what holds a cluster (a suspension set or lifted,
// a gate that opens or closes, a rollout that releases a cluster) goes
// before bulk propagation, so an incident freeze does not wait behind
// hundreds of ordinary template changes. The detector and the binding
// controller run controller-runtime's priority queue (UsePriorityQueue);
// their event handlers add hold changes at Hold priority through this
// package. It also owns which hold changes are taken in and not yet
// written (Deciders), which the dispatchers ask before writing a release.
package holdqueue

import (
	"context"

	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
)

const (
	// Hold is the priority of a change of what holds a cluster: above
	// everything else (ordinary changes are 0).
	Hold = 100
	// Low is controller-runtime's priority for the initial list and
	// resyncs (handler.LowPriority): nothing changed, nothing waits.
	Low = handler.LowPriority
)

// Add adds items to q at priority p where q is a priority queue, and
// plainly otherwise (a controller built without one, as in unit tests).
func Add[T comparable](q workqueue.TypedRateLimitingInterface[T], p int, items ...T) {
	if pq, ok := q.(priorityqueue.PriorityQueue[T]); ok {
		pq.AddWithOpts(priorityqueue.AddOpts{Priority: ptr.To(p)}, items...)
		return
	}
	for _, item := range items {
		q.Add(item)
	}
}

// Handler enqueues what mapFn returns for an object: at Hold priority for
// an update that urgent says changes what holds (every event when urgent is
// nil), at Low priority for objects of the initial list, and at the
// ordinary priority otherwise.
func Handler[T comparable](mapFn func(context.Context, client.Object) []T, urgent func(old, new client.Object) bool) handler.TypedEventHandler[client.Object, T] {
	add := func(ctx context.Context, q workqueue.TypedRateLimitingInterface[T], o client.Object, p int) {
		Add(q, p, mapFn(ctx, o)...)
	}
	ordinary := 0
	if urgent == nil {
		ordinary = Hold
	}
	return handler.TypedFuncs[client.Object, T]{
		CreateFunc: func(ctx context.Context, e event.TypedCreateEvent[client.Object], q workqueue.TypedRateLimitingInterface[T]) {
			p := ordinary
			if e.IsInInitialList {
				p = Low
			}
			add(ctx, q, e.Object, p)
		},
		UpdateFunc: func(ctx context.Context, e event.TypedUpdateEvent[client.Object], q workqueue.TypedRateLimitingInterface[T]) {
			p := ordinary
			if urgent != nil && urgent(e.ObjectOld, e.ObjectNew) {
				p = Hold
			}
			add(ctx, q, e.ObjectNew, p)
		},
		DeleteFunc: func(ctx context.Context, e event.TypedDeleteEvent[client.Object], q workqueue.TypedRateLimitingInterface[T]) {
			add(ctx, q, e.Object, ordinary)
		},
		GenericFunc: func(ctx context.Context, e event.TypedGenericEvent[client.Object], q workqueue.TypedRateLimitingInterface[T]) {
			add(ctx, q, e.Object, ordinary)
		},
	}
}
