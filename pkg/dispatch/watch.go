package dispatch

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

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
// change, and stopped for good when the member leaves (a member that
// rejoins gets a new one).
type memberWatch struct {
	members *Members
	cluster string
	// controller requeues the Works; set before it starts.
	controller controller.Controller
	// newCache builds the member's cache; nil means cache.New.
	newCache func(*rest.Config, cache.Options) (cache.Cache, error)

	mu       sync.Mutex
	ctx      context.Context // the member's time in the federation
	stopped  bool
	cache    cache.Cache
	identity string             // endpoint + credentials the cache was built from
	cancel   context.CancelFunc // stops the cache
	watched  map[schema.GroupVersionKind]bool
	running  sync.WaitGroup // caches still running
	// failingSince is when ensuring the watch began to fail, zero while it
	// works; failing is the last error, so only a new one is logged.
	failingSince time.Time
	failing      string
}

// Watch retries back off from watchRetry up to maxWatchRetry.
const (
	watchRetry    = 5 * time.Second
	maxWatchRetry = 5 * time.Minute
)

// record notes how ensuring the watch went at now, and returns how soon a
// Work whose kinds are not watched is to come back (0 when they are) and
// the line a person should read, "" when it would repeat the last. The
// retry waits as long as the watch has been failing (at least watchRetry,
// at most maxWatchRetry): the member's Works back off together, by time,
// however many of them retry.
func (w *memberWatch) record(err error, now time.Time) (time.Duration, string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err == nil {
		if w.failingSince.IsZero() {
			return 0, ""
		}
		line := fmt.Sprintf("member watch started after failing for %s", now.Sub(w.failingSince).Round(time.Second))
		w.failingSince, w.failing = time.Time{}, ""
		return 0, line
	}
	if w.failingSince.IsZero() {
		w.failingSince = now
	}
	retry := min(max(now.Sub(w.failingSince), watchRetry), maxWatchRetry)
	if err.Error() == w.failing {
		return retry, ""
	}
	w.failing = err.Error()
	return retry, "member watch cannot start; retrying with backoff (up to " + maxWatchRetry.String() + "): " + w.failing
}

// newMemberWatch returns the watch of cluster; its caches run at most as
// long as ctx.
func newMemberWatch(ctx context.Context, members *Members, cluster string) *memberWatch {
	return &memberWatch{ctx: ctx, members: members, cluster: cluster, watched: map[schema.GroupVersionKind]bool{}}
}

// ensure makes sure objects of each of gvks in the member are watched, by
// a cache built from cfg. Once the watch is stopped it starts nothing: a
// reconcile still in flight when the member left must not bring it back.
func (w *memberWatch) ensure(ctx context.Context, cfg *rest.Config, gvks []schema.GroupVersionKind) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped {
		return fmt.Errorf("cluster %s left the federation: its watch is stopped until it is registered again", w.cluster)
	}
	if id := identity(cfg); w.cache != nil && w.identity != id {
		// Re-registered elsewhere or with new credentials: watch every kind
		// watched so far again, from a cache built for the new registration.
		for gvk := range w.watched {
			gvks = append(gvks, gvk)
		}
		w.stopCacheLocked()
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

// stop ends the member's watches for good, for a member that left the
// federation, and returns once its caches have stopped.
func (w *memberWatch) stop() {
	w.mu.Lock()
	w.stopped = true
	w.stopCacheLocked()
	w.mu.Unlock()
	w.running.Wait()
}

func (w *memberWatch) stopCacheLocked() {
	if w.cancel != nil {
		w.cancel()
	}
	w.cache, w.cancel, w.identity = nil, nil, ""
	w.watched = map[schema.GroupVersionKind]bool{}
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
		// Member objects are compared with the Work by content; their
		// managedFields are never read.
		DefaultTransform: cache.TransformStripManagedFields(),
	})
	if err != nil {
		return fmt.Errorf("cache for cluster %s: %w", w.cluster, err)
	}
	cacheCtx, cancel := context.WithCancel(w.ctx)
	w.running.Add(1)
	go func() {
		defer w.running.Done()
		if err := c.Start(cacheCtx); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "member watch stopped", "cluster", w.cluster)
		}
	}()
	w.cache, w.cancel, w.identity = c, cancel, id
	return nil
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
