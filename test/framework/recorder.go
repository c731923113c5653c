package framework

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	watchtools "k8s.io/client-go/tools/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// Existing is the Event of the version a Recorder found when it started.
const Existing watch.EventType = "EXISTING"

// Version is one version of an object as the cluster stored it.
type Version struct {
	// Event is Existing for the object as it was when recording began,
	// else the watch event that delivered it: ADDED, MODIFIED or DELETED
	// (a deletion carries the object's last state).
	Event  watch.EventType
	Object *unstructured.Unstructured
	// Observed is when the Recorder received it (the list's return for
	// Existing), for checkers that relate versions to what a user wrote.
	Observed time.Time
}

// Mark is a point in a Recorder's history: the number of versions it had
// recorded then.
type Mark int

// Recorder keeps every version of one object that a cluster stores while
// it records, from a watch that resumes where it broke off. A sampled read
// can miss a version that was written and overwritten between two reads; a
// watch cannot, so "this was never stored" is proven over the whole time a
// Recorder ran, not over a few polls. A gap it cannot fill (its watch
// expired) is reported by Err, Sync and Mark, never passed over.
type Recorder struct {
	what   string
	get    func(context.Context) (*unstructured.Unstructured, error)
	cancel context.CancelFunc
	done   chan struct{}

	mu       sync.Mutex
	versions []Version
	err      error
	stopped  bool
}

// RecordHub starts recording obj's kind, namespace and name on the hub.
func (e *Env) RecordHub(ctx context.Context, obj client.Object) (*Recorder, error) {
	return Record(ctx, e.hubDynamic, e.Hub, obj, "hub")
}

// RecordMember starts recording obj's kind, namespace and name in member.
func (e *Env) RecordMember(ctx context.Context, member string, obj client.Object) (*Recorder, error) {
	c, ok := e.Members[member]
	if !ok {
		return nil, fmt.Errorf("no member %s", member)
	}
	return Record(ctx, e.memberDynamics[member], c, obj, member)
}

// Record starts recording the object of obj's kind (by c's scheme and REST
// mapper), namespace and name through dyn, which must reach the cluster c
// reads; cluster names that cluster in messages. The object need not exist.
// Stop ends the recording; ctx bounds only the start.
func Record(ctx context.Context, dyn dynamic.Interface, c client.Client, obj client.Object, cluster string) (*Recorder, error) {
	gvk, err := apiutil.GVKForObject(obj, c.Scheme())
	if err != nil {
		return nil, err
	}
	mapping, err := c.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, err
	}
	var resource dynamic.ResourceInterface = dyn.Resource(mapping.Resource)
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		resource = dyn.Resource(mapping.Resource).Namespace(obj.GetNamespace())
	}
	name := obj.GetName()
	r := &Recorder{
		what: fmt.Sprintf("%s %s %s", cluster, gvk.Kind, client.ObjectKeyFromObject(obj)),
		get: func(ctx context.Context) (*unstructured.Unstructured, error) {
			return resource.Get(ctx, name, metav1.GetOptions{})
		},
		done: make(chan struct{}),
	}
	onlyThis := "metadata.name=" + name
	list, err := resource.List(ctx, metav1.ListOptions{FieldSelector: onlyThis})
	if err != nil {
		return nil, fmt.Errorf("record %s: %w", r.what, err)
	}
	listed := time.Now()
	for i := range list.Items {
		r.versions = append(r.versions, Version{Event: Existing, Object: &list.Items[i], Observed: listed})
	}
	watchCtx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	// Watching from the list's resourceVersion delivers every write after
	// the versions just listed, and after a broken connection the watch
	// resumes from the last one delivered.
	w, err := watchtools.NewRetryWatcherWithContext(watchCtx, list.GetResourceVersion(),
		watcherFunc(func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = onlyThis
			return resource.Watch(ctx, o)
		}))
	if err != nil {
		cancel()
		return nil, fmt.Errorf("record %s: %w", r.what, err)
	}
	go r.receive(w)
	return r, nil
}

type watcherFunc func(context.Context, metav1.ListOptions) (watch.Interface, error)

func (f watcherFunc) WatchWithContext(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
	return f(ctx, o)
}

func (r *Recorder) receive(w *watchtools.RetryWatcher) {
	defer close(r.done)
	for ev := range w.ResultChan() {
		received := time.Now()
		r.mu.Lock()
		switch ev.Type {
		case watch.Added, watch.Modified, watch.Deleted:
			if u, ok := ev.Object.(*unstructured.Unstructured); ok {
				r.versions = append(r.versions, Version{Event: ev.Type, Object: u, Observed: received})
			} else {
				r.fail(fmt.Errorf("a %s event carried %T", ev.Type, ev.Object))
			}
		case watch.Error:
			r.fail(apierrors.FromObject(ev.Object))
		}
		r.mu.Unlock()
	}
	r.mu.Lock()
	if !r.stopped {
		r.fail(errors.New("the watch ended before Stop"))
	}
	r.mu.Unlock()
}

// fail records why the history may miss versions; the first reason stays.
func (r *Recorder) fail(err error) {
	if r.err == nil {
		r.err = fmt.Errorf("recorder of %s may have missed versions: %w", r.what, err)
	}
}

// Stop ends the recording; what was recorded stays readable.
func (r *Recorder) Stop() {
	r.mu.Lock()
	r.stopped = true
	r.mu.Unlock()
	r.cancel()
	<-r.done
}

// Err says why the history may be incomplete, nil while it is not.
func (r *Recorder) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// Sync waits until the history holds every version the cluster stored up
// to now (the watch delivers in order, so it waits for the version a fresh
// read returns), or fails after 30 s or when ctx ends.
func (r *Recorder) Sync(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		if err := r.Err(); err != nil {
			return err
		}
		current, err := r.get(ctx)
		switch {
		case apierrors.IsNotFound(err):
			current = nil
		case err != nil:
			return fmt.Errorf("sync the recorder of %s: %w", r.what, err)
		}
		if r.holds(current) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the recorder of %s has not caught up with the cluster: %w", r.what, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// holds reports whether the history reaches current (nil: absent).
func (r *Recorder) holds(current *unstructured.Unstructured) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if current == nil {
		return len(r.versions) == 0 || r.versions[len(r.versions)-1].Event == watch.Deleted
	}
	for _, v := range slices.Backward(r.versions) {
		if v.Event != watch.Deleted && v.Object.GetResourceVersion() == current.GetResourceVersion() {
			return true
		}
	}
	return false
}

// Mark syncs and returns the point the history has reached: what the
// cluster stored before now lies before it.
func (r *Recorder) Mark(ctx context.Context) (Mark, error) {
	if err := r.Sync(ctx); err != nil {
		return 0, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return Mark(len(r.versions)), nil
}

// End is a Mark past every version recorded so far, without syncing.
func (r *Recorder) End() Mark {
	r.mu.Lock()
	defer r.mu.Unlock()
	return Mark(len(r.versions))
}

// Versions are the versions recorded so far, oldest first. They are shared:
// do not change them.
func (r *Recorder) Versions() []Version {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.versions)
}

// Values is field of every version recorded so far, oldest first.
func (r *Recorder) Values(field Field) []string {
	return r.ValuesBetween(0, r.End(), field)
}

// ValuesBetween is field of the versions recorded from one Mark up to
// (not including) another.
func (r *Recorder) ValuesBetween(from, to Mark, field Field) []string {
	var out []string
	for _, v := range r.between(from, to) {
		out = append(out, field(v.Object))
	}
	return out
}

// History is "EVENT value" for every version recorded from one Mark up to
// another (field's value), for comparisons that read like what happened:
// ["EXISTING nginx:1.25", "MODIFIED nginx:hotfix"].
func (r *Recorder) History(from, to Mark, field Field) []string {
	var out []string
	for _, v := range r.between(from, to) {
		out = append(out, string(v.Event)+" "+field(v.Object))
	}
	return out
}

// Writes counts the writes recorded so far: every version but the one
// found at the start.
func (r *Recorder) Writes() int {
	n := 0
	for _, v := range r.Versions() {
		if v.Event != Existing {
			n++
		}
	}
	return n
}

// ContentWrites counts the writes recorded so far that changed the object
// beyond its status: a version that differs from the one before it only as
// status writes do (see Content) is left out. Members that run workloads
// (kind, --workloads) have their controllers write status all the time; a
// write federator made shows.
func (r *Recorder) ContentWrites() int {
	n := 0
	versions := r.Versions()
	for i, v := range versions {
		if v.Event == Existing ||
			(i > 0 && v.Event == watch.Modified && Content(versions[i-1].Object.Object) == Content(v.Object.Object)) {
			continue
		}
		n++
	}
	return n
}

// Content is an object (unstructured content) as JSON without what status
// writes and the deployment controller change: status, resourceVersion,
// managedFields and the deployment.kubernetes.io annotations.
func Content(obj map[string]any) string {
	obj = runtime.DeepCopyJSON(obj)
	delete(obj, "status")
	if meta, ok := obj["metadata"].(map[string]any); ok {
		delete(meta, "resourceVersion")
		delete(meta, "managedFields")
		if ann, ok := meta["annotations"].(map[string]any); ok {
			for k := range ann {
				if strings.HasPrefix(k, "deployment.kubernetes.io/") {
					delete(ann, k)
				}
			}
			if len(ann) == 0 {
				delete(meta, "annotations")
			}
		}
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

func (r *Recorder) between(from, to Mark) []Version {
	r.mu.Lock()
	defer r.mu.Unlock()
	to = min(to, Mark(len(r.versions)))
	if from >= to {
		return nil
	}
	return slices.Clone(r.versions[from:to])
}
