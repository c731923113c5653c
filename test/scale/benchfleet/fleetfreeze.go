package main

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gatingv1alpha1 "github.com/federator-dev/federator/apis/gating/v1alpha1"
	"github.com/federator-dev/federator/test/framework"
)

// The fleet-wide freeze (`federator freeze`): one Freeze object, consulted
// by the dispatcher before each member write. Under bulk load (every
// template taking a new image), each try writes a Freeze while member
// writes are flowing and times, from the moment the hub acknowledged it,
// the last member write the member watches saw: an upper bound of when the
// last write that started before the dispatcher saw the freeze ended. The
// Works recording the hold follow in the binding controller's bulk lane;
// that is timed too, on the first --freeze-records tries, for
// comparison with the per-Work freeze.

const (
	// fleetFreezeWindow is how long each try watches the members after its
	// freeze before it unfreezes.
	fleetFreezeWindow = 3 * time.Second
	// fleetFreezeGrace is how long after the freeze a member write may
	// still end (one that started before the dispatcher saw it); a change
	// seen later counts as a member changed after the freeze.
	fleetFreezeGrace = 2 * time.Second
	// flowing is how many member objects must have taken a try's image
	// before it freezes (a tenth of them, when that is fewer): the
	// dispatcher is well under way then.
	flowing = 200
)

// fleetFreezes runs o.freezes tries; every member ends with the last
// try's image.
func fleetFreezes(ctx context.Context, hc client.Client, hub *hubWatch, members *memberWatches, o options, r *result) error {
	// A try that fails stops the image writes it started, too.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	all := o.resources * o.members
	var lasts, records, loads []float64
	var image string
	for try := range o.freezes {
		image = fmt.Sprintf("nginx:1.27.%d", try)
		loaded := make(chan error, 1)
		go func() {
			loaded <- parallel(16, o.resources, func(i int) error {
				return framework.SetImage(ctx, hc, ns, name(i), image)
			})
		}()
		if err := waitFor(ctx, fmt.Sprintf("member writes of %s under way", image), func() (bool, error) {
			return members.have(image) >= min(flowing, all/10), nil
		}); err != nil {
			return err
		}
		f := &gatingv1alpha1.Freeze{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("bench-%02d", try)},
			Spec: gatingv1alpha1.FreezeSpec{Message: "benchfleet try " + fmt.Sprint(try)}}
		if err := hc.Create(ctx, f); err != nil {
			return fmt.Errorf("freeze %s: %w", f.Name, err)
		}
		acked := time.Now()
		// How busy the members were: the writes seen in the second before.
		load := members.writesIn(acked.Add(-time.Second), acked)
		loads = append(loads, float64(load))
		var recorded float64
		if try < o.freezeRecords {
			if err := waitFor(ctx, "every Work to record freeze "+f.Name, func() (bool, error) {
				return hub.frozen() == all, nil
			}); err != nil {
				return err
			}
			recorded = time.Since(acked).Seconds()
			records = append(records, recorded)
		}
		if rest := fleetFreezeWindow - time.Since(acked); rest > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(rest):
			}
		}
		last, late := members.lastChange(acked, fleetFreezeGrace)
		lasts = append(lasts, last)
		r.ChangedFrozen += late
		logf("federator: fleet freeze %d: %d member writes in the second before it; the last one after it %.3fs after, %d later than %s; every Work recorded it in %.2fs",
			try, load, last, late, fleetFreezeGrace, recorded)
		if err := hc.Delete(ctx, f); err != nil {
			return fmt.Errorf("unfreeze %s: %w", f.Name, err)
		}
		if err := <-loaded; err != nil {
			return err
		}
		if try < o.freezeRecords {
			if err := waitFor(ctx, "every Work to drop freeze "+f.Name, func() (bool, error) {
				return hub.frozen() == 0, nil
			}); err != nil {
				return err
			}
		}
	}
	sort.Float64s(lasts)
	sort.Float64s(records)
	sort.Float64s(loads)
	r.FleetFreezeLoad = quantile(loads, 0.5)
	logf("federator: fleet freeze, last member write after it, sorted: %v", lasts)
	r.FleetFreezeTries = len(lasts)
	r.FleetFreezeP50, r.FleetFreezeP99 = quantile(lasts, 0.5), quantile(lasts, 0.99)
	r.FleetFreezeRecorded = quantile(records, 0.5)
	return waitFor(ctx, "every member has "+image, func() (bool, error) {
		return members.have(image) == all, nil
	})
}

// changeLog keeps when the member watches saw each change.
type changeLog struct {
	mu sync.Mutex
	at []time.Time
}

func (l *changeLog) add(t time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.at = append(l.at, t)
}

// count is how many changes were seen after from, up to to.
func (l *changeLog) count(from, to time.Time) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, t := range l.at {
		if t.After(from) && !t.After(to) {
			n++
		}
	}
	return n
}

// lastChange is how long after since the last change was seen (0 when
// none was), and how many were seen more than grace after since.
func (l *changeLog) lastChange(since time.Time, grace time.Duration) (last float64, late int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, t := range l.at {
		if !t.After(since) {
			continue
		}
		last = max(last, t.Sub(since).Seconds())
		if t.Sub(since) > grace {
			late++
		}
	}
	return last, late
}
