package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// The figures of a run, counted once by verdict and said twice: the
// one-line summary, and a Markdown table a person can paste into the docs
// (docs/reliability.md's long runs).

type figures struct {
	seed  int64
	steps int
	// args are the run's flags that change it (options.replayArgs).
	args []string
	took time.Duration
	// ops counts the operations by kind.
	ops map[string]int
	// Faults by kind; exited are replicas that exited by themselves and
	// were started again.
	kills, pauses, hubRestarts, etcdRestarts, exited int
	// lags are lag-informers episodes (only when --faults names it).
	lags int
	// skewed are the gate requests skew-clocks sent by caller (the CLI,
	// the webhook), refused those the webhook refused, offClock those the
	// hub stored timed off its clock (violations too).
	skewed            map[string]int
	refused, offClock int
	replicas          int
	// pulls are the Pull members (--pull-members), agentKills the kills of
	// their agents, pullStored the stored versions recorded on them.
	pulls                  []string
	agentKills, pullStored int
	// stored versions recorded on objects member objects, staged of them
	// while a Rollout existed; removals are member deletions checked,
	// owned the objects the hub never placed, writes the user writes the
	// versions were checked against, with grace.
	stored, objects, staged, removals, owned, writes int
	grace                                            time.Duration
	violations, gaps                                 int
	// converged is how long the members took after the final resume
	// (convergedInTime: within converge); settles are the times of every
	// settle, the final one last, unsettled how many did not converge.
	converged       time.Duration
	convergedInTime bool
	converge        time.Duration
	settles         []time.Duration
	unsettled       int
}

// total is the number of operations.
func (f figures) total() int {
	n := 0
	for _, c := range f.ops {
		n += c
	}
	return n
}

// summary is the run's one line.
func (f figures) summary() string {
	var opList []string
	for _, k := range slices.Sorted(maps.Keys(f.ops)) {
		opList = append(opList, fmt.Sprintf("%s %d", k, f.ops[k]))
	}
	s := fmt.Sprintf("seed %d, %d steps in %s: operations %s; faults: %d controller kills (%d replicas), %d member freezes, %d hub restarts, %d member etcd restarts; "+
		"%d replicas restarted after exiting by themselves; "+
		"%d stored versions recorded on %d member objects, %d checked against %d user writes (grace %s), %d of them while a Rollout existed, %d deletions checked, "+
		"%d objects the hub never placed checked, %d violations; "+
		"recorder gaps relisted: %d",
		f.seed, f.steps, f.took.Round(time.Second), strings.Join(opList, ", "), f.kills, f.replicas, f.pauses, f.hubRestarts, f.etcdRestarts, f.exited,
		f.stored, f.objects, f.stored, f.writes, f.grace, f.staged, f.removals, f.owned, f.violations, f.gaps)
	if len(f.pulls) > 0 {
		s += fmt.Sprintf("; Pull members %s: %d agent kills, %d stored versions checked there", strings.Join(f.pulls, ", "), f.agentKills, f.pullStored)
	}
	if f.lags > 0 {
		s += fmt.Sprintf("; %d informer lags (one kind's watch events up to %s late)", f.lags, maxLag)
	}
	if f.skewed != nil {
		s += fmt.Sprintf("; gate requests on clocks up to %s off: %d by the CLI, %d by the webhook and %d it refused, %d stored off the hub's clock",
			maxSkew, f.skewed[callerCLI], f.skewed[callerWebhook], f.refused, f.offClock)
	}
	if f.convergedInTime {
		s += fmt.Sprintf("; converged %s after the final resume", f.converged.Round(time.Millisecond))
	}
	if len(f.settles) > 1 {
		s += "; " + settleFigures(f.settles)
	}
	return s
}

// table is the run's figures as a Markdown table, one row per figure:
// operations (in all and by kind), faults by kind, what was checked,
// violations, and how long the members took to converge.
func (f figures) table() string {
	var b strings.Builder
	row := func(what string, v any) { fmt.Fprintf(&b, "| %s | %v |\n", what, v) }
	run := fmt.Sprintf("seed %d, %d steps", f.seed, f.steps)
	if len(f.args) > 0 {
		run += " (`" + strings.Join(f.args, " ") + "`)"
	}
	fmt.Fprintf(&b, "\n| | %s, %s |\n|---|---:|\n", run, f.took.Round(time.Second))
	row("operations", f.total())
	for _, k := range slices.Sorted(maps.Keys(f.ops)) {
		row("operations: "+k, f.ops[k])
	}
	row(fmt.Sprintf("faults: controller kills (%d replicas)", f.replicas), f.kills)
	if len(f.pulls) > 0 {
		row(fmt.Sprintf("faults: agent kills (Pull members %s)", strings.Join(f.pulls, ", ")), f.agentKills)
	}
	row("faults: member API server freezes", f.pauses)
	row("faults: hub API server restarts", f.hubRestarts)
	row("faults: member etcd restarts", f.etcdRestarts)
	if f.lags > 0 {
		row("faults: informer lags", f.lags)
	}
	if f.skewed != nil {
		row(fmt.Sprintf("faults: gate requests by the CLI on a clock up to %s off", maxSkew), f.skewed[callerCLI])
		row(fmt.Sprintf("faults: gate requests by the webhook on a clock up to %s off, taken (refused)", maxSkew), fmt.Sprintf("%d (%d)", f.skewed[callerWebhook], f.refused))
		row("gate requests stored off the hub's clock (violations)", f.offClock)
	}
	row("replicas that exited by themselves (started again)", f.exited)
	row(fmt.Sprintf("checked: stored versions, on %d member objects", f.objects), f.stored)
	if len(f.pulls) > 0 {
		row(fmt.Sprintf("checked: stored versions on the Pull members (%s)", strings.Join(f.pulls, ", ")), f.pullStored)
	}
	row("checked: stored versions while a Rollout existed", f.staged)
	row("checked: member deletions", f.removals)
	row("checked: objects the hub never placed", f.owned)
	row(fmt.Sprintf("checked against: user writes (grace %s)", f.grace), f.writes)
	row("recorder gaps relisted", f.gaps)
	row("violations", f.violations)
	if len(f.settles) > 1 {
		n, median, longest := settleStats(f.settles)
		what := fmt.Sprintf("time to converge, over %d settles (the final one too)", n)
		if f.unsettled > 0 {
			what += fmt.Sprintf(", %d of them not within %s", f.unsettled, f.converge)
		}
		row(what, fmt.Sprintf("median %s, max %s", median.Round(time.Millisecond), longest.Round(time.Millisecond)))
	}
	if f.convergedInTime {
		row("time to converge after the final resume", f.converged.Round(time.Millisecond))
	} else {
		row("time to converge after the final resume", "not within "+f.converge.String())
	}
	return b.String()
}

// settleStats are how many settles there were, the median of their
// convergence times and the longest.
func settleStats(settles []time.Duration) (n int, median, longest time.Duration) {
	sorted := slices.Sorted(slices.Values(settles))
	return len(sorted), sorted[len(sorted)/2], sorted[len(sorted)-1]
}

// settleFigures says how long the members took to converge after each
// settle: how many, the median and the longest.
func settleFigures(settles []time.Duration) string {
	n, median, longest := settleStats(settles)
	return fmt.Sprintf("converged after each of %d settles: median %s, max %s", n, median.Round(time.Millisecond), longest.Round(time.Millisecond))
}
