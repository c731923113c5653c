package clusterstatus

import (
	"context"
	"errors"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// probes runs member probes off the controller's workers: each member has
// at most one probe in flight, bounded by its own timeout, and its end
// requeues that member's Cluster to record the result. A member that hangs
// holds only its own probe, never a worker another member waits for.
type probes struct {
	timeout time.Duration
	probe   func(ctx context.Context, cluster string) probeResult

	mu       sync.Mutex
	ctx      context.Context // the controller's: probes end when it stops
	queue    workqueue.TypedRateLimitingInterface[reconcile.Request]
	inFlight map[string]bool
	results  map[string]probeResult
	running  sync.WaitGroup
}

func newProbes(timeout time.Duration, probe func(context.Context, string) probeResult) *probes {
	return &probes{timeout: timeout, probe: probe, inFlight: map[string]bool{}, results: map[string]probeResult{}}
}

// source hands the probes the controller's queue and context; the
// controller starts it before its workers.
func (p *probes) source() source.Source {
	return source.Func(func(ctx context.Context, queue workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.ctx, p.queue = ctx, queue
		return nil
	})
}

// Start makes the manager wait, when it stops, for the probes still in
// flight; the controller's context has cancelled them by then.
func (p *probes) Start(ctx context.Context) error {
	<-ctx.Done()
	p.running.Wait()
	return nil
}

// result takes the outcome of cluster's last probe, if one has ended since
// it was last taken.
func (p *probes) result(cluster string) (probeResult, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	r, ok := p.results[cluster]
	delete(p.results, cluster)
	return r, ok
}

// start probes cluster unless a probe of it is in flight.
func (p *probes) start(cluster string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ctx == nil {
		return errors.New("cluster status probes started before the controller")
	}
	if p.inFlight[cluster] {
		return nil
	}
	p.inFlight[cluster] = true
	p.running.Add(1)
	go func() {
		defer p.running.Done()
		ctx, cancel := context.WithTimeout(p.ctx, p.timeout)
		defer cancel()
		result := p.probe(ctx, cluster)
		p.mu.Lock()
		delete(p.inFlight, cluster)
		p.results[cluster] = result
		p.mu.Unlock()
		p.queue.Add(reconcile.Request{NamespacedName: types.NamespacedName{Name: cluster}})
	}()
	return nil
}

// forget drops the result of a member that left. A probe still in flight
// stores one more, which the reconcile it triggers drops again.
func (p *probes) forget(cluster string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.results, cluster)
}
