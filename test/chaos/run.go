package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/federator-dev/federator/apis/policy"
	"github.com/federator-dev/federator/config/crds"
	"github.com/federator-dev/federator/pkg/fleet"
	"github.com/federator-dev/federator/pkg/membership"
	"github.com/federator-dev/federator/test/framework"
)

const memberCount = 3

// selfTestVersion is the version --self-test writes straight to a member:
// no user write ever introduced it.
const selfTestVersion = "chaos.local/web:self-test-never-released"

type chaosRun struct {
	o       options
	dir     string
	fleet   *fleet.Fleet
	hub     client.Client
	members map[string]client.Client
	names   []string
	ctrls   replicas
	// faultRng draws what the operations' generator does not (which
	// replica a kill hits, hub restarts), so a seed's operations stay
	// those it chose before these faults existed.
	faultRng *rand.Rand

	recorders []*memberRecorder

	mu      sync.Mutex
	paused  string // the member whose API server is frozen now
	intents []intent
	faults  []fault
	ops     map[string]int
	began   time.Time
	// restarted counts replicas that exited by themselves and were
	// started again.
	restarted int
}

type result struct {
	converged time.Duration
	stale     []string // template in member: has X, want Y (no convergence)
}

func newRun(ctx context.Context, o options) (_ *chaosRun, err error) {
	dir, err := os.MkdirTemp("", "federator-chaos-")
	if err != nil {
		return nil, err
	}
	r := &chaosRun{o: o, dir: dir, members: map[string]client.Client{}, ops: map[string]int{}}
	defer func() {
		if err != nil {
			r.cleanup()
		}
	}()
	crdList, err := crds.CRDs()
	if err != nil {
		return nil, err
	}
	logf("starting a hub and %d members", memberCount)
	if r.fleet, err = fleet.Start(ctx, fleet.Options{Dir: filepath.Join(dir, "fleet"), Members: memberCount, BinDir: o.binDir, CRDs: crdList}); err != nil {
		return nil, fmt.Errorf("start the fleet (make binaries puts its programs in bin/): %w", err)
	}
	hubCfg := rest.CopyConfig(r.fleet.Hub.Config)
	hubCfg.QPS, hubCfg.Burst = 100, 200
	if r.hub, err = client.New(hubCfg, client.Options{Scheme: policy.NewScheme()}); err != nil {
		return nil, err
	}
	for _, m := range r.fleet.Members {
		if err := membership.Register(ctx, r.hub, m.Name, m.Config); err != nil {
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
	r.ctrls = newReplicas(o.replicas, o.federator, r.fleet.Hub.KubeconfigPath, dir,
		[]string{"--v=1", "--metrics-bind-address=0", "--webhook-bind-address=0", "--cluster-status-interval=1s",
			"--leader-elect-lease-duration=3s", "--leader-elect-renew-deadline=2s", "--leader-elect-retry-period=500ms"})
	if err := r.ctrls.startAll(ctx); err != nil {
		return nil, err
	}
	for _, m := range r.fleet.Members {
		dyn, err := dynamic.NewForConfig(m.Config)
		if err != nil {
			return nil, err
		}
		for _, t := range templates {
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
	for _, rec := range r.recorders {
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
	r.recorders = nil
	r.ctrls.killAll()
	if r.fleet != nil {
		if err := r.fleet.Stop(); err != nil {
			logf("stopping the fleet: %v", err)
		}
		r.fleet = nil
	}
	_ = os.RemoveAll(r.dir)
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
	g := &generator{rng: rand.New(rand.NewSource(r.o.seed)), seed: r.o.seed, members: r.names, gates: r.o.gates}
	r.faultRng = rand.New(rand.NewSource(r.o.seed ^ 0x5eed))
	r.began = time.Now()

	// Setup: the namespace, the templates at their first version, the
	// policy releasing them everywhere; everything arrives before the
	// first operation.
	sent := time.Now()
	if err := client.IgnoreAlreadyExists(r.hub.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}})); err != nil {
		return nil, err
	}
	first := map[string]string{}
	for _, t := range templates {
		first[t] = g.newVersion(t)
		if err := r.hub.Create(ctx, newTemplate(t, first[t])); err != nil {
			return nil, fmt.Errorf("create template %s: %w", t, err)
		}
	}
	s := initialState(first)
	if err := r.hub.Create(ctx, policyFor(s, r.names)); err != nil {
		return nil, fmt.Errorf("create policy: %w", err)
	}
	r.record(0, "setup", sent, time.Now(), s)
	if _, err := r.converge(ctx); err != nil {
		return nil, fmt.Errorf("setup: %w", err)
	}
	logf("setup done: every member has every template; %d operations follow", r.o.steps)

	pausedUntil := 0
	for step := 1; step <= r.o.steps; step++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		// Faults first, chosen by the same seeded source.
		if err := r.restartExited(); err != nil {
			return nil, err
		}
		if r.paused != "" && step >= pausedUntil {
			if err := r.resumeMember(); err != nil {
				return nil, err
			}
		}
		switch f := g.rng.Float64(); {
		case f < 0.07:
			down := time.Duration(g.rng.Intn(1500)) * time.Millisecond
			if !r.o.faults[faultKillController] {
				break
			}
			if err := r.killController(down); err != nil {
				return nil, err
			}
		case f < 0.14 && step >= pausedUntil: // no member is frozen
			member := r.names[g.rng.Intn(len(r.names))]
			pausedUntil = step + 2 + g.rng.Intn(7)
			if !r.o.faults[faultPauseMember] {
				break
			}
			if err := r.pauseMember(member); err != nil {
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
		if r.o.selfTest && step == (r.o.steps+1)/2 {
			if err := r.selfTestWrite(ctx, step); err != nil {
				return nil, err
			}
		}
		o, next := g.next(r.current())
		sent := time.Now()
		if err := write(ctx, r.hub, o, &next, r.names, &sent); err != nil {
			return nil, fmt.Errorf("step %d, %s: %w", step, o, err)
		}
		done := time.Now()
		if o.Kind == opDeletePolicy {
			next.DeletedSent, next.DeletedDone = sent, done
		}
		r.record(step, o.String(), sent, done, next)
		r.ops[o.Kind]++
		pause := time.Duration(g.rng.Intn(500)) * time.Millisecond
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(pause):
		}
	}
	if r.paused != "" {
		if err := r.resumeMember(); err != nil {
			return nil, err
		}
	}
	if err := r.restartExited(); err != nil {
		return nil, err
	}
	if err := r.resumeEverything(ctx); err != nil {
		return nil, err
	}
	return r.converge(ctx)
}

// resumeEverything lifts every hold, one write at a time, as a person
// would after an incident, and re-creates the policy if it is gone.
func (r *chaosRun) resumeEverything(ctx context.Context) error {
	step := r.o.steps + 1
	do := func(o op, change func(*state)) error {
		n := r.current().clone()
		change(&n)
		sent := time.Now()
		if err := write(ctx, r.hub, o, &n, r.names, &sent); err != nil {
			return fmt.Errorf("final resume, %s: %w", o, err)
		}
		r.record(step, "final "+o.String(), sent, time.Now(), n)
		step++
		return nil
	}
	s := r.current()
	if !s.PolicyExists {
		if err := do(op{Kind: opRecreatePolicy}, func(n *state) { n.PolicyExists, n.Frozen = true, nil }); err != nil {
			return err
		}
	}
	s = r.current()
	if s.PolicySuspended {
		if err := do(op{Kind: opPolicySuspend}, func(n *state) { n.PolicySuspended = false }); err != nil {
			return err
		}
	}
	for _, m := range slices.Sorted(maps.Keys(s.PolicyClusters)) {
		if err := do(op{Kind: opPolicyCluster, Member: m}, func(n *state) { n.PolicyClusters = toggle(n.PolicyClusters, m) }); err != nil {
			return err
		}
	}
	for _, name := range slices.Sorted(maps.Keys(s.PolicyGates)) {
		if err := do(op{Kind: opGateUnlist, Gate: name}, func(n *state) { n.PolicyGates = toggle(n.PolicyGates, name) }); err != nil {
			return err
		}
	}
	if s.SuspendAll || len(s.SuspendOn) > 0 {
		if err := do(op{Kind: opSuspendAll}, func(n *state) { n.SuspendAll, n.SuspendOn = false, nil }); err != nil {
			return err
		}
	}
	for _, t := range templates {
		ts := s.Templates[t]
		if ts.Suspended {
			if err := do(op{Kind: opTemplateSuspend, Template: t}, func(n *state) {
				x := n.Templates[t]
				x.Suspended = false
				n.Templates[t] = x
			}); err != nil {
				return err
			}
		}
		for _, m := range slices.Sorted(maps.Keys(ts.Clusters)) {
			if err := do(op{Kind: opTemplateCluster, Template: t, Member: m}, func(n *state) {
				x := n.Templates[t]
				x.Clusters = toggle(x.Clusters, m)
				n.Templates[t] = x
			}); err != nil {
				return err
			}
		}
	}
	return nil
}

// converge waits until every member stores the latest version of every
// template, and says how long that took from the last write.
func (r *chaosRun) converge(ctx context.Context) (*result, error) {
	s := r.current()
	r.mu.Lock()
	since := r.intents[len(r.intents)-1].Done
	r.mu.Unlock()
	deadline := time.Now().Add(r.o.converge)
	for {
		var stale []string
		for _, m := range r.names {
			for _, t := range templates {
				u := &unstructured.Unstructured{}
				u.SetGroupVersionKind(gvkOf(t))
				have := "absent"
				if err := r.members[m].Get(ctx, types.NamespacedName{Namespace: namespace, Name: t}, u); err == nil {
					have = versionOf(t)(u)
				} else if client.IgnoreNotFound(err) != nil {
					have = "error: " + err.Error()
				}
				if want := s.Templates[t].Version; have != want {
					stale = append(stale, fmt.Sprintf("%s in %s: has %s, want %s", t, m, have, want))
				}
			}
		}
		if len(stale) == 0 {
			return &result{converged: time.Since(since)}, nil
		}
		if time.Now().After(deadline) {
			return &result{stale: stale, converged: time.Since(since)}, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func gvkOf(template string) schema.GroupVersionKind {
	if isConfigMap(template) {
		return schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	}
	return schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
}

// killController SIGKILLs one replica, the leader or a standby (the
// operations cannot tell which leads), and starts it again after down.
func (r *chaosRun) killController(down time.Duration) error {
	c := r.ctrls[r.faultRng.Intn(len(r.ctrls))]
	from := time.Now()
	c.kill()
	time.Sleep(down)
	if err := c.start(); err != nil {
		return err
	}
	r.mu.Lock()
	r.faults = append(r.faults, fault{Kind: faultKillController, Member: c.name, From: from, To: time.Now()})
	r.mu.Unlock()
	logf("controller %s killed (SIGKILL) and restarted after %s", c.name, down)
	return nil
}

// restartExited starts again the replicas that exited by themselves,
// as a kubelet restarts a container.
func (r *chaosRun) restartExited() error {
	names, err := r.ctrls.restartExited()
	r.restarted += len(names)
	for _, n := range names {
		logf("controller %s had exited by itself (--controller-log keeps its log); started again", n)
	}
	return err
}

// restartEtcd stops a member's etcd and starts it again after down, with
// its data: the member's API server fails or holds requests meanwhile.
func (r *chaosRun) restartEtcd(member string, down time.Duration) error {
	m := r.fleet.Member(member)
	from := time.Now()
	if err := m.StopEtcd(); err != nil {
		return err
	}
	time.Sleep(down)
	if err := m.StartEtcd(); err != nil {
		return err
	}
	r.mu.Lock()
	r.faults = append(r.faults, fault{Kind: faultRestartEtcd, Member: member, From: from, To: time.Now()})
	r.mu.Unlock()
	logf("%s's etcd stopped and started again after %s", member, down)
	return nil
}

// restartHub stops the hub's API server and starts it again after down,
// on the same address (etcd keeps the data): the controllers' watches
// break, and a leader that cannot renew its Lease in time stops leading.
func (r *chaosRun) restartHub(down time.Duration) error {
	from := time.Now()
	if err := r.fleet.Hub.StopAPIServer(); err != nil {
		return err
	}
	time.Sleep(down)
	if err := r.fleet.Hub.StartAPIServer(); err != nil {
		return err
	}
	r.mu.Lock()
	r.faults = append(r.faults, fault{Kind: faultRestartHub, From: from, To: time.Now()})
	r.mu.Unlock()
	logf("hub API server stopped and started again after %s (back after %s)", down, time.Since(from).Round(time.Millisecond))
	return nil
}

func (r *chaosRun) pauseMember(member string) error {
	if err := r.fleet.Member(member).PauseAPIServer(); err != nil {
		return err
	}
	r.mu.Lock()
	r.paused = member
	r.faults = append(r.faults, fault{Kind: faultPauseMember, Member: member, From: time.Now()})
	r.mu.Unlock()
	logf("%s's API server frozen (SIGSTOP)", member)
	return nil
}

func (r *chaosRun) resumeMember() error {
	r.mu.Lock()
	member := r.paused
	r.mu.Unlock()
	if err := r.fleet.Member(member).ResumeAPIServer(); err != nil {
		return err
	}
	r.mu.Lock()
	r.paused = ""
	// The last fault is this pause unless a kill came between.
	for i := len(r.faults) - 1; i >= 0; i-- {
		if r.faults[i].Kind == faultPauseMember && r.faults[i].Member == member {
			r.faults[i].To = time.Now()
			break
		}
	}
	r.mu.Unlock()
	logf("%s's API server goes on (SIGCONT)", member)
	return nil
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
	if err := r.members[member].Patch(ctx, d, client.RawPatch(types.StrategicMergePatchType, patch), client.FieldOwner("chaos-self-test")); err != nil {
		return fmt.Errorf("self-test write to %s: %w", member, err)
	}
	r.ops[opSelfTestDirectMember]++
	logf("self-test: step %d wrote web-a image %s straight to %s", step, selfTestVersion, member)
	return nil
}

// verdict checks every recorded version, prints the summary or the
// violations, and returns the exit code.
func (r *chaosRun) verdict(res *result) int {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	objects := len(r.recorders)
	var all []stored
	var gaps []string
	var recErrs []error
	for _, rec := range r.recorders {
		if err := rec.finish(ctx); err != nil {
			recErrs = append(recErrs, err)
		}
		all = append(all, rec.stores()...)
		gaps = append(gaps, rec.gaps...)
	}
	r.recorders = nil
	slices.SortFunc(all, func(a, b stored) int { return a.Observed.Compare(b.Observed) })
	if r.o.keepLog != "" {
		if err := os.WriteFile(r.o.keepLog, []byte(strings.Join(r.ctrls.logs(), "\n")+"\n"), 0o644); err != nil {
			logf("--controller-log: %v", err)
		}
	}
	if r.o.history != "" {
		if err := writeHistory(r.o.history, r.intents, r.faults, all); err != nil {
			logf("--history: %v", err)
		} else {
			logf("history written to %s", r.o.history)
		}
	}
	c := &checker{intents: r.intents, faults: r.faults, grace: r.o.grace}
	var violations []*violation
	for _, s := range all {
		if v := c.check(s); v != nil {
			violations = append(violations, v)
		}
	}
	kills, pauses, hubRestarts, etcdRestarts := 0, 0, 0, 0
	for _, f := range r.faults {
		switch f.Kind {
		case faultKillController:
			kills++
		case faultPauseMember:
			pauses++
		case faultRestartHub:
			hubRestarts++
		case faultRestartEtcd:
			etcdRestarts++
		}
	}
	var opList []string
	for _, k := range slices.Sorted(maps.Keys(r.ops)) {
		opList = append(opList, fmt.Sprintf("%s %d", k, r.ops[k]))
	}
	replay := fmt.Sprintf("make chaos SEED=%d STEPS=%d", r.o.seed, r.o.steps)
	var args []string
	if r.o.selfTest {
		args = append(args, "--self-test")
	}
	if !r.o.gates {
		args = append(args, "--gates=false")
	}
	if r.o.replicas != defaultReplicas {
		args = append(args, fmt.Sprintf("--replicas=%d", r.o.replicas))
	}
	if len(r.o.faults) < len(allFaults) {
		args = append(args, "--faults="+strings.Join(slices.Sorted(maps.Keys(r.o.faults)), ","))
	}
	if len(args) > 0 {
		replay += " CHAOS_ARGS='" + strings.Join(args, " ") + "'"
	}
	summary := fmt.Sprintf("seed %d, %d steps in %s: operations %s; faults: %d controller kills (%d replicas), %d member freezes, %d hub restarts, %d member etcd restarts; "+
		"%d replicas restarted after exiting by themselves; "+
		"%d stored versions recorded on %d member objects, %d checked against %d user writes (grace %s), %d violations; "+
		"recorder gaps relisted: %d",
		r.o.seed, r.o.steps, time.Since(r.began).Round(time.Second), strings.Join(opList, ", "), kills, r.o.replicas, pauses, hubRestarts, etcdRestarts, r.restarted,
		len(all), objects, len(all), len(r.intents), r.o.grace, len(violations), len(gaps))
	code := 0
	for _, err := range recErrs {
		logf("recorder: %v", err)
	}
	for _, g := range gaps {
		logf("gap: %s", g)
	}
	if len(res.stale) > 0 {
		fmt.Printf("NO CONVERGENCE within %s after the final resume:\n  %s\n", r.o.converge, strings.Join(res.stale, "\n  "))
		code = exitViolation
	} else {
		summary += fmt.Sprintf("; converged %s after the final resume", res.converged.Round(time.Millisecond))
	}
	if r.o.selfTest {
		caught := false
		for _, v := range violations {
			if v.Stored.Version == selfTestVersion {
				caught = true
				fmt.Println("self-test: the checker reported the version written behind the hub's back:")
				fmt.Println(c.report(v, r.names, r.began))
			}
		}
		if !caught {
			fmt.Printf("SELF-TEST FAILED: the checker did not report %s, written straight to a member\n", selfTestVersion)
			code = exitViolation
		}
		var others []*violation
		for _, v := range violations {
			if v.Stored.Version != selfTestVersion {
				others = append(others, v)
			}
		}
		violations = others
	}
	for i, v := range violations {
		if i == 3 {
			fmt.Printf("... and %d more violations\n", len(violations)-3)
			break
		}
		fmt.Println(c.report(v, r.names, r.began))
		r.printControllerLines(v)
	}
	if len(violations) > 0 {
		code = exitViolation
	}
	if len(recErrs) > 0 && code == 0 {
		code = exitError
	}
	fmt.Println(summary)
	if code != 0 {
		fmt.Printf("reproduce: %s\n", replay)
	}
	return code
}

// printControllerLines prints what the controller logged about the
// violation's template and member around its time.
func (r *chaosRun) printControllerLines(v *violation) {
	var lines []string
	for _, l := range r.ctrls.logs() {
		if strings.Contains(l, v.Stored.Template) && strings.Contains(l, v.Stored.Member) {
			lines = append(lines, l)
		}
	}
	from, to := v.Stored.window()
	var near []string
	for _, l := range lines {
		if t, ok := logTime(l); ok && !t.Before(from.Add(-10*time.Second)) && !t.After(to.Add(2*time.Second)) {
			near = append(near, l)
		}
	}
	if len(near) == 0 {
		near = lines
	}
	near = near[max(0, len(near)-20):]
	if len(near) > 0 {
		fmt.Printf("controller log about %s and %s around then:\n  %s\n", v.Stored.Template, v.Stored.Member, strings.Join(near, "\n  "))
	}
}

func (r *chaosRun) printControllerTail(n int) {
	for _, c := range r.ctrls {
		lines := replicas{c}.logs()
		fmt.Fprintf(os.Stderr, "last lines of the controller's log (%s):\n%s\n", c.name, strings.Join(lines[max(0, len(lines)-n):], "\n"))
	}
}

// logTime reads the time of a controller log line (zap JSON, "ts" as
// RFC 3339 or as seconds since the epoch).
func logTime(line string) (time.Time, bool) {
	var entry struct {
		TS any `json:"ts"`
	}
	if i := strings.IndexByte(line, '{'); i > 0 { // replica-N: {...}
		line = line[i:]
	}
	if json.Unmarshal([]byte(line), &entry) != nil {
		return time.Time{}, false
	}
	switch ts := entry.TS.(type) {
	case string:
		t, err := time.Parse(time.RFC3339Nano, ts)
		return t, err == nil
	case float64:
		sec := int64(ts)
		return time.Unix(sec, int64((ts-float64(sec))*1e9)), true
	}
	return time.Time{}, false
}

func writeHistory(path string, intents []intent, faults []fault, stores []stored) error {
	raw, err := json.MarshalIndent(map[string]any{"writes": intents, "faults": faults, "stored": stores}, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, raw, 0o644)
}
