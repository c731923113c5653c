package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/federator-dev/federator/apis/policy"
	"github.com/federator-dev/federator/config/install/crds"
	"github.com/federator-dev/federator/pkg/fleet"
	"github.com/federator-dev/federator/pkg/membership"
	"github.com/federator-dev/federator/test/framework"
)

const memberCount = 3

// selfTestVersion is the version --self-test writes straight to a member:
// no user write ever introduced it.
const selfTestVersion = "chaos.local/web:self-test-never-released"

// selfTestOwner is the field manager of --self-test's writes.
const selfTestOwner = "chaos-self-test"

type chaosRun struct {
	o       options
	dir     string
	fleet   *fleet.Fleet
	hub     client.Client
	members map[string]client.Client
	names   []string
	ctrls   replicas
	// agents serve the Pull members (--pull-members), one each (agent.go).
	agents replicas
	// faultRng draws what the operations' generator does not (which
	// replica a kill hits, hub restarts), so a seed's operations stay
	// those it chose before these faults existed.
	faultRng *rand.Rand
	// lag, when lag-informers is among the faults, is the proxy the
	// controllers reach the hub through; lagging is the index in faults
	// of the episode running now, -1 when none (lag.go).
	lag     *lagProxy
	lagging int
	// callers send gate requests on skewed clocks, when skew-clocks is
	// among the faults (skew.go); nil otherwise.
	callers *gateCallers

	recorders []*memberRecorder
	// foreign record each member's own object (foreign.go).
	foreign []*memberRecorder

	mu      sync.Mutex
	paused  string // the member whose API server is frozen now
	intents []intent
	faults  []fault
	ops     map[string]int
	began   time.Time
	// agentsWaiting are the kill-agent faults (indexes in faults) whose
	// agent waits for its frozen member to run again (killAgent).
	agentsWaiting []int
	// restarted counts replicas that exited by themselves and were
	// started again.
	restarted int
	// stageSelfTest is the store --self-test made for the stage check.
	stageSelfTest *stageSelfTest
}

type result struct {
	converged time.Duration
	stale     []string // template in member: has X, want Y (no convergence)
	// settles are the convergence times of the settles before the last
	// (--settle-every); unsettled says, for each that did not converge in
	// time, at which step and what was stale.
	settles   []time.Duration
	unsettled []string
}

func newRun(ctx context.Context, o options) (_ *chaosRun, err error) {
	dir, err := os.MkdirTemp("", "federator-chaos-")
	if err != nil {
		return nil, err
	}
	r := &chaosRun{o: o, dir: dir, members: map[string]client.Client{}, ops: map[string]int{}, lagging: -1}
	defer func() {
		if err != nil {
			r.cleanup()
		}
	}()
	crdList, err := crds.CRDs()
	if err != nil {
		return nil, err
	}
	if o.workloads {
		logf("starting a hub and %d members that run workloads (kube-controller-manager, kube-scheduler, kwok nodes)", memberCount)
	} else {
		logf("starting a hub and %d members", memberCount)
	}
	// With workloads the fleet keeps programs running (each member's
	// kube-controller-manager, kube-scheduler and kwok, the hub's
	// kube-controller-manager) and restarts one that exits, a few times;
	// its alerts say so on this run's log.
	if r.fleet, err = fleet.Start(ctx, fleet.Options{Dir: filepath.Join(dir, "fleet"), Members: memberCount, BinDir: o.binDir, CRDs: crdList,
		Workloads: o.workloads, Alerts: fleetAlerts{}}); err != nil {
		return nil, fmt.Errorf("start the fleet (make binaries puts its programs in bin/): %w", err)
	}
	hubCfg := rest.CopyConfig(r.fleet.Hub.Config)
	hubCfg.QPS, hubCfg.Burst = 100, 200
	if r.hub, err = client.New(hubCfg, client.Options{Scheme: policy.NewScheme()}); err != nil {
		return nil, err
	}
	var names []string
	for _, m := range r.fleet.Members {
		names = append(names, m.Name)
	}
	pulls := pullMembers(slices.Sorted(slices.Values(names)), o.pullMembers)
	for _, m := range r.fleet.Members {
		if slices.Contains(pulls, m.Name) {
			a, err := r.registerPull(ctx, m)
			if err != nil {
				return nil, err
			}
			r.agents = append(r.agents, a)
		} else if err := membership.Register(ctx, r.hub, m.Name, m.Config); err != nil {
			return nil, fmt.Errorf("register %s: %w", m.Name, err)
		}
		if r.members[m.Name], err = client.New(m.Config, client.Options{Scheme: policy.NewScheme()}); err != nil {
			return nil, err
		}
		r.names = append(r.names, m.Name)
	}
	slices.Sort(r.names)
	// Short leases: a SIGKILLed leader keeps its Lease until it
	// expires, and with the default 15 s the next controller led
	// nothing for that long, so the operations in between met no
	// controller at all. Leader election stays on, as in production.
	kubeconfig := r.fleet.Hub.KubeconfigPath
	if o.faults[faultLagInformers] {
		if r.lag, err = startLagProxy(r.fleet.Hub.Config); err != nil {
			return nil, fmt.Errorf("start the proxy that lags the controllers' informers: %w", err)
		}
		kubeconfig = lagProxyKubeconfig(dir)
		if err := fleet.WriteKubeconfig(kubeconfig, "hub", &rest.Config{Host: r.lag.url}); err != nil {
			return nil, err
		}
	}
	r.ctrls = newReplicas(o.replicas, o.federator, kubeconfig, dir,
		[]string{"--v=1", "--metrics-bind-address=0", "--webhook-bind-address=0", "--cluster-status-interval=1s",
			"--leader-elect-lease-duration=3s", "--leader-elect-renew-deadline=2s", "--leader-elect-retry-period=500ms"})
	if o.faults[faultSkewClocks] {
		// Each replica serves the gate webhook on a port of its own; the
		// leader's answers.
		var webhooks []string
		for _, c := range r.ctrls {
			port, err := fleet.FreePort()
			if err != nil {
				return nil, err
			}
			addr := fmt.Sprintf("127.0.0.1:%d", port)
			c.args = append(slices.Clip(c.args), "--webhook-bind-address="+addr)
			webhooks = append(webhooks, "http://"+addr)
		}
		r.callers = newGateCallers(o.seed, r.fleet.Hub.KubeconfigPath, webhooks)
	}
	if err := r.ctrls.startAll(ctx); err != nil {
		return nil, err
	}
	if len(r.agents) > 0 {
		logf("starting the agents of the Pull members %s", strings.Join(pulls, ", "))
		if err := r.agents.startAgents(ctx); err != nil {
			return nil, err
		}
	}
	for _, m := range r.fleet.Members {
		dyn, err := dynamic.NewForConfig(m.Config)
		if err != nil {
			return nil, err
		}
		for _, t := range r.templates() {
			rec, err := startRecorder(ctx, t, m.Name, templateObject(t), dyn, r.members[m.Name], versionOf(t))
			if err != nil {
				return nil, err
			}
			r.recorders = append(r.recorders, rec)
		}
	}
	return r, nil
}

// cleanup stops everything newRun and execute started, whatever state
// they are in: a frozen member first goes on (a stopped process would not
// act on the fleet's SIGTERM), then the recorders, the controller, the
// fleet and the temporary directory.
func (r *chaosRun) cleanup() {
	r.mu.Lock()
	paused := r.paused
	r.paused = ""
	r.mu.Unlock()
	if paused != "" && r.fleet != nil {
		_ = r.fleet.Member(paused).ResumeAPIServer()
	}
	for _, rec := range append(r.recorders, r.foreign...) {
		select {
		case <-rec.stop:
		default:
			close(rec.stop)
			<-rec.done
			rec.mu.Lock()
			for _, s := range rec.segments {
				s.Stop()
			}
			rec.mu.Unlock()
		}
	}
	r.recorders, r.foreign = nil, nil
	r.ctrls.killAll()
	r.agents.killAll()
	if r.lag != nil {
		r.lag.Close()
		r.lag = nil
	}
	if r.fleet != nil {
		if err := r.fleet.Stop(); err != nil {
			logf("stopping the fleet: %v", err)
		}
		r.fleet = nil
	}
	_ = os.RemoveAll(r.dir)
}

// templates are the templates the run uses: all of them, or without
// --jobs all but the Job.
func (r *chaosRun) templates() []string {
	if r.o.jobs {
		return templates
	}
	return slices.DeleteFunc(slices.Clone(templates), func(t string) bool { return t == job })
}

// fleetAlerts puts what pkg/fleet alerts about (a program of the fleet
// that exited, and its restart) on the run's log.
type fleetAlerts struct{}

func (fleetAlerts) Write(p []byte) (int, error) {
	for _, line := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		logf("fleet: %s", line)
	}
	return len(p), nil
}

func initialState(versions map[string]string) state {
	s := state{PolicyExists: true, Templates: map[string]templateState{}}
	for t, v := range versions {
		s.Templates[t] = templateState{Version: v}
	}
	return s
}

// record appends a user write to the intent log.
func (r *chaosRun) record(step int, what string, sent, done time.Time, s state) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.intents = append(r.intents, intent{Step: step, Op: what, Sent: sent, Done: done, State: s})
}

func (r *chaosRun) current() state {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.intents[len(r.intents)-1].State
}

func (r *chaosRun) execute(ctx context.Context) (*result, error) {
	g := &generator{rng: rand.New(rand.NewSource(r.o.seed)), seed: r.o.seed, members: r.names, gates: r.o.gates,
		deletions: r.o.deletions, placement: r.o.placement, rollouts: r.o.rollouts, clusterLists: r.o.clusterLists,
		overrides: r.o.overrides, freezes: r.o.freezes}
	r.faultRng = rand.New(rand.NewSource(r.o.seed ^ 0x5eed))
	// Its own source: with or without lag-informers, a seed's operations
	// and other faults are the same.
	lagRng := rand.New(rand.NewSource(r.o.seed ^ 0x1a9))
	r.began = time.Now()

	// Setup: the namespace, the templates at their first version, the
	// policy releasing them everywhere; everything arrives before the
	// first operation.
	sent := time.Now()
	if err := client.IgnoreAlreadyExists(r.hub.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}})); err != nil {
		return nil, err
	}
	first := map[string]string{}
	for _, t := range r.templates() {
		first[t] = g.newVersion(t)
		if err := r.hub.Create(ctx, newTemplate(t, first[t], r.o.workloads)); err != nil {
			return nil, fmt.Errorf("create template %s: %w", t, err)
		}
	}
	s := initialState(first)
	if r.callers != nil {
		if err := r.hub.Create(ctx, r.callers.secret()); err != nil {
			return nil, fmt.Errorf("create the gates' token Secret: %w", err)
		}
	}
	if err := r.hub.Create(ctx, policyFor(s, r.names)); err != nil {
		return nil, fmt.Errorf("create policy: %w", err)
	}
	r.record(0, "setup", sent, time.Now(), s)
	if _, err := r.converge(ctx); err != nil {
		return nil, fmt.Errorf("setup: %w", err)
	}
	if err := r.placeMemberOwn(ctx); err != nil {
		return nil, fmt.Errorf("setup: %w", err)
	}
	logf("setup done: every member has every template, and an object of its own; %d operations follow", r.o.steps)
	if r.o.fakesStatus() {
		readyCtx, stopReady := context.WithCancel(ctx)
		stopped := make(chan struct{})
		go func() { defer close(stopped); r.markDeploymentsReady(readyCtx) }()
		defer func() { stopReady(); <-stopped }()
	}

	pausedUntil := 0
	var settles []time.Duration
	var unsettled []string
	for step := 1; step <= r.o.steps; step++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		// Faults first, chosen by the same seeded source.
		if err := r.restartExited(); err != nil {
			return nil, err
		}
		if r.paused != "" && step >= pausedUntil {
			if err := r.resumeMember(ctx); err != nil {
				return nil, err
			}
		}
		switch d := g.drawFault(step, pausedUntil, len(r.agents)); {
		case d.killController:
			if !r.o.faults[faultKillController] {
				break
			}
			if err := r.killController(d.down); err != nil {
				return nil, err
			}
		case d.pause:
			pausedUntil = d.pausedUntil
			if !r.o.faults[faultPauseMember] {
				break
			}
			if err := r.pauseMember(d.member); err != nil {
				return nil, err
			}
		case d.killAgent:
			if !r.o.faults[faultKillAgent] {
				break
			}
			if err := r.killAgent(ctx, r.agents[d.agent], d.down); err != nil {
				return nil, err
			}
		}
		// These draw from faultRng, whether or not they are injected.
		if r.faultRng.Float64() < 0.03 {
			member, down := r.names[r.faultRng.Intn(len(r.names))], time.Duration(r.faultRng.Intn(3000))*time.Millisecond
			if r.o.faults[faultRestartEtcd] && member != r.paused {
				if err := r.restartEtcd(member, down); err != nil {
					return nil, err
				}
			}
		}
		if r.faultRng.Float64() < 0.03 {
			down := time.Duration(r.faultRng.Intn(2000)) * time.Millisecond
			if r.o.faults[faultRestartHub] {
				if err := r.restartHub(down); err != nil {
					return nil, err
				}
			}
		}
		if lagRng.Float64() < 0.15 {
			r.lagEpisode(lagRng)
		}
		if r.o.selfTest && step == (r.o.steps+1)/2 {
			if err := r.selfTestWrite(ctx, step); err != nil {
				return nil, err
			}
			if r.o.rollouts {
				if err := r.selfTestStage(ctx, g, step); err != nil {
					return nil, err
				}
			}
		}
		o, next := g.next(r.current())
		if o.Kind == opGateOpen || o.Kind == opGateClose {
			r.callers.draw(&o)
		}
		sent := time.Now()
		var refused *refusal
		switch err := write(ctx, r.hub, r.callers, o, &next, r.names, r.o.workloads, &sent); {
		case errors.As(err, &refused):
			// The hub refused the call: the gate is as it was.
			next = r.current()
			logf("step %d, %s: %v", step, o, err)
			r.callers.refused++
		case err != nil:
			return nil, fmt.Errorf("step %d, %s: %w", step, o, err)
		}
		done := time.Now()
		if o.Kind == opDeletePolicy {
			next.DeletedSent, next.DeletedDone = sent, done
		}
		what := o.String()
		if refused != nil {
			what += " (refused)"
		}
		r.record(step, what, sent, done, next)
		r.ops[o.Kind]++
		pause := time.Duration(g.rng.Intn(500)) * time.Millisecond
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(pause):
		}
		if r.o.settleEvery > 0 && step%r.o.settleEvery == 0 && step < r.o.steps {
			r.endLag()
			res, err := r.settle(ctx, step, "settle")
			if err != nil {
				return nil, err
			}
			pausedUntil = 0
			settles = append(settles, res.converged)
			if len(res.stale) > 0 {
				unsettled = append(unsettled, fmt.Sprintf("after step %d: %s", step, strings.Join(res.stale, "; ")))
			}
			logf("settled after step %d in %s", step, res.converged.Round(time.Millisecond))
		}
	}
	r.endLag()
	res, err := r.settle(ctx, r.o.steps, "final")
	if err != nil {
		return nil, err
	}
	res.settles, res.unsettled = append(settles, res.converged), unsettled
	return res, nil
}

// selfTestWrite stores a version no user ever wrote in a member, behind
// the hub's back: the checker must report it.
func (r *chaosRun) selfTestWrite(ctx context.Context, step int) error {
	member := r.names[0]
	if member == r.paused {
		member = r.names[1]
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	patch := fmt.Appendf(nil, `{"spec":{"template":{"spec":{"containers":[{"name":%q,"image":%q}]}}}}`, framework.Container, selfTestVersion)
	d := templateObject("web-a")
	if err := r.members[member].Patch(ctx, d, client.RawPatch(types.StrategicMergePatchType, patch), client.FieldOwner(selfTestOwner)); err != nil {
		return fmt.Errorf("self-test write to %s: %w", member, err)
	}
	// And a change of the member's own object, which check (d) must
	// report.
	own := memberOwnObject(member)
	if err := r.members[member].Patch(ctx, own, client.RawPatch(types.MergePatchType, []byte(`{"data":{"touched":"self-test"}}`)),
		client.FieldOwner(selfTestOwner)); err != nil {
		return fmt.Errorf("self-test write to %s: %w", member, err)
	}
	r.ops[opSelfTestDirectMember]++
	logf("self-test: step %d wrote web-a image %s and a change of its own ConfigMap straight to %s", step, selfTestVersion, member)
	return nil
}
