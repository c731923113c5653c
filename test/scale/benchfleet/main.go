// Command benchfleet measures propagation at the speed of the members: on a
// fresh local fleet (hub + K members, real kube-apiserver + etcd), M
// Deployments placed by one policy on every member, against a baseline in
// the same run: a plain client-go program writing the same M×K objects
// straight to the members, with federator's per-member QPS, burst and
// concurrency. Then one template after another frozen while every
// template takes a new image (freeze latency under load), and suspend all →
// update every template → resume.
//
// It prints one table (or JSON with -o json, for comparing commits). It
// asserts correctness only (every object arrived; no member object changed
// while suspended), never timing.
//
//	go run ./test/scale/benchfleet [--members 3] [--resources 500] [-o json]   (or: make bench-fleet)
//
// federator runs as its own process (bin/federator controller), so its CPU
// seconds and peak RSS are its own; the hub API server's CPU seconds are
// read from /proc, its writes from apiserver_request_total.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/kubernetes"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/federator-dev/federator/pkg/fleet"
	"github.com/federator-dev/federator/pkg/hub"
	"github.com/federator-dev/federator/test/framework"
)

const (
	imageV1 = "nginx:1.25"
	imageV2 = "nginx:1.26"
	// imageLoad is what every template takes while one template after
	// another is frozen (freezeUnderLoad).
	imageLoad = "nginx:1.25.1"
	// freezeTries is how many templates are frozen, one every freezeEvery.
	freezeTries = 50
	freezeEvery = 200 * time.Millisecond
	ns          = "bench"
	// waitLimit bounds a stuck step; it is not a statement about speed.
	waitLimit = 15 * time.Minute
	poll      = 100 * time.Millisecond
)

type options struct {
	members, resources, concurrency int
	qps                             float64
	burst                           int
	// freezes is how many fleet-wide freezes are timed under bulk load
	// (0: none).
	freezes int
	// freezeRecords is how many of those tries also wait for every Work
	// to record the freeze, and then to drop it.
	freezeRecords int
	// templateFreezes and cycle run the per-template freeze phase and the
	// suspend → update → resume cycle; at 2000 × 10 each costs minutes,
	// so a run that times fleet-wide freezes can leave them out.
	templateFreezes, cycle    bool
	output, binDir, federator string
	// controllerArgs are extra flags for federator controller, to compare
	// settings (--hub-qps, --workers, ...) in runs of their own.
	controllerArgs []string
}

// result is what one run measured; -o json prints it as is.
type result struct {
	Members     int    `json:"members"`
	Resources   int    `json:"resources"`
	Concurrency int    `json:"concurrencyPerMember"`
	QPS         string `json:"qpsBurstPerMember"`
	Machine     string `json:"machine"`
	Date        string `json:"date"`
	Commit      string `json:"commit"`
	// ControllerArgs are the extra flags federator ran with.
	ControllerArgs string `json:"controllerArgs,omitempty"`
	// Skipped names the phases this run left out (--template-freezes=false,
	// --cycle=false); their figures are 0 and not printed.
	Skipped []string `json:"skippedPhases,omitempty"`

	BaselineCreate float64 `json:"baselineCreateSeconds"`
	BaselineUpdate float64 `json:"baselineUpdateSeconds"`
	// HubWriteRate is what the hub API server takes, in writes per second,
	// from one client with federator's hub QPS writing ConfigMaps with 16
	// writers: the ceiling for anything that must write every binding and
	// Work, such as a suspension.
	HubWriteRate float64 `json:"hubWritesPerSecond"`
	// HubWorkWriteRate is the same for Works carrying one benchmark
	// Deployment each: what a custom resource write costs the hub.
	HubWorkWriteRate float64 `json:"hubWorkWritesPerSecond"`
	// HubHoldRate is the same for merge patches that hold a stored Work
	// (spec.suspendDispatching and the hold annotations), as the binding
	// controller writes them: what a suspension's writes cost the hub.
	HubHoldRate float64 `json:"hubWorkHoldPatchesPerSecond"`

	Propagate float64 `json:"propagateSeconds"`
	// WorksWritten is when every Work of the propagation was on the hub:
	// the detector's and binding controller's part, before the dispatch.
	WorksWritten   float64 `json:"worksWrittenSeconds"`
	SuspendVisible float64 `json:"suspensionVisibleSeconds"`
	ResumeP50      float64 `json:"resumeP50Seconds"`
	ResumeP99      float64 `json:"resumeP99Seconds"`
	ResumeAll      float64 `json:"resumeAllSeconds"`
	// FreezeP50 and FreezeP99 are one template's freeze under load: from
	// annotating it suspended, while every template takes a new image, to
	// every Work of it held on the hub (freezeTries tries).
	FreezeP50   float64 `json:"freezeP50Seconds"`
	FreezeP99   float64 `json:"freezeP99Seconds"`
	FreezeTries int     `json:"freezeTries"`
	// FreezeHoldWaits is how long the freeze phase's hold changes waited
	// in federator's queues, by "controller, behind worker|same-object".
	FreezeHoldWaits map[string]HoldWait `json:"freezeHoldWaits,omitempty"`
	ChangedHeld     int                 `json:"memberObjectsChangedWhileSuspended"`
	// FleetFreezeP50 and FleetFreezeP99 are the fleet-wide freeze (one
	// Freeze object) under bulk load: from the hub acknowledging its
	// create to the last member write the member watches saw after it
	// (FleetFreezeTries tries; 0 when none was seen).
	FleetFreezeP50   float64 `json:"fleetFreezeLastMemberWriteP50Seconds"`
	FleetFreezeP99   float64 `json:"fleetFreezeLastMemberWriteP99Seconds"`
	FleetFreezeTries int     `json:"fleetFreezeTries"`
	// FleetFreezeLoad is the median of the member writes the watches saw
	// in the second before each freeze: how busy the dispatcher was.
	FleetFreezeLoad float64 `json:"fleetFreezeMemberWritesPerSecondBefore"`
	// FleetFreezeRecorded is, over the first tries, the median time from
	// the freeze to every Work recording it (Dispatching=False, Frozen):
	// the durable, Karmada-visible record, which costs one Work write each.
	FleetFreezeRecorded float64 `json:"fleetFreezeEveryWorkRecordedSeconds"`
	// ChangedFrozen counts member writes the watches saw later than
	// fleetFreezeGrace after a freeze was acknowledged (must be 0).
	ChangedFrozen int `json:"memberObjectsChangedAfterFreeze"`

	PropagationWrites map[string]float64 `json:"hubWritesPerTemplatePropagation"`
	CycleWrites       map[string]float64 `json:"hubWritesPerTemplateCycle"`
	// SuspensionRequests are the hub requests per template, reads (GET,
	// LIST) included, from the suspension's write until it was on every
	// binding and Work: what the hub served in that time.
	SuspensionRequests map[string]float64 `json:"hubRequestsPerTemplateSuspension"`
	// Reconciles are federator's reconciles per template, by controller
	// and result (controller_runtime_reconcile_total): what its CPU goes
	// to, and how many were redone (requeue, error).
	PropagationReconciles map[string]float64 `json:"reconcilesPerTemplatePropagation"`
	CycleReconciles       map[string]float64 `json:"reconcilesPerTemplateCycle"`

	// CPU is what each phase cost, by role, and how many cores were busy:
	// the baseline's writes, federator's propagation, its suspension, and
	// the resume until every member had the new version.
	CPU map[string]cpuUse `json:"cpuByPhase"`

	FederatorCPU  float64 `json:"federatorCPUSeconds"`
	HubAPIServCPU float64 `json:"hubAPIServerCPUSeconds"`
	FederatorPeak float64 `json:"federatorPeakRSSMB"`
	// DispatchingEvents are Karmada's WorkDispatching Events the hub
	// stored per Work over the whole run, by message (summed counts): one
	// per change of a Work's Dispatching condition when none is dropped.
	DispatchingEvents map[string]float64 `json:"workDispatchingEventsPerWork"`
	// EventsDropped are the Events federator never wrote to the hub, by
	// reason (federator_events_dropped_total): 0 when every one was.
	EventsDropped  map[string]float64 `json:"eventsDropped"`
	propagationRaw framework.Writes
	cycleRaw       framework.Writes
}

func main() {
	o := options{}
	flag.IntVar(&o.members, "members", 3, "member clusters")
	flag.IntVar(&o.resources, "resources", 500, "Deployments placed on every member")
	flag.IntVar(&o.concurrency, "concurrency", hub.MemberWrites, "writers per member in the baseline (federator's writes in flight per member)")
	flag.Float64Var(&o.qps, "qps", float64(hub.DefaultOptions().Member.QPS), "client QPS per member, in the baseline as in federator")
	flag.IntVar(&o.burst, "burst", hub.DefaultOptions().Member.Burst, "client burst per member, in the baseline as in federator")
	flag.IntVar(&o.freezes, "freezes", 20, "fleet-wide freezes timed under bulk load (0: none)")
	flag.IntVar(&o.freezeRecords, "freeze-records", 3, "how many of the fleet-wide freezes also wait for every Work to record the freeze")
	flag.BoolVar(&o.templateFreezes, "template-freezes", true, "time one template's freeze under load (50 tries)")
	flag.BoolVar(&o.cycle, "cycle", true, "time suspend all → update every template → resume")
	flag.StringVar(&o.output, "o", "table", "output: table or json")
	flag.StringVar(&o.binDir, "bin-dir", "", "where kube-apiserver, etcd and federator are (default: $KUBEBUILDER_ASSETS, else bin/)")
	extra := flag.String("controller-args", "", `extra flags for "federator controller", space-separated (e.g. "--hub-qps=2000 --workers=16")`)
	flag.Parse()
	o.controllerArgs = strings.Fields(*extra)
	if o.output != "table" && o.output != "json" {
		fmt.Fprintf(os.Stderr, "benchfleet: -o %q: want table or json\n", o.output)
		os.Exit(2)
	}
	// envtest logs through controller-runtime; the fleet's own logs are not
	// the benchmark's output.
	ctrllog.SetLogger(logr.Discard())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	r, err := run(ctx, o)
	if err != nil {
		fmt.Fprintf(os.Stderr, "benchfleet: %v\n", err)
		os.Exit(1)
	}
	os.Exit(report(r, o.output, os.Stdout, os.Stderr))
}

// report prints the run's figures, then its verdict: the exit code is 1
// when a member object changed while every Work was suspended, the one
// thing federator promises (a run whose resume does not reach every
// member has already failed in run).
func report(r *result, output string, stdout, stderr io.Writer) int {
	if output == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(r)
	} else {
		r.print(stdout)
	}
	if err := r.verdict(); err != nil {
		fmt.Fprintf(stderr, "benchfleet: FAIL: %v\n", err)
		return 1
	}
	return 0
}

// verdict is what the run asserts beyond arriving: no member object
// changed between the suspension and the resume, nor after a freeze.
func (r *result) verdict() error {
	var errs []error
	if r.ChangedHeld != 0 {
		errs = append(errs, fmt.Errorf("%d member objects changed while suspended (must be 0): a held cluster received a change", r.ChangedHeld))
	}
	if r.ChangedFrozen != 0 {
		errs = append(errs, fmt.Errorf("%d member objects changed more than %s after a freeze (must be 0): a frozen fleet received a change", r.ChangedFrozen, fleetFreezeGrace))
	}
	return errors.Join(errs...)
}

// skipped names the phases o leaves out.
func (o options) skipped() []string {
	var out []string
	if !o.templateFreezes {
		out = append(out, phaseTemplateFreezes)
	}
	if !o.cycle {
		out = append(out, phaseCycle)
	}
	return out
}

// ran says whether the run timed phase (phaseTemplateFreezes, phaseCycle).
func (r *result) ran(phase string) bool { return !slices.Contains(r.Skipped, phase) }

const (
	phaseTemplateFreezes = "template-freezes"
	phaseCycle           = "cycle"
)

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "benchfleet: "+format+"\n", args...)
}

func run(ctx context.Context, o options) (r *result, err error) {
	if o.binDir == "" {
		if o.binDir, err = framework.BinDir(); err != nil {
			return nil, err
		}
	}
	o.federator = filepath.Join(o.binDir, "federator")
	if _, err := os.Stat(o.federator); err != nil {
		return nil, fmt.Errorf("%w (make build puts it in bin/)", err)
	}
	dir, err := os.MkdirTemp("", "benchfleet-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	logf("starting a hub and %d members", o.members)
	f, err := fleet.Start(ctx, fleet.Options{Dir: dir, Members: o.members, BinDir: o.binDir})
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, f.Stop()) }()

	r = &result{Skipped: o.skipped(), Members: o.members, Resources: o.resources, Concurrency: o.concurrency,
		QPS: fmt.Sprintf("%g/%d", o.qps, o.burst), ControllerArgs: strings.Join(o.controllerArgs, " "), Machine: machine(), Date: time.Now().UTC().Format(time.RFC3339), Commit: commit()}

	hubPID, err := f.Hub.APIServerPID()
	if err != nil {
		return nil, err
	}
	r.CPU = map[string]cpuUse{}
	logf("baseline: %d×%d Deployments written straight to the members", o.resources, o.members)
	if r.BaselineCreate, r.BaselineUpdate, err = baseline(ctx, f, o, r, func() cpuSample { return sampleCPU(0, hubPID) }); err != nil {
		return nil, fmt.Errorf("baseline: %w", err)
	}
	logf("baseline: created in %.2fs, updated in %.2fs", r.BaselineCreate, r.BaselineUpdate)
	if r.HubWriteRate, r.HubWorkWriteRate, r.HubHoldRate, err = hubWriteRate(ctx, f, min(o.resources*o.members, 2000)); err != nil {
		return nil, fmt.Errorf("hub write rate: %w", err)
	}
	logf("baseline: the hub takes %.0f ConfigMap writes/s, %.0f Work writes/s, %.0f Work hold patches/s", r.HubWriteRate, r.HubWorkWriteRate, r.HubHoldRate)
	return r, federated(ctx, f, o, dir, r)
}

func name(i int) string { return fmt.Sprintf("web-%05d", i) }

// quiet waits until the hub has written nothing but leases and events for
// 3 s, and returns its write counters then.
func quiet(ctx context.Context, hubCS kubernetes.Interface) (framework.Writes, error) {
	w, _, ok, err := framework.WaitQuiet(ctx, hubCS, 3*time.Second, waitLimit, "leases", "events")
	if err == nil && !ok {
		err = fmt.Errorf("the hub kept writing for %s", waitLimit)
	}
	return w, err
}

func waitFor(ctx context.Context, what string, done func() (bool, error)) error {
	deadline := time.Now().Add(waitLimit)
	for {
		ok, err := done()
		if err != nil {
			return fmt.Errorf("waiting for %s: %w", what, err)
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("waiting for %s: still not after %s", what, waitLimit)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(poll):
		}
	}
}

func parallel(workers, n int, do func(i int) error) error {
	var wg sync.WaitGroup
	next := make(chan int)
	errs := make(chan error, workers)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := do(i); err != nil {
					errs <- err
					for range next {
					}
					return
				}
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	close(errs)
	return <-errs
}
