package dashboard

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	corev1 "k8s.io/api/core/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gatingv1alpha1 "github.com/federator-dev/federator/apis/gating/v1alpha1"
	rolloutsv1alpha1 "github.com/federator-dev/federator/apis/rollouts/v1alpha1"
)

// watchedKind is a kind the dashboard shows and the fragments a change
// to it may alter.
type watchedKind struct {
	obj       client.Object
	fragments []string
}

var watched = []watchedKind{
	{&clusterv1alpha1.Cluster{}, []string{fragGrid, fragClusters}},
	{&workv1alpha2.ResourceBinding{}, []string{fragGrid, fragDetail}},
	{&workv1alpha2.ClusterResourceBinding{}, []string{fragGrid, fragDetail}},
	{&workv1alpha1.Work{}, []string{fragGrid, fragDetail, fragDeletions}},
	{&rolloutsv1alpha1.Rollout{}, []string{fragRollouts, fragGrid, fragDetail}},
	{&rolloutsv1alpha1.ClusterRollout{}, []string{fragRollouts, fragGrid, fragDetail}},
	{&gatingv1alpha1.Gate{}, []string{fragGates}},
}

// Watch tells the page's open event streams about every change hub's
// informers (and tombstones', if not nil) see. It starts the informers
// it needs (a cache starts one for each kind asked for).
func (s *Server) Watch(ctx context.Context, hub, tombstones cache.Informers) error {
	for _, w := range watched {
		if err := s.watch(ctx, hub, w.obj, w.fragments...); err != nil {
			return err
		}
	}
	if tombstones != nil {
		return s.watch(ctx, tombstones, &corev1.ConfigMap{}, fragDeletions)
	}
	return nil
}

func (s *Server) watch(ctx context.Context, informers cache.Informers, obj client.Object, fragments ...string) error {
	inf, err := informers.GetInformer(ctx, obj)
	if err != nil {
		return fmt.Errorf("dashboard: watch %T: %w", obj, err)
	}
	changed := func(any) { s.Changed(fragments...) }
	_, err = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    changed,
		UpdateFunc: func(_, o any) { changed(o) },
		DeleteFunc: changed,
	})
	return err
}

// Changed tells the open event streams that the fragments named may have
// changed; streams hear of it once per debounce interval.
func (s *Server) Changed(fragments ...string) { s.changes.changed(fragments) }

// events is the server-sent event stream: an event "change" whose data
// names the fragments to fetch again, space separated.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming is not supported", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	if r.Method == http.MethodHead {
		return
	}
	sub := s.changes.subscribe()
	defer s.changes.unsubscribe(sub)
	// The client reconnects after 2s; "hello" tells it it is live again.
	if _, err := fmt.Fprint(w, "retry: 2000\nevent: hello\ndata: live\n\n"); err != nil {
		return
	}
	flusher.Flush()
	heartbeat := time.NewTicker(s.o.Heartbeat)
	defer heartbeat.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-heartbeat.C:
			if _, err := fmt.Fprint(w, ": alive\n\n"); err != nil {
				return
			}
		case <-sub.signal:
			names := sub.take()
			if len(names) == 0 {
				continue
			}
			if _, err := fmt.Fprintf(w, "event: change\ndata: %s\n\n", strings.Join(names, " ")); err != nil {
				return
			}
		}
		flusher.Flush()
	}
}

// broadcaster gathers changes for debounce and hands them to every
// subscriber; a slow subscriber gets the union of what it missed.
type broadcaster struct {
	debounce time.Duration
	mu       sync.Mutex
	pending  map[string]bool
	timer    *time.Timer
	subs     map[*subscriber]bool
}

type subscriber struct {
	mu      sync.Mutex
	pending map[string]bool
	signal  chan struct{}
}

func newBroadcaster(debounce time.Duration) *broadcaster {
	return &broadcaster{debounce: debounce, pending: map[string]bool{}, subs: map[*subscriber]bool{}}
}

func (b *broadcaster) changed(fragments []string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, f := range fragments {
		b.pending[f] = true
	}
	// The first change starts the interval and later ones join it, so a
	// hub that never stops changing still sends one event per interval.
	if b.timer == nil {
		b.timer = time.AfterFunc(b.debounce, b.flush)
	}
}

func (b *broadcaster) flush() {
	b.mu.Lock()
	pending := b.pending
	b.pending, b.timer = map[string]bool{}, nil
	subs := make([]*subscriber, 0, len(b.subs))
	for s := range b.subs {
		subs = append(subs, s)
	}
	b.mu.Unlock()
	for _, s := range subs {
		s.mu.Lock()
		for f := range pending {
			s.pending[f] = true
		}
		s.mu.Unlock()
		select {
		case s.signal <- struct{}{}:
		default:
		}
	}
}

func (b *broadcaster) subscribe() *subscriber {
	s := &subscriber{pending: map[string]bool{}, signal: make(chan struct{}, 1)}
	b.mu.Lock()
	b.subs[s] = true
	b.mu.Unlock()
	return s
}

func (b *broadcaster) unsubscribe(s *subscriber) {
	b.mu.Lock()
	delete(b.subs, s)
	b.mu.Unlock()
}

func (s *subscriber) take() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.pending))
	for f := range s.pending {
		out = append(out, f)
	}
	s.pending = map[string]bool{}
	slices.Sort(out)
	return out
}
