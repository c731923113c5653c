package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/federator-dev/federator/test/framework"
)

// memberRecorder records every version of one template's copy in one
// member with framework.Recorder. When a recorder's watch breaks beyond
// resuming (its resourceVersion expired), it lists again with a new
// Recorder and says so: the versions stored in between may be missed,
// which the summary reports as a gap.
type memberRecorder struct {
	template, member string
	obj              client.Object
	dyn              dynamic.Interface
	c                client.Client
	version          framework.Field

	mu       sync.Mutex
	segments []*framework.Recorder
	// listed is when each segment's recorder had listed (the first's
	// is the zero time): a copy gone by then went during the gap before.
	listed []time.Time
	gaps   []string
	stop   chan struct{}
	done   chan struct{}
}

func startRecorder(ctx context.Context, template, member string, obj client.Object, dyn dynamic.Interface, c client.Client,
	version framework.Field) (*memberRecorder, error) {
	r0, err := framework.Record(ctx, dyn, c, obj, member)
	if err != nil {
		return nil, err
	}
	r := &memberRecorder{template: template, member: member, obj: obj, dyn: dyn, c: c, version: version,
		segments: []*framework.Recorder{r0}, listed: []time.Time{{}}, stop: make(chan struct{}), done: make(chan struct{})}
	go r.watchGaps()
	return r, nil
}

// allSegments are the recorders r used, the one recording now last.
func (r *memberRecorder) allSegments() []*framework.Recorder {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*framework.Recorder(nil), r.segments...)
}

func (r *memberRecorder) last() *framework.Recorder {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.segments[len(r.segments)-1]
}

func (r *memberRecorder) watchGaps() {
	defer close(r.done)
	for {
		select {
		case <-r.stop:
			return
		case <-time.After(time.Second):
		}
		cur := r.last()
		err := cur.Err()
		if err == nil {
			continue
		}
		began := time.Now()
		cur.Stop()
		for {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			next, rerr := framework.Record(ctx, r.dyn, r.c, r.obj, r.member)
			cancel()
			if rerr == nil {
				r.mu.Lock()
				r.segments = append(r.segments, next)
				r.listed = append(r.listed, time.Now())
				r.gaps = append(r.gaps, fmt.Sprintf("%s %s: relisted after %s (%v)", r.member, r.template, time.Since(began).Round(time.Millisecond), err))
				r.mu.Unlock()
				logf("recorder of %s in %s: watch broke (%v); listed again", r.template, r.member, err)
				break
			}
			select {
			case <-r.stop:
				return
			case <-time.After(time.Second):
			}
		}
	}
}

// finish syncs with the member (so the history holds what it stores now)
// and stops recording.
func (r *memberRecorder) finish(ctx context.Context) error {
	close(r.stop)
	<-r.done
	err := r.last().Sync(ctx)
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.segments {
		s.Stop()
	}
	return err
}

// stores are the versions r saw stored: every version whose value differs
// from the one before it (the first after a relist too), deletions left out.
func (r *memberRecorder) stores() []stored {
	var out []stored
	for _, seg := range r.allSegments() {
		previous := ""
		for _, v := range seg.Versions() {
			if v.Event == watch.Deleted {
				previous = ""
				continue
			}
			value := r.version(v.Object)
			if value == previous {
				continue
			}
			previous = value
			out = append(out, stored{Template: r.template, Member: r.member, Version: value, Writers: writers(v.Object),
				Written: lastWrite(v.Object), Observed: v.Observed, ResourceVersion: v.Object.GetResourceVersion()})
		}
	}
	return out
}

// removal is a member's copy of a template seen deleted.
type removal struct {
	Template, Member string
	// Observed is when the recorder received the deletion: it happened no
	// later.
	Observed time.Time
	UID      string
	// InGap: the deletion was not delivered but happened while the
	// recorder's watch was broken (Observed is when it listed again).
	InGap bool
	// ResourceVersion is the deleted object's last version.
	ResourceVersion string
}

// removals are the deletions r saw.
func (r *memberRecorder) removals() []removal {
	r.mu.Lock()
	listed := append([]time.Time(nil), r.listed...)
	r.mu.Unlock()
	var segments [][]framework.Version
	for _, seg := range r.allSegments() {
		segments = append(segments, seg.Versions())
	}
	return removalsOf(r.template, r.member, segments, listed)
}

// removalsOf are the deletions in a recorder's segments: those a watch
// delivered, and those a relist shows happened in the gap before it (the
// copy seen last before the gap is absent after it, or there under
// another UID: a copy taken back must keep its UID), observed no later
// than the relist, listed[i] for segments[i].
func removalsOf(template, member string, segments [][]framework.Version, listed []time.Time) []removal {
	var out []removal
	var live *unstructured.Unstructured // the copy seen last, nil when none
	for i, seg := range segments {
		if i > 0 && live != nil && (len(seg) == 0 || seg[0].Object.GetUID() != live.GetUID()) {
			out = append(out, removal{Template: template, Member: member, Observed: listed[i], InGap: true,
				UID: string(live.GetUID()), ResourceVersion: live.GetResourceVersion()})
		}
		live = nil
		for _, v := range seg {
			if v.Event == watch.Deleted {
				out = append(out, removal{Template: template, Member: member, Observed: v.Observed,
					UID: string(v.Object.GetUID()), ResourceVersion: v.Object.GetResourceVersion()})
				live = nil
				continue
			}
			live = v.Object
		}
	}
	return out
}

// memberManagers are the field managers of a member's own controllers
// (with --workloads): kube-controller-manager's deployment controller
// writes its revision annotation into a member's Deployment. They never
// write what the hub placed (an image, a ConfigMap's data, the Job's
// version annotation).
var memberManagers = map[string]bool{"kube-controller-manager": true}

// lastWrite is the latest time of the object's managedFields entries that
// may have written what the hub placed: when the last such write
// happened, to the second. Writes of a subresource (status: the members'
// controllers, or --ready-deployments) and of a member's own controllers
// (memberManagers) are left out: they never change a stored version, and
// taking their time would start the store's window after the store
// itself, when the first version a recorder lists (at its start or after
// a gap) was stored before them.
func lastWrite(u *unstructured.Unstructured) time.Time {
	var latest time.Time
	for _, e := range u.GetManagedFields() {
		if e.Subresource != "" || memberManagers[e.Manager] {
			continue
		}
		if e.Time != nil && e.Time.After(latest) {
			latest = e.Time.Time
		}
	}
	return latest
}

// writers names the stored object's field managers and when each last
// wrote: "federator Apply 15:04:05".
func writers(u *unstructured.Unstructured) []string {
	var out []string
	for _, e := range u.GetManagedFields() {
		w := e.Manager + " " + string(e.Operation)
		if e.Time != nil {
			w += " " + e.Time.UTC().Format(time.TimeOnly)
		}
		out = append(out, w)
	}
	return out
}
