package main

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestSettleFigures(t *testing.T) {
	s := func(ms ...int) []time.Duration {
		var out []time.Duration
		for _, m := range ms {
			out = append(out, time.Duration(m)*time.Millisecond)
		}
		return out
	}
	cases := []struct {
		settles []time.Duration
		want    string
	}{
		{s(900, 300, 2100), "converged after each of 3 settles: median 900ms, max 2.1s"},
		{s(5000, 1000, 3000, 2000), "converged after each of 4 settles: median 3s, max 5s"},
	}
	for _, c := range cases {
		if got := settleFigures(c.settles); got != c.want {
			t.Errorf("settleFigures(%v) = %q, want %q", c.settles, got, c.want)
		}
	}
}

// The replay line carries every flag that changes what a seed chooses or
// the fleet it runs on; a run with the defaults needs none.
func TestTheReplayLineCarriesTheFlagsThatChangeARun(t *testing.T) {
	defaults := options{seed: 7, steps: 80, gates: true, deletions: true, placement: true, jobs: true, rollouts: true, clusterLists: true,
		overrides: true, freezes: true, readyDeployments: true, replicas: defaultReplicas, faults: map[string]bool{}}
	for _, f := range allFaults {
		defaults.faults[f] = true
	}
	if got, want := defaults.replay(), "make chaos SEED=7 STEPS=80"; got != want {
		t.Errorf("with the defaults: %q, want %q", got, want)
	}
	o := defaults
	o.clusterLists, o.overrides, o.workloads, o.settleEvery = false, false, true, 100
	if got, want := o.replay(), "make chaos SEED=7 STEPS=80 CHAOS_ARGS='--cluster-lists=false --overrides=false --workloads --settle-every=100'"; got != want {
		t.Errorf("without lists, with workloads: %q, want %q", got, want)
	}
	o = defaults
	o.pullMembers = 1
	if got, want := o.replay(), "make chaos SEED=7 STEPS=80 CHAOS_ARGS='--pull-members=1'"; got != want {
		t.Errorf("with a Pull member: %q, want %q", got, want)
	}
	o = defaults
	o.readyDeployments = false
	if got, want := o.replay(), "make chaos SEED=7 STEPS=80 CHAOS_ARGS='--ready-deployments=false'"; got != want {
		t.Errorf("without the status writer: %q, want %q", got, want)
	}
	o = defaults
	o.faults = map[string]bool{faultKillController: true, faultLagInformers: true}
	if got, want := o.replay(), "make chaos SEED=7 STEPS=80 CHAOS_ARGS='--faults=kill-controller,lag-informers'"; got != want {
		t.Errorf("with two faults: %q, want %q", got, want)
	}
	o = defaults
	o.lagResources = slices.Clone(laggedResources)
	if got, want := o.replay(), "make chaos SEED=7 STEPS=80"; got != want {
		t.Errorf("every kind lagged: %q, want %q", got, want)
	}
	o.lagResources = []string{"gates"}
	if got, want := o.replay(), "make chaos SEED=7 STEPS=80 CHAOS_ARGS='--lag-resources=gates'"; got != want {
		t.Errorf("only the Gates lagged: %q, want %q", got, want)
	}
}

// With skew-clocks the figures say who sent the gate requests, how many
// the webhook refused and how many the hub stored off its clock.
func TestTheFiguresSayWhoSentTheGateRequests(t *testing.T) {
	f := figures{seed: 1, steps: 10, ops: map[string]int{opGateOpen: 9}, skewed: map[string]int{callerCLI: 4, callerWebhook: 3}, refused: 2, offClock: 1}
	if want := "gate requests on clocks up to 10m0s off: 4 by the CLI, 3 by the webhook and 2 it refused, 1 stored off the hub's clock"; !strings.Contains(f.summary(), want) {
		t.Errorf("summary %q does not say %q", f.summary(), want)
	}
	for _, row := range []string{
		"| faults: gate requests by the CLI on a clock up to 10m0s off | 4 |\n",
		"| faults: gate requests by the webhook on a clock up to 10m0s off, taken (refused) | 3 (2) |\n",
		"| gate requests stored off the hub's clock (violations) | 1 |\n",
	} {
		if !strings.Contains(f.table(), row) {
			t.Errorf("the table has no row %q:\n%s", row, f.table())
		}
	}
	f.skewed = nil
	if strings.Contains(f.summary()+f.table(), "gate requests") {
		t.Errorf("without skew-clocks the figures speak of gate requests:\n%s\n%s", f.summary(), f.table())
	}
}

// With workloads the members' own controllers write Deployment and Job
// statuses; the run never writes them too.
func TestWithWorkloadsNothingStandsInForTheMembersControllers(t *testing.T) {
	for _, tc := range []struct {
		ready, workloads, fakes bool
	}{{true, false, true}, {false, false, false}, {true, true, false}, {false, true, false}} {
		if got := (options{readyDeployments: tc.ready, workloads: tc.workloads}).fakesStatus(); got != tc.fakes {
			t.Errorf("--ready-deployments=%v --workloads=%v: the run writes statuses: %v, want %v", tc.ready, tc.workloads, got, tc.fakes)
		}
	}
}

// The summary and the table say the same figures, counted once; the table
// has a row per kind of operation and fault, what was checked, the
// violations and the times to converge.
func TestTheTableSaysTheSummarysFigures(t *testing.T) {
	f := figures{seed: 2026, steps: 1000, args: []string{"--workloads", "--settle-every=100"}, took: 14*time.Minute + 2*time.Second,
		ops:      map[string]int{opVersion: 600, opPolicyClusterList: 40, opRolloutPromote: 360, opSelfTestDirectMember: 1},
		replicas: 2, kills: 72, pauses: 50, hubRestarts: 32, etcdRestarts: 33, exited: 3,
		stored: 455, objects: 12, staged: 48, removals: 93, owned: 3, writes: 1210, grace: 2 * time.Second, violations: 1, gaps: 2,
		converged: 2100 * time.Millisecond, convergedInTime: true, converge: 2 * time.Minute,
		settles: []time.Duration{3 * time.Second, 8400 * time.Millisecond, 1 * time.Second, 2100 * time.Millisecond}, unsettled: 1}
	wantSummary := "seed 2026, 1000 steps in 14m2s: operations change-version 600, policy-cluster-list 40, rollout-promote 360, self-test-direct-member-write 1; " +
		"faults: 72 controller kills (2 replicas), 50 member freezes, 32 hub restarts, 33 member etcd restarts; " +
		"3 replicas restarted after exiting by themselves; " +
		"455 stored versions recorded on 12 member objects, 455 checked against 1210 user writes (grace 2s), 48 of them while a Rollout existed, 93 deletions checked, " +
		"3 objects the hub never placed checked, 1 violations; recorder gaps relisted: 2; converged 2.1s after the final resume; " +
		"converged after each of 4 settles: median 3s, max 8.4s"
	if got := f.summary(); got != wantSummary {
		t.Errorf("summary:\n%s\nwant\n%s", got, wantSummary)
	}
	table := f.table()
	for _, row := range []string{
		"| | seed 2026, 1000 steps (`--workloads --settle-every=100`), 14m2s |\n|---|---:|\n",
		"| operations | 1001 |\n",
		"| operations: change-version | 600 |\n",
		"| operations: policy-cluster-list | 40 |\n",
		"| operations: rollout-promote | 360 |\n",
		"| operations: self-test-direct-member-write | 1 |\n",
		"| faults: controller kills (2 replicas) | 72 |\n",
		"| faults: member API server freezes | 50 |\n",
		"| faults: hub API server restarts | 32 |\n",
		"| faults: member etcd restarts | 33 |\n",
		"| replicas that exited by themselves (started again) | 3 |\n",
		"| checked: stored versions, on 12 member objects | 455 |\n",
		"| checked: stored versions while a Rollout existed | 48 |\n",
		"| checked: member deletions | 93 |\n",
		"| checked: objects the hub never placed | 3 |\n",
		"| checked against: user writes (grace 2s) | 1210 |\n",
		"| recorder gaps relisted | 2 |\n",
		"| violations | 1 |\n",
		"| time to converge, over 4 settles (the final one too), 1 of them not within 2m0s | median 3s, max 8.4s |\n",
		"| time to converge after the final resume | 2.1s |\n",
	} {
		if !strings.Contains(table, row) {
			t.Errorf("the table has no row %q:\n%s", row, table)
		}
	}
	// The header, its rule, and a row per figure: 19 here.
	if n := strings.Count(table, "\n|") - 2; n != 19 {
		t.Errorf("the table has %d rows, want 19:\n%s", n, table)
	}

	f.pulls, f.agentKills, f.pullStored = []string{"member3"}, 4, 150
	if want := "3 objects the hub never placed checked, 1 violations; recorder gaps relisted: 2; Pull members member3: 4 agent kills, 150 stored versions checked there; "; !strings.Contains(f.summary(), want) {
		t.Errorf("with a Pull member the summary does not say %q: %s", want, f.summary())
	}
	for _, row := range []string{"| faults: agent kills (Pull members member3) | 4 |\n", "| checked: stored versions on the Pull members (member3) | 150 |\n"} {
		if !strings.Contains(f.table(), row) {
			t.Errorf("with a Pull member the table has no row %q:\n%s", row, f.table())
		}
	}
	f.pulls, f.agentKills, f.pullStored = nil, 0, 0

	f.convergedInTime, f.settles = false, f.settles[:1]
	table = f.table()
	if !strings.Contains(table, "| time to converge after the final resume | not within 2m0s |\n") || strings.Contains(table, "settles") {
		t.Errorf("a run that did not converge, with no settle before the final one:\n%s", table)
	}
	if strings.Contains(f.summary(), "converged") {
		t.Errorf("the summary of a run that did not converge says it did: %s", f.summary())
	}
}
