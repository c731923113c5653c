package main

import (
	"context"
	"slices"
	"sort"
	"sync"
	"time"

	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gatingv1alpha1 "github.com/federator-dev/federator/apis/gating/v1alpha1"
	"github.com/federator-dev/federator/apis/policy"
	workkeys "github.com/federator-dev/federator/apis/work"
)

// What a run watches to time its phases: the hub's Works and bindings,
// and the members' Deployments.

// hubWatch follows, by watches, every Work of the benchmark's Deployments
// and every binding of its namespace: which are suspended, and which image
// each Work carries.
type hubWatch struct {
	mu       sync.Mutex
	works    map[string]workState // namespace/name → state
	bindings map[string]bool      // name → suspended
	cancel   context.CancelFunc
}

type workState struct {
	suspended bool
	// frozen: held by a Freeze, as the binding controller records it.
	frozen   bool
	image    string
	template string
}

func watchWorks(ctx context.Context, cfg *rest.Config) (*hubWatch, error) {
	wc, err := client.NewWithWatch(cfg, client.Options{Scheme: policy.NewScheme()})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	h := &hubWatch{works: map[string]workState{}, bindings: map[string]bool{}, cancel: cancel}
	go follow(ctx, wc, &workv1alpha1.WorkList{}, nil, func(obj client.Object, deleted bool) {
		w := obj.(*workv1alpha1.Work)
		m := workkeys.FirstManifest(w)
		if m == nil || m.GetKind() != "Deployment" || m.GetNamespace() != ns {
			return
		}
		key := w.Namespace + "/" + w.Name
		h.mu.Lock()
		defer h.mu.Unlock()
		if deleted {
			delete(h.works, key)
			return
		}
		st := workState{suspended: w.Spec.SuspendDispatching != nil && *w.Spec.SuspendDispatching, template: m.GetName()}
		st.frozen = st.suspended && w.Annotations[workkeys.HoldReasonAnnotation] == gatingv1alpha1.ReasonFrozen
		if c, ok, _ := unstructured.NestedSlice(m.Object, "spec", "template", "spec", "containers"); ok && len(c) > 0 {
			if first, ok := c[0].(map[string]any); ok {
				st.image, _ = first["image"].(string)
			}
		}
		h.works[key] = st
	})
	go follow(ctx, wc, &workv1alpha2.ResourceBindingList{}, []client.ListOption{client.InNamespace(ns)}, func(obj client.Object, deleted bool) {
		b := obj.(*workv1alpha2.ResourceBinding)
		h.mu.Lock()
		defer h.mu.Unlock()
		s := b.Spec.Suspension
		h.bindings[b.Name] = !deleted && s != nil && s.Dispatching != nil && *s.Dispatching
	})
	return h, nil
}

// follow lists, then watches, calling seen for every object and change;
// an ended watch is started again from a new list. It returns when ctx
// ends.
func follow(ctx context.Context, wc client.WithWatch, list client.ObjectList, opts []client.ListOption, seen func(obj client.Object, deleted bool)) {
	for ctx.Err() == nil {
		l := list.DeepCopyObject().(client.ObjectList)
		if err := wc.List(ctx, l, opts...); err != nil {
			time.Sleep(poll)
			continue
		}
		_ = meta.EachListItem(l, func(o k8sruntime.Object) error { seen(o.(client.Object), false); return nil })
		w, err := wc.Watch(ctx, list.DeepCopyObject().(client.ObjectList),
			append(slices.Clone(opts), &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: l.GetResourceVersion()}})...)
		if err != nil {
			time.Sleep(poll)
			continue
		}
		for ev := range w.ResultChan() {
			if obj, ok := ev.Object.(client.Object); ok && (ev.Type == watch.Added || ev.Type == watch.Modified || ev.Type == watch.Deleted) {
				seen(obj, ev.Type == watch.Deleted)
			}
		}
	}
}

// suspended is how many Works are suspended.
func (h *hubWatch) suspended() int {
	return h.count(func(w workState) bool { return w.suspended })
}

// frozen is how many Works record a Freeze's hold.
func (h *hubWatch) frozen() int {
	return h.count(func(w workState) bool { return w.frozen })
}

// held is how many Works of the template are suspended.
func (h *hubWatch) held(template string) int {
	return h.count(func(w workState) bool { return w.template == template && w.suspended })
}

// have is how many Works carry image.
func (h *hubWatch) have(image string) int {
	return h.count(func(w workState) bool { return w.image == image })
}

func (h *hubWatch) count(pred func(workState) bool) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, w := range h.works {
		if pred(w) {
			n++
		}
	}
	return n
}

// suspendedBindings is how many bindings carry the suspension.
func (h *hubWatch) suspendedBindings() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, s := range h.bindings {
		if s {
			n++
		}
	}
	return n
}

func (h *hubWatch) stop() { h.cancel() }

// memberWatches watch the benchmark's Deployments in every member: every
// change while suspended is counted, and when each object first took an
// image is noted.
type memberWatches struct {
	mu      sync.Mutex
	changed int
	current map[string]string // member/name → image now
	rv      map[string]string // member/name → resourceVersion last seen
	cancel  context.CancelFunc
	seen    map[string]map[string]time.Time // image → member/name → first seen
	// log is when every change was seen.
	log changeLog
}

func watchMembers(ctx context.Context, members map[string]*rest.Config) (*memberWatches, error) {
	ctx, cancel := context.WithCancel(ctx)
	w := &memberWatches{seen: map[string]map[string]time.Time{}, current: map[string]string{}, rv: map[string]string{}, cancel: cancel}
	for m, cfg := range members {
		wc, err := client.NewWithWatch(cfg, client.Options{Scheme: policy.NewScheme()})
		if err != nil {
			cancel()
			return nil, err
		}
		go follow(ctx, wc, &appsv1.DeploymentList{}, []client.ListOption{client.InNamespace(ns)}, func(obj client.Object, deleted bool) {
			d := obj.(*appsv1.Deployment)
			key := m + "/" + d.Name
			at := time.Now()
			w.mu.Lock()
			defer w.mu.Unlock()
			if deleted {
				delete(w.current, key)
				delete(w.rv, key)
				return
			}
			if w.rv[key] == d.ResourceVersion {
				return // seen again by a new list after a watch ended
			}
			if w.rv[key] != "" {
				w.changed++
			}
			w.log.add(at)
			w.rv[key] = d.ResourceVersion
			img := imageOf(d)
			if w.seen[img] == nil {
				w.seen[img] = map[string]time.Time{}
			}
			if _, ok := w.seen[img][key]; !ok {
				w.seen[img][key] = at
			}
			w.current[key] = img
		})
	}
	return w, nil
}

// have is how many member objects hold image now.
func (w *memberWatches) have(image string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, img := range w.current {
		if img == image {
			n++
		}
	}
	return n
}

// changes is how many member writes the watches saw so far (each
// resets the count).
func (w *memberWatches) changes() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := w.changed
	w.changed = 0
	return n
}

// firstSeen is, sorted, how long after since each object first showed image.
func (w *memberWatches) firstSeen(image string, since time.Time) []float64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []float64
	for _, at := range w.seen[image] {
		out = append(out, at.Sub(since).Seconds())
	}
	sort.Float64s(out)
	return out
}

// lastChange is how long after since the watches last saw a member
// object written (0 when none was), and how many writes they saw more
// than grace after since.
func (w *memberWatches) lastChange(since time.Time, grace time.Duration) (float64, int) {
	return w.log.lastChange(since, grace)
}

// writesIn is how many member writes the watches saw after from, up to to.
func (w *memberWatches) writesIn(from, to time.Time) int { return w.log.count(from, to) }

func (w *memberWatches) stop() { w.cancel() }
