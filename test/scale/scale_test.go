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
	"testing"
	"time"

	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"

	workkeys "github.com/federator-dev/federator/apis/work"
	"github.com/federator-dev/federator/internal/fixture"
	"github.com/federator-dev/federator/test/framework"
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
// settled templates. ns/op is the whole size: propagation, the cycle, the
// waits for a quiet hub and the settled period.
//
// The -v log breaks every step down by verb and resource (with the 409
// Conflicts among them), lists the Events emitted by reason, the members'
// writes, and the errors the controllers logged.
//
// Metrics (all but ns/op are per run, not per iteration):
//
//	s-to-propagate             policy + N templates created (one by one) → every member has all N
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
	errorsBefore := e.log.snapshot()
	// Start from a quiet hub, so what follows is this size's cost only.
	start := e.quiet(ctx, b, "before creating the templates")
	b.StartTimer()

	// 1. Propagation: policy + templates → every member has every Deployment.
	began := time.Now()
	if err := e.createPolicy(ctx, ns); err != nil {
		b.Fatalf("create policy: %v", err)
	}
	for name := range templates {
		if err := e.Hub.Create(ctx, framework.NewDeployment(ns, name, imageV1)); err != nil {
			b.Fatalf("create Deployment %s: %v", name, err)
		}
	}
	created := time.Since(began)
	e.waitMembersHave(ctx, b, ns, templates, imageV1, waitLimit)
	propagated := time.Since(began)
	atPropagated := e.read(ctx, b)
	settled := e.quiet(ctx, b, "after propagation")
	propagation := settled.since(start)
	b.ReportMetric(propagated.Seconds(), "s-to-propagate")
	b.ReportMetric(propagation.writes.Total()/float64(n), "hub-writes/template")
	b.ReportMetric((propagation.writes.Total()-propagation.own)/float64(n), "ctrl-writes/template")
	b.Logf("propagation of %d templates: created in %s, in every member %s after creation began (%s after the last create), hub quiet after %s",
		n, created.Round(time.Millisecond), propagated.Round(time.Millisecond), (propagated - created).Round(time.Millisecond),
		settled.at.Sub(began).Round(time.Millisecond))
	b.Logf("  hub writes until every member had them: %.0f; until the hub was quiet: %.0f, of which the benchmark's own %.0f",
		atPropagated.since(start).writes.Total(), propagation.writes.Total(), propagation.own)
	b.Logf("  by verb and resource: %s", propagation.writes.Breakdown(n))
	b.Logf("  Events emitted:%s", propagation.events)
	b.Logf("  members: %s", propagation.members())

	// 2. Suspend all → update every template → resume.
	if err := framework.PatchPolicy(ctx, e.Hub, ns, policyName, `{"spec":{"suspension":{"dispatching":true}}}`); err != nil {
		b.Fatalf("suspend: %v", err)
	}
	began = time.Now()
	e.waitWorks(ctx, b, "every Work held (SuspendDispatching)", ns, n, waitLimit, func(w *workv1alpha1.Work) bool {
		return framework.DispatchingReason(w) == workkeys.ReasonSuspendDispatching
	})
	suspended := time.Since(began)
	afterSuspend := e.quiet(ctx, b, "after suspending")

	began = time.Now()
	for name := range templates {
		if err := framework.SetImage(ctx, e.Hub, ns, name, imageV2); err != nil {
			b.Fatalf("set image of %s: %v", name, err)
		}
	}
	e.waitWorks(ctx, b, "every Work carries "+imageV2, ns, n, waitLimit, func(w *workv1alpha1.Work) bool {
		return fixture.WorkImage(w) == imageV2
	})
	updated := time.Since(began)
	afterUpdate := e.quiet(ctx, b, "after updating the held templates")
	// A suspension that leaks is a correctness bug, not a cost: say so.
	counts, err := e.CountImage(ctx, ns, templates, imageV2)
	if err != nil {
		b.Fatal(err)
	}
	for m, c := range counts {
		if c > 0 {
			b.Errorf("%s runs %s on %d Deployments while dispatching is suspended", m, imageV2, c)
		}
	}

	if err := framework.PatchPolicy(ctx, e.Hub, ns, policyName, `{"spec":{"suspension":null}}`); err != nil {
		b.Fatalf("resume: %v", err)
	}
	began = time.Now()
	e.waitMembersHave(ctx, b, ns, templates, imageV2, waitLimit)
	resumed := time.Since(began)
	afterResume := e.quiet(ctx, b, "after resuming")
	cycle := afterResume.since(settled)
	b.ReportMetric(resumed.Seconds(), "s-to-resume")
	b.ReportMetric(cycle.writes.Total()/float64(n), "hub-writes/template-resume")
	b.ReportMetric((cycle.writes.Total()-cycle.own)/float64(n), "ctrl-writes/template-resume")
	b.Logf("suspend→update→resume of %d templates: every Work held %s after suspending; every Work at %s %s after the first update; every member at %s %s after resuming (hub quiet after %s)",
		n, suspended.Round(time.Millisecond), imageV2, updated.Round(time.Millisecond), imageV2,
		resumed.Round(time.Millisecond), afterResume.at.Sub(began).Round(time.Millisecond))
	b.Logf("  hub writes for the cycle: %.0f, of which the benchmark's own %.0f", cycle.writes.Total(), cycle.own)
	for _, step := range []struct {
		name string
		d    delta
	}{
		{"suspend", afterSuspend.since(settled)},
		{"update while held", afterUpdate.since(afterSuspend)},
		{"resume", afterResume.since(afterUpdate)},
	} {
		b.Logf("  %s step (benchmark's own writes: %.0f): %s", step.name, step.d.own, step.d.writes.Breakdown(n))
		b.Logf("    Events emitted:%s", step.d.events)
		b.Logf("    members: %s", step.d.members())
	}

	// 3. A settled fleet: nothing changes for settledPeriod.
	quietBegan := e.read(ctx, b)
	time.Sleep(settledPeriod)
	quiet := e.read(ctx, b).since(quietBegan)
	b.ReportMetric(quiet.writes.Total(), "settled-hub-writes")
	b.Logf("settled for %s: %s", settledPeriod, quiet.writes.Breakdown(0))
	b.Logf("  members: %s", quiet.members())
	if len(quiet.events) > 0 {
		b.Logf("  Events emitted while settled:%s", quiet.events)
	}

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

	if n, rows := e.log.errorsSince(errorsBefore); n > 0 {
		b.Logf("the controllers logged %d errors during this size (controller: error):%s", n, rows)
	}
}

// reading is the hub's write counters, its Events and the benchmark's own
// write count at one moment.
type reading struct {
	at     time.Time
	writes framework.Writes
	events eventCounts
	own    int64
	// memberWrites are the members' API server write counters, summed.
	memberWrites framework.Writes
}

// delta is what happened between two readings.
type delta struct {
	writes       framework.Writes
	events       eventCounts
	own          float64
	memberWrites framework.Writes
}

func (r reading) since(earlier reading) delta {
	return delta{writes: r.writes.Since(earlier.writes), events: r.events.since(earlier.events),
		own: float64(r.own - earlier.own), memberWrites: r.memberWrites.Since(earlier.memberWrites)}
}

// members formats the members' writes: every member object write costs a
// member API server, and an unchanged object must not be written at all.
func (d delta) members() string {
	var deployments float64
	for k, v := range d.memberWrites {
		if k.Resource == "deployments" {
			deployments += v
		}
	}
	return fmt.Sprintf("%.0f writes in the %d members, %.0f of them to Deployments",
		d.memberWrites.Total(), memberCount, deployments)
}

func (e *env) read(ctx context.Context, b *testing.B) reading {
	b.Helper()
	own := e.ownWrites.Load()
	w, err := framework.ScrapeWrites(ctx, e.HubCS)
	if err != nil {
		b.Fatal(err)
	}
	ev, err := e.events(ctx)
	if err != nil {
		b.Fatal(err)
	}
	members := framework.Writes{}
	for m, cs := range e.MemberCS {
		mw, err := framework.ScrapeWrites(ctx, cs)
		if err != nil {
			b.Fatalf("%s: %v", m, err)
		}
		for k, v := range mw {
			members[k] += v
		}
	}
	return reading{at: time.Now(), writes: w, events: ev, own: own, memberWrites: members}
}

// quiet waits until the hub is quiet (see waitQuiet) and returns a reading
// taken then. A hub still writing after settleLimit is reported, with what
// it kept writing, and the run goes on from there.
func (e *env) quiet(ctx context.Context, b *testing.B, when string) reading {
	b.Helper()
	start := e.read(ctx, b)
	w, at, quiet, err := e.waitQuiet(ctx, quietFor, settleLimit)
	if err != nil {
		b.Fatal(err)
	}
	if !quiet {
		b.Logf("the hub was still writing %s %s: %s", settleLimit, when, w.Since(start.writes).Breakdown(0))
	}
	r := e.read(ctx, b)
	// The counters as of the last write: the quiet seconds after it add
	// only leases, which are left out of quietness anyway.
	r.writes, r.at = w, at
	return r
}
