package dispatch

import (
	"context"
	"errors"
	"fmt"
	"sync"

	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	workkeys "github.com/federator-dev/federator/apis/work"
)

// memberWatch watches, in one member, the kinds its Works carry, limited to
// objects the hub manages, and requeues the owning Work on every change: a
// member's status reaches the hub as it changes (suspended or not), and an
// object deleted in the member is put back. The watch follows the member's
// registration: it is rebuilt when the member's endpoint or credentials
// change, and stopped when the member leaves.
type memberWatch struct {
	mgr        ctrl.Manager
	members    *Members
	cluster    string
	controller controller.Controller
	// newCache builds the member's cache; nil means cache.New.
	newCache func(*rest.Config, cache.Options) (cache.Cache, error)

	mu       sync.Mutex
	cache    cache.Cache
	identity string        // endpoint + credentials the cache was built from
	stopped  chan struct{} // closed to stop the cache
	watched  map[schema.GroupVersionKind]bool
}

// ensure makes sure objects of each of gvks in the member are watched, by
// a cache built from cfg.
func (w *memberWatch) ensure(ctx context.Context, cfg *rest.Config, gvks []schema.GroupVersionKind) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.controller == nil {
		return fmt.Errorf("cluster %s: the Work controller is still being set up", w.cluster)
	}
	if id := identity(cfg); w.cache != nil && w.identity != id {
		// Re-registered elsewhere or with new credentials: watch every kind
		// watched so far again, from a cache built for the new registration.
		for gvk := range w.watched {
			gvks = append(gvks, gvk)
		}
		w.stopLocked()
	}
	var errs []error
	for _, gvk := range gvks {
		if w.watched[gvk] {
			continue
		}
		if w.cache == nil {
			if err := w.startCache(ctx, cfg); err != nil {
				return err
			}
		}
		obj := &unstructured.Unstructured{}
		obj.SetGroupVersionKind(gvk)
		if err := w.controller.Watch(source.Kind(w.cache, client.Object(obj),
			handler.EnqueueRequestsFromMapFunc(workOfMemberObject), notOwnApply{})); err != nil {
			errs = append(errs, fmt.Errorf("watch %s in cluster %s: %w", gvk, w.cluster, err))
			continue
		}
		w.watched[gvk] = true
	}
	return errors.Join(errs...)
}

// stop ends the member's watches, for a member that left the federation.
func (w *memberWatch) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopLocked()
}

func (w *memberWatch) stopLocked() {
	if w.stopped != nil {
		close(w.stopped)
	}
	w.cache, w.stopped, w.identity = nil, nil, ""
	w.watched = map[schema.GroupVersionKind]bool{}
}

func (w *memberWatch) setController(c controller.Controller) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.controller = c
}

func (w *memberWatch) startCache(ctx context.Context, cfg *rest.Config) error {
	member, err := w.members.Client(ctx, w.cluster)
	if err != nil {
		return err
	}
	id := identity(cfg)
	cfg = w.members.limited(cfg)
	cfg.Timeout = 0 // watches outlive any request timeout
	newCache := w.newCache
	if newCache == nil {
		newCache = cache.New
	}
	c, err := newCache(cfg, cache.Options{
		Mapper:               member.RESTMapper(),
		DefaultLabelSelector: labels.SelectorFromSet(labels.Set{workkeys.ManagedLabel: workkeys.ManagedLabelValue}),
	})
	if err != nil {
		return fmt.Errorf("cache for cluster %s: %w", w.cluster, err)
	}
	stopped := make(chan struct{})
	if err := w.mgr.Add(stoppableCache{Cache: c, stopped: stopped}); err != nil {
		return err
	}
	w.cache, w.stopped, w.identity = c, stopped, id
	return nil
}

// stoppableCache runs a cache until the manager stops or stopped is closed.
type stoppableCache struct {
	cache.Cache
	stopped <-chan struct{}
}

func (s stoppableCache) Start(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-s.stopped:
			cancel()
		case <-ctx.Done():
		}
	}()
	return s.Cache.Start(ctx)
}

func workOfMemberObject(_ context.Context, o client.Object) []reconcile.Request {
	a := o.GetAnnotations()
	if a[workv1alpha2.WorkNameAnnotation] == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{
		Namespace: a[workv1alpha2.WorkNamespaceAnnotation], Name: a[workv1alpha2.WorkNameAnnotation]}}}
}

// notOwnApply drops the member events federator's own writes cause: the
// create of an object that has no status yet, or an update that stamps a
// new applied hash and leaves the status as it was. The reconcile that
// wrote already knows the result; requeueing it would only race the hub
// cache. Status changes, edits by others and deletions pass, and so does
// an object that arrives with a status: the watch started, or relisted
// after the member was unreachable, and what changed meanwhile reaches the
// hub only through this event.
type notOwnApply struct{ predicate.Funcs }

func (notOwnApply) Create(e event.CreateEvent) bool {
	return len(statusOf(e.Object)) > 0
}

func (notOwnApply) Update(e event.UpdateEvent) bool {
	return e.ObjectOld.GetAnnotations()[workkeys.AppliedHashAnnotation] ==
		e.ObjectNew.GetAnnotations()[workkeys.AppliedHashAnnotation] ||
		!equality.Semantic.DeepEqual(statusOf(e.ObjectOld), statusOf(e.ObjectNew))
}

// statusOf is a member object's status; nil when it has none or is not
// unstructured (the member caches hold unstructured objects only).
func statusOf(o client.Object) map[string]any {
	u, ok := o.(*unstructured.Unstructured)
	if !ok {
		return nil
	}
	status, _, _ := unstructured.NestedMap(u.Object, "status")
	return status
}
