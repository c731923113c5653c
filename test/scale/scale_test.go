// Package scale measures what a rollout costs on a real local fleet (a hub
// and two members, real kube-apiserver + etcd, federator's controllers in
// this process): the design's main cost, write requests to the hub API
// server (read from its apiserver_request_total), propagation and resume
// latency, and the controllers' memory. It prints figures and asserts no
// timing.
//
//	go test ./test/scale/ -run '^$' -bench . -benchtime=1x -timeout 30m -v   (or: make bench-scale)
package scale

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"

	"github.com/federator-dev/federator/pkg/dispatch"
)

const (
	imageV1 = "nginx:1.25"
	imageV2 = "nginx:1.26"

	// Limits are generous: the machine is small and may be shared. They
	// are not assertions about speed, only a bound on a stuck run.
	waitLimit = 5 * time.Minute
	// quietFor: the hub counts as settled after this long without a write
	// other than leases.
	quietFor    = 3 * time.Second
	settleLimit = 2 * time.Minute
	// settledPeriod is the time the fleet is watched with nothing changing.
	settledPeriod = 10 * time.Second
)

// BenchmarkRollout rolls N Deployments (one namespace, one policy selecting
// them by kind) to both members, then suspends, updates and resumes them,
// then watches a settled fleet. Each size runs once (b.N is effectively 1:
// run with -benchtime=1x); sizes share one fleet and one set of controllers
// in their own namespaces, so the larger size runs beside the smaller one's
// settled templates.
//
// Metrics (all but ns/op are per run, not per iteration):
//
//	s-to-propagate             templates + policy created → every member has all N
//	hub-writes/template        hub writes (POST/PUT/PATCH/APPLY/DELETE, every client) from creation until the hub is quiet, / N
//	ctrl-writes/template       the same less the benchmark's own writes (the controllers' share)
//	s-to-resume                suspension removed → every member runs the new image everywhere
//	hub-writes/template-resume hub writes from suspending to quiet after resuming, / N
//	ctrl-writes/template-resume  the same less the benchmark's own writes
//	settled-hub-writes         hub writes in 10 s with nothing changing (all resources)
//	controller-MB              VmRSS of this process (controllers, clients, test binary) at the end
func BenchmarkRollout(b *testing.B) {
	e := startEnv(b)
	for _, n := range []int{50, 200} {
		b.Run(fmt.Sprintf("deployments=%d", n), func(b *testing.B) {
			for i := range b.N {
				rollout(b, e, fmt.Sprintf("scale-%d-%d", n, i), n)
			}
		})
	}
}

// rollout runs one size in namespace ns and reports its metrics.
func rollout(b *testing.B, e *env, ns string, n int) {
	ctx := context.Background()
	b.StopTimer()
	e.createNamespace(ctx, b, ns)
	templates := map[string]bool{}
	for i := range n {
		templates[fmt.Sprintf("web-%03d", i)] = true
	}
	errorsBefore := e.log.errorCount()
	// Start from a quiet hub, so what follows is this size's cost only.
	e.mustQuiet(ctx, b, "before creating the templates")
	b.StartTimer()

	// 1. Propagation: templates + policy → every member has every Deployment.
	before := e.mustScrape(ctx, b)
	ownBefore := e.ownWrites.Load()
	began := time.Now()
	if err := e.createPolicy(ctx, ns); err != nil {
		b.Fatalf("create policy: %v", err)
	}
	for name := range templates {
		if err := e.createDeployment(ctx, ns, name, imageV1); err != nil {
			b.Fatalf("create Deployment %s: %v", name, err)
		}
	}
	created := time.Since(began)
	e.waitMembersHave(ctx, b, ns, templates, imageV1, waitLimit)
	propagated := time.Since(began)
	atPropagated := e.mustScrape(ctx, b)
	settled, quietAt := e.mustQuiet(ctx, b, "after propagation")
	own := float64(e.ownWrites.Load() - ownBefore)
	propagation := settled.since(before)
	b.ReportMetric(propagated.Seconds(), "s-to-propagate")
	b.ReportMetric(propagation.total()/float64(n), "hub-writes/template")
	b.ReportMetric((propagation.total()-own)/float64(n), "ctrl-writes/template")
	b.Logf("propagation of %d templates: created in %s, in every member after %s, hub quiet %s after creation began",
		n, created.Round(time.Millisecond), propagated.Round(time.Millisecond), quietAt.Sub(began).Round(time.Millisecond))
	b.Logf("  writes until every member had them: %.0f; until the hub was quiet: %.0f (benchmark's own: %.0f)",
		atPropagated.since(before).total(), propagation.total(), own)
	b.Logf("  propagation writes by verb and resource: %s", propagation.breakdown(n))

	// 2. Suspend all → update every template → resume.
	cycleBefore := e.mustScrape(ctx, b)
	ownBefore = e.ownWrites.Load()
	if err := e.patchPolicy(ctx, ns, `{"spec":{"suspension":{"dispatching":true}}}`); err != nil {
		b.Fatalf("suspend: %v", err)
	}
	began = time.Now()
	e.waitWorks(ctx, b, "every Work held (SuspendDispatching)", ns, n, waitLimit, func(w *workv1alpha1.Work) bool {
		return dispatchingReason(w) == dispatch.ReasonSuspendDispatching
	})
	suspended := time.Since(began)
	afterSuspend, _ := e.mustQuiet(ctx, b, "after suspending")

	began = time.Now()
	for name := range templates {
		if err := e.setImage(ctx, ns, name, imageV2); err != nil {
			b.Fatalf("set image of %s: %v", name, err)
		}
	}
	e.waitWorks(ctx, b, "every Work carries "+imageV2, ns, n, waitLimit, func(w *workv1alpha1.Work) bool {
		return workImage(w) == imageV2
	})
	updated := time.Since(began)
	afterUpdate, _ := e.mustQuiet(ctx, b, "after updating the held templates")
	// A suspension that leaks is a correctness bug, not a cost: say so.
	if counts, err := e.membersWithImage(ctx, ns, templates, imageV2); err != nil {
		b.Fatal(err)
	} else {
		for m, c := range counts {
			if c > 0 {
				b.Errorf("%s runs %s on %d Deployments while dispatching is suspended", m, imageV2, c)
			}
		}
	}

	if err := e.patchPolicy(ctx, ns, `{"spec":{"suspension":null}}`); err != nil {
		b.Fatalf("resume: %v", err)
	}
	began = time.Now()
	e.waitMembersHave(ctx, b, ns, templates, imageV2, waitLimit)
	resumed := time.Since(began)
	afterResume, quietAt := e.mustQuiet(ctx, b, "after resuming")
	own = float64(e.ownWrites.Load() - ownBefore)
	cycle := afterResume.since(cycleBefore)
	b.ReportMetric(resumed.Seconds(), "s-to-resume")
	b.ReportMetric(cycle.total()/float64(n), "hub-writes/template-resume")
	b.ReportMetric((cycle.total()-own)/float64(n), "ctrl-writes/template-resume")
	b.Logf("suspend→update→resume of %d templates: all Works held after %s, all Works at %s after %s, every member at %s %s after resuming (hub quiet %s after resuming)",
		n, suspended.Round(time.Millisecond), imageV2, updated.Round(time.Millisecond), imageV2,
		resumed.Round(time.Millisecond), quietAt.Sub(began).Round(time.Millisecond))
	b.Logf("  cycle writes: %.0f (benchmark's own: %.0f)", cycle.total(), own)
	b.Logf("  suspend step: %s", afterSuspend.since(cycleBefore).breakdown(n))
	b.Logf("  update-while-held step: %s", afterUpdate.since(afterSuspend).breakdown(n))
	b.Logf("  resume step: %s", afterResume.since(afterUpdate).breakdown(n))

	// 3. A settled fleet: nothing changes for settledPeriod.
	quietBefore := e.mustScrape(ctx, b)
	time.Sleep(settledPeriod)
	quiet := e.mustScrape(ctx, b).since(quietBefore)
	b.ReportMetric(quiet.total(), "settled-hub-writes")
	b.Logf("settled %s: %s", settledPeriod, quiet.breakdown(0))

	// 4. Memory of this process.
	rss, err := rssMB()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(rss, "controller-MB")
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.Logf("memory: VmRSS %.0f MB, Go heap in use after GC %.0f MB, goroutines %d",
		rss, float64(ms.HeapInuse)/(1<<20), runtime.NumGoroutine())

	if errs := e.log.errorCount() - errorsBefore; errs > 0 {
		b.Logf("the controllers logged %d errors during this size; the first ones:\n\t%s",
			errs, strings.Join(e.log.firstErrors(), "\n\t"))
	}
}

func (e *env) mustScrape(ctx context.Context, b *testing.B) writes {
	b.Helper()
	w, err := scrapeWrites(ctx, e.hubCS)
	if err != nil {
		b.Fatal(err)
	}
	return w
}

// mustQuiet waits until the hub is quiet (see waitQuiet) and returns the
// reading then. A hub still writing after settleLimit is reported, with what
// it kept writing, and the run goes on from that reading.
func (e *env) mustQuiet(ctx context.Context, b *testing.B, when string) (writes, time.Time) {
	b.Helper()
	start := e.mustScrape(ctx, b)
	w, at, quiet, err := e.waitQuiet(ctx, quietFor, settleLimit)
	if err != nil {
		b.Fatal(err)
	}
	if !quiet {
		b.Logf("the hub was still writing %s %s: %s", settleLimit, when, w.since(start).breakdown(0))
	}
	return w, at
}
