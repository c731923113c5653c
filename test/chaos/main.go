// Command chaos is a seeded randomized checker of the hold invariant
// (docs/reliability.md: a version may be stored on a member only if, at the moment
// it is stored, the latest state the user wrote releases it for that
// cluster), in the spirit of Jepsen's checkers and etcd's robustness
// tests. On a local fleet (a hub and three members: bare API servers, or
// with --workloads members that run workloads, their own controllers
// writing the statuses) with `federator controller` as its own process, it:
//
//   - writes a seeded random sequence of operations to two Deployments, a
//     ConfigMap and a Job under one PropagationPolicy (new versions,
//     suspension by every annotation and spec.suspension, two or more
//     members suspended or resumed in one write as `--clusters` lists
//     do, members left out of the placement and put back, the policy
//     deleted and created again, Gates created closed, listed on the policy, opened
//     and closed by request, often --for a few seconds so they lapse, one
//     with spec.window and one opened by spec.schedules for 20 s every
//     minute, and deleted; templates deleted under the policy's
//     deletion delay, none, 3 s or 12 s, and created again, often
//     within it; a Rollout over the policy created, paused, resumed,
//     promoted and deleted), 0–500 ms apart so they race the controllers;
//   - injects faults between operations (faults.go): one of two controller
//     replicas SIGKILLed and restarted, a member API server frozen
//     (SIGSTOP) for a few operations, the hub's API server and a member's
//     etcd restarted; with --pull-members N the last N members are Pull
//     members, each served by a `federator agent` that is SIGKILLed and
//     restarted too (agent.go);
//   - records every version every member stores (framework.Recorder,
//     listing again on a gap) and logs every user write with the time it
//     was sent and returned and the state it left;
//   - checks that every stored version was the template's latest and
//     released for that member by some state the user wrote, at an
//     instant the store may have happened in (with a grace after a hold
//     returned, see checker.grace); that every copy a member deleted
//     was due: the template deleted or the member left out of the
//     placement, its deletion delay passed since, and not put back early
//     enough to take the countdown back (checkRemoval); that an object
//     of each member's own, which the hub never placed, never changes
//     (foreign.go); and, after a final resume of everything, that every
//     member converges to every latest version.
//
// How a stored version is judged (check.go): the store happened between
// the stored object's latest managedFields time (the API server's clock,
// to the second) and when the recorder received it. Each state the user
// wrote counts from when its write was sent until the next write
// returned, plus --grace (2 s): a version a controller was already
// applying when a hold returned is in flight, not a violation. A member
// frozen in that span stores what it received before the freeze only
// once it runs again, so the span stretches to the freeze's end plus
// grace. While the policy is deleted, its Works keep the holds and the
// manifests they last had (docs/reliability.md: holds outlive the policy), so the
// policy's part of the decision and the version are those of the state
// before the deletion; the template's own suspensions count throughout.
//
// Gates are judged by the clock (pkg/hold/gate.go): a gate the policy
// lists holds every cluster unless it exists and its newest request timed
// at or before that instant is an open one still within the gate's
// spec.window (or, for the scheduled gate, until the next schedule window
// starts or ends; then the schedule decides); so within one state's span a
// gate may open (a close --for flipping back, a schedule window) or lapse
// (an open --for, a window), and the state
// releases only in the parts where it is open, each followed by the grace
// (and a freeze's end) like the end of a span. While the policy is
// deleted, its gates count as open if they were at any instant between
// the deletion's write and the grace after it returned (the Works keep
// the last decision the controller made before it saw the deletion).
//
// A Rollout's stages (rollout.go): a version every hold released must
// also have been released by the Rollout, if one existed, before it was
// stored: every placed cluster of an earlier stage stored it a soak
// before, a stage that pauses was promoted after it was written, a stage
// with gates had them open at some instant since, and the Rollout was not
// paused (plus the grace).
//
// `make chaos [SEED=N] [STEPS=N]` runs it, `make chaos-long` the long run
// (1,000 operations on members that run workloads); a run prints its seed,
// a summary and a Markdown table of its figures (verdict_figures.go), and
// a violation prints the line that replays it. --self-test writes one
// member object behind the hub's back (and, with Rollouts, a version to a
// member whose stage has not started) and succeeds only if the checker
// reports it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/federator-dev/federator/test/framework"
)

type options struct {
	seed      int64
	steps     int
	grace     time.Duration
	selfTest  bool
	federator string
	binDir    string
	converge  time.Duration
	history   string
	keepLog   string
	faults    map[string]bool
	gates     bool
	deletions bool
	placement bool
	jobs      bool
	rollouts  bool
	// clusterLists: suspend and resume lists of members in one write
	// (opPolicyClusterList).
	clusterLists bool
	// overrides: edit an OverridePolicy and the Cluster label it targets
	// (overrides.go).
	overrides bool
	// freezes: freeze every member or some, and unfreeze (freeze.go).
	freezes bool
	// readyDeployments: write the members' Deployment statuses as rolled
	// out (ready.go); never with workloads.
	readyDeployments bool
	// workloads: the members run workloads (pkg/fleet's Workloads: their
	// own kube-controller-manager, kube-scheduler and kwok-simulated
	// nodes), whose controllers write the statuses.
	workloads bool
	replicas  int
	// settleEvery: every this many operations, lift every hold and wait
	// for every member to converge (0: only after the last operation).
	settleEvery int
	// pullMembers: the last this many members are in Pull mode, each
	// served by its own `federator agent` (agent.go).
	pullMembers int
	// lagResources are the kinds lag-informers episodes choose from
	// (laggedResources unless --lag-resources names fewer).
	lagResources []string
}

// defaultReplicas is how many replicas of the controller a run starts: two,
// as the install manifests run, so a kill meets a standby.
const defaultReplicas = 2

// allFaults are the faults a run injects unless --faults says otherwise:
// besides the kills, freezes and restarts (faults.go), lag-informers
// (lag.go) puts a proxy between the controllers and the hub, and
// skew-clocks (skew.go) sends gate requests by the CLI and the webhook on
// skewed clocks; kill-agent (agent.go) kills the agent of a Pull member,
// with --pull-members.
var allFaults = []string{faultKillController, faultKillAgent, faultPauseMember, faultRestartHub, faultRestartEtcd, faultLagInformers, faultSkewClocks}

// Exit codes: a violation (or no convergence) is 1; the run could not be
// made or judged (the fleet did not start, a write failed) is 2.
const (
	exitViolation = 1
	exitError     = 2
)

func main() {
	o := options{}
	flag.Int64Var(&o.seed, "seed", 0, "seed of the operations and faults (0: chosen from the clock and printed)")
	flag.IntVar(&o.steps, "steps", 80, "number of operations")
	flag.DurationVar(&o.grace, "grace", 2*time.Second,
		"how long after a write that holds returned a version it holds may still be stored (in flight in the controllers)")
	flag.BoolVar(&o.selfTest, "self-test", false,
		"write one member object directly, behind the hub's back, halfway through; succeed only if the checker reports it")
	flag.StringVar(&o.federator, "federator", "", "federator binary to test (default: bin/federator)")
	flag.StringVar(&o.binDir, "bin-dir", "", "directory of kube-apiserver and etcd (default: $KUBEBUILDER_ASSETS, else bin/)")
	flag.DurationVar(&o.converge, "converge-timeout", 2*time.Minute, "how long every member may take to converge after the final resume")
	recheck := flag.String("check-history", "",
		"judge the history a run wrote with --history (FILE) again, with this build's checker and --grace, and run nothing")
	flag.StringVar(&o.history, "history", "",
		"write the run's history here as JSON (user writes with the state each left, faults, stored versions), for a closer look")
	flag.StringVar(&o.keepLog, "controller-log", "", "copy the controller's log (every run of it, --v=1) here at the end")
	faults := flag.String("faults", strings.Join(allFaults, ","),
		"faults to inject, comma-separated; one left out is still drawn, so the operations stay those of the seed; "+
			"the faults are "+strings.Join(allFaults, ", "))
	flag.IntVar(&o.replicas, "replicas", defaultReplicas,
		"replicas of `federator controller`, with leader election (one leads, the others stand by); a kill hits any of them")
	flag.IntVar(&o.settleEvery, "settle-every", 0,
		"every N operations, stop the faults, lift every hold and time how long every member takes to have every latest version; "+
			"the report gives the median and the longest (0: only after the last operation); the operations and faults of a seed stay the same")
	flag.BoolVar(&o.deletions, "deletions", true,
		"also delete templates and create them again, and change the policy's deletion delay; --deletions=false chooses, for a seed, the operations it chose before deletions were added")
	flag.BoolVar(&o.placement, "placement", true,
		"also take members out of the policy's placement and put them back; --placement=false chooses, for a seed, the operations it chose before placement changes were added")
	flag.BoolVar(&o.jobs, "jobs", true,
		"also change a Job template (its version an annotation); --jobs=false chooses, for a seed, the operations it chose before the Job was added")
	flag.BoolVar(&o.rollouts, "rollouts", true,
		"also create a Rollout over the policy (its stages split the members), pause, resume and promote it, and delete it; "+
			"--rollouts=false chooses, for a seed, the operations it chose before Rollouts were added")
	flag.BoolVar(&o.clusterLists, "cluster-lists", true,
		"also suspend and resume two or more members of the policy in one write, as federator suspend|resume pp NAME --clusters a,b does; "+
			"--cluster-lists=false chooses, for a seed, the operations it chose before lists were added")
	flag.BoolVar(&o.overrides, "overrides", true,
		"also apply an OverridePolicy over the Deployments with a new image tag suffix, delete it, and label and unlabel the members' Clusters it targets, while Rollouts walk; "+
			"--overrides=false chooses, for a seed, the operations it chose before these edits were added")
	flag.BoolVar(&o.freezes, "freezes", true,
		"also freeze every member, or one or two, and unfreeze, as federator freeze [--clusters] and federator unfreeze do; "+
			"--freezes=false chooses, for a seed, the operations it chose before freezes were added")
	flag.BoolVar(&o.readyDeployments, "ready-deployments", true,
		"stand in for the members' deployment and job controllers: write each member Deployment's status as rolled out at its generation and each Job's as complete, "+
			"so Rollout stages become healthy and complete; ignored with --workloads, whose members' own controllers write them; "+
			"the operations and faults of a seed stay the same")
	flag.BoolVar(&o.workloads, "workloads", false,
		"members run workloads, as federator up starts them: each its own kube-controller-manager (deployment, replicaset, job, garbage-collector, ... controllers), "+
			"kube-scheduler and kwok-simulated nodes, and the hub a kube-controller-manager (namespace, garbage-collector); the Job template then runs (its pod completes at once), "+
			"and nothing stands in for the members' controllers (--ready-deployments is ignored); the operations and faults of a seed stay the same")
	flag.BoolVar(&o.gates, "gates", true,
		"also create, list, open (--for), close and delete Gates; --gates=false chooses, for a seed, the operations it chose before Gates were added")
	flag.IntVar(&o.pullMembers, "pull-members", 0,
		fmt.Sprintf("the last N of the %d members are Pull members (docs/pull-mode.md): registered in Pull mode, each served by a `federator agent` this program starts, "+
			"which kill-agent SIGKILLs and starts again; the operations and other faults of a seed stay the same", memberCount))
	lagResources := flag.String("lag-resources", strings.Join(laggedResources, ","),
		"the kinds whose watch events lag-informers holds back, by resource name, comma-separated (fewer to hunt one path: "+
			"an episode still comes at the same steps); the kinds are "+strings.Join(laggedResources, ", "))
	flag.Parse()
	for _, k := range strings.Split(*lagResources, ",") {
		if k = strings.TrimSpace(k); k == "" {
			continue
		}
		if !slices.Contains(laggedResources, k) {
			fmt.Fprintf(os.Stderr, "chaos: --lag-resources: %q is not a kind it can lag; the kinds are %s\n", k, strings.Join(laggedResources, ", "))
			os.Exit(exitError)
		}
		o.lagResources = append(o.lagResources, k)
	}
	if len(o.lagResources) == 0 {
		fmt.Fprintln(os.Stderr, "chaos: --lag-resources names no kind; leave lag-informers out of --faults instead")
		os.Exit(exitError)
	}
	o.faults = map[string]bool{}
	for _, f := range strings.Split(*faults, ",") {
		switch f = strings.TrimSpace(f); f {
		case "":
		default:
			if !slices.Contains(allFaults, f) {
				fmt.Fprintf(os.Stderr, "chaos: --faults: unknown fault %q; the faults are %s\n", f, strings.Join(allFaults, ", "))
				os.Exit(exitError)
			}
			o.faults[f] = true
		}
	}
	if err := validPullMembers(o.pullMembers, memberCount); err != nil {
		fmt.Fprintf(os.Stderr, "chaos: %v\n", err)
		os.Exit(exitError)
	}
	if o.replicas < 1 {
		fmt.Fprintln(os.Stderr, "chaos: --replicas must be 1 or more")
		os.Exit(exitError)
	}
	if *recheck != "" {
		os.Exit(checkHistory(*recheck, o.grace))
	}
	if o.seed == 0 {
		o.seed = time.Now().UnixNano() % 1_000_000
	}
	if o.steps < 1 {
		fmt.Fprintln(os.Stderr, "chaos: --steps must be 1 or more")
		os.Exit(exitError)
	}
	// envtest logs through controller-runtime; the fleet's own logs are
	// not this program's output.
	ctrllog.SetLogger(logr.Discard())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	code := run(ctx, o)
	stop()
	os.Exit(code)
}

// fakesStatus is whether the run writes the members' Deployment and Job
// statuses itself (ready.go): asked for, and no member controller writes
// them.
func (o options) fakesStatus() bool { return o.readyDeployments && !o.workloads }

// replay is the command that runs o's seed again with o's operations,
// faults and fleet: `make chaos`, with CHAOS_ARGS for every flag that
// changes what the seed chooses or how the run goes (replayArgs).
func (o options) replay() string {
	line := fmt.Sprintf("make chaos SEED=%d STEPS=%d", o.seed, o.steps)
	if args := o.replayArgs(); len(args) > 0 {
		line += " CHAOS_ARGS='" + strings.Join(args, " ") + "'"
	}
	return line
}

// replayArgs are the flags of o that change what its seed chooses or how
// the run goes, each as it is written on the command line.
func (o options) replayArgs() []string {
	var args []string
	for _, f := range []struct {
		set  bool
		flag string
	}{
		{o.selfTest, "--self-test"}, {!o.gates, "--gates=false"}, {!o.deletions, "--deletions=false"},
		{!o.placement, "--placement=false"}, {!o.jobs, "--jobs=false"}, {!o.rollouts, "--rollouts=false"},
		{!o.clusterLists, "--cluster-lists=false"}, {!o.overrides, "--overrides=false"},
		{!o.freezes, "--freezes=false"},
	} {
		if f.set {
			args = append(args, f.flag)
		}
	}
	if o.workloads {
		args = append(args, "--workloads")
	} else if !o.readyDeployments {
		args = append(args, "--ready-deployments=false")
	}
	if o.replicas != defaultReplicas {
		args = append(args, fmt.Sprintf("--replicas=%d", o.replicas))
	}
	if o.settleEvery > 0 {
		args = append(args, fmt.Sprintf("--settle-every=%d", o.settleEvery))
	}
	if o.pullMembers > 0 {
		args = append(args, fmt.Sprintf("--pull-members=%d", o.pullMembers))
	}
	if !slices.Equal(slices.Sorted(maps.Keys(o.faults)), slices.Sorted(slices.Values(allFaults))) {
		args = append(args, "--faults="+strings.Join(slices.Sorted(maps.Keys(o.faults)), ","))
	}
	if o.lagResources != nil && !slices.Equal(o.lagResources, laggedResources) {
		args = append(args, "--lag-resources="+strings.Join(o.lagResources, ","))
	}
	return args
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "chaos: %s "+format+"\n", append([]any{time.Now().UTC().Format("15:04:05.000")}, args...)...)
}

func run(ctx context.Context, o options) int {
	if o.binDir == "" {
		dir, err := framework.BinDir()
		if err != nil {
			logf("%v", err)
			return exitError
		}
		o.binDir = dir
	}
	if o.federator == "" {
		o.federator = filepath.Join(o.binDir, "federator")
	}
	if _, err := os.Stat(o.federator); err != nil {
		logf("%v (make build puts it in bin/)", err)
		return exitError
	}
	logf("seed %d, %d steps (replay: %s)", o.seed, o.steps, o.replay())
	r, err := newRun(ctx, o)
	if err != nil {
		logf("%v", err)
		return exitError
	}
	defer r.cleanup()
	res, err := r.execute(ctx)
	if err != nil {
		if errors.Is(err, context.Canceled) {
			logf("interrupted; everything started is being stopped")
		} else {
			logf("%v", err)
		}
		r.printControllerTail(40)
		return exitError
	}
	return r.verdict(res)
}
