package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"
)

// What a run reports: the verdict over every recorded version, the
// summary, and the controllers' log lines around a violation.

// verdict checks every recorded version, prints the summary or the
// violations, and returns the exit code.
func (r *chaosRun) verdict(res *result) int {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	objects := len(r.recorders)
	var all []stored
	var removals []removal
	var gaps []string
	var recErrs []error
	for _, rec := range r.recorders {
		if err := rec.finish(ctx); err != nil {
			recErrs = append(recErrs, err)
		}
		all = append(all, rec.stores()...)
		removals = append(removals, rec.removals()...)
		gaps = append(gaps, rec.gaps...)
	}
	r.recorders = nil
	var foreign []string
	for _, rec := range r.foreign {
		if err := rec.finish(ctx); err != nil {
			recErrs = append(recErrs, err)
		}
		foreign = append(foreign, foreignChanges(rec, r.began)...)
	}
	owned := len(r.foreign)
	r.foreign = nil
	slices.SortFunc(all, func(a, b stored) int { return a.Observed.Compare(b.Observed) })
	if r.o.keepLog != "" {
		if err := os.WriteFile(r.o.keepLog, []byte(strings.Join(r.processes().logs(), "\n")+"\n"), 0o644); err != nil {
			logf("--controller-log: %v", err)
		}
	}
	if r.o.history != "" {
		if err := writeHistory(r.o.history, r.intents, r.faults, all, removals); err != nil {
			logf("--history: %v", err)
		} else {
			logf("history written to %s", r.o.history)
		}
	}
	c := &checker{intents: r.intents, faults: r.faults, grace: r.o.grace, stores: all}
	var violations []*violation
	staged := 0
	for _, s := range all {
		if v := c.check(s); v != nil {
			violations = append(violations, v)
		}
		if c.underRollout(s) {
			staged++
		}
	}
	for _, d := range removals {
		if v := c.checkRemoval(d); v != nil {
			violations = append(violations, v)
		}
	}
	if r.callers != nil {
		// A gate request the hub stored timed off its clock is a
		// violation, said in a line like a change of a member's own object.
		foreign = append(foreign, r.callers.offClock...)
	}
	f := figures{seed: r.o.seed, steps: r.o.steps, args: r.o.replayArgs(), took: time.Since(r.began), ops: r.ops, replicas: r.o.replicas, exited: r.restarted,
		stored: len(all), objects: objects, staged: staged, removals: len(removals), owned: owned, writes: len(r.intents),
		grace: r.o.grace, violations: len(violations) + len(foreign), gaps: len(gaps),
		converged: res.converged, convergedInTime: len(res.stale) == 0, converge: r.o.converge,
		settles: res.settles, unsettled: len(res.unsettled)}
	if r.callers != nil {
		f.skewed, f.refused, f.offClock = r.callers.byCaller, r.callers.refused, len(r.callers.offClock)
	}
	for _, a := range r.agents {
		f.pulls = append(f.pulls, a.member)
	}
	for _, s := range all {
		if slices.Contains(f.pulls, s.Member) {
			f.pullStored++
		}
	}
	for _, fl := range r.faults {
		switch fl.Kind {
		case faultKillController:
			f.kills++
		case faultKillAgent:
			f.agentKills++
		case faultPauseMember:
			f.pauses++
		case faultRestartHub:
			f.hubRestarts++
		case faultRestartEtcd:
			f.etcdRestarts++
		case faultLagInformers:
			f.lags++
		}
	}
	replay := r.o.replay()
	code := 0
	for _, err := range recErrs {
		logf("recorder: %v", err)
	}
	for _, g := range gaps {
		logf("gap: %s", g)
	}
	if len(res.stale) > 0 || len(res.unsettled) > 0 {
		code = exitViolation
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
		stage := r.stageSelfTest
		caughtStage := false
		for _, v := range violations {
			switch {
			case v.Stored.Version == selfTestVersion:
			case stage != nil && v.Why != "" && v.Removal == nil && v.Stored.Template == stage.template &&
				v.Stored.Member == stage.member && v.Stored.Version == stage.version:
				caughtStage = true
				fmt.Println("self-test: the checker reported the version written behind the hub's back to a stage not yet started:")
				fmt.Println(c.report(v, r.names, r.began))
			default:
				others = append(others, v)
			}
		}
		if stage != nil && !caughtStage {
			fmt.Printf("SELF-TEST FAILED: the checker did not report %s %s, written straight to %s before its stage started\n",
				stage.template, stage.version, stage.member)
			code = exitViolation
		}
		violations = others
		var otherForeign []string
		for _, f := range foreign {
			if strings.Contains(f, selfTestOwner) {
				fmt.Println("self-test: the checker reported the change of a member's own object:")
				fmt.Println(f)
			} else {
				otherForeign = append(otherForeign, f)
			}
		}
		if len(otherForeign) == len(foreign) {
			fmt.Printf("SELF-TEST FAILED: the checker did not report the change of a member's own ConfigMap %s/%s\n", namespace, memberOwn)
			code = exitViolation
		}
		foreign = otherForeign
	}
	for i, v := range violations {
		if i == 3 {
			fmt.Printf("... and %d more violations\n", len(violations)-3)
			break
		}
		fmt.Println(c.report(v, r.names, r.began))
		r.printControllerLines(v)
	}
	for _, f := range foreign {
		fmt.Println(f)
	}
	if len(violations) > 0 || len(foreign) > 0 {
		code = exitViolation
	}
	if len(recErrs) > 0 && code == 0 {
		code = exitError
	}
	fmt.Println(f.summary())
	fmt.Print(f.table())
	// Last, so that a log's tail (CI keeps only that) shows what stopped.
	if len(res.stale) > 0 {
		fmt.Printf("NO CONVERGENCE within %s after the final resume:\n  %s\n", r.o.converge, strings.Join(res.stale, "\n  "))
	}
	if len(res.unsettled) > 0 {
		fmt.Printf("NO CONVERGENCE within %s after %d of the %d settles:\n  %s\n", r.o.converge, len(res.unsettled), len(res.settles),
			strings.Join(res.unsettled, "\n  "))
	}
	if code != 0 {
		fmt.Printf("reproduce: %s\n", replay)
	}
	return code
}

// printControllerLines prints what the controller logged about the
// violation's template and member around its time.
func (r *chaosRun) printControllerLines(v *violation) {
	var lines []string
	for _, l := range r.processes().logs() {
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
	for _, c := range r.processes() {
		lines := replicas{c}.logs()
		fmt.Fprintf(os.Stderr, "last lines of the log of %s:\n%s\n", c.name, strings.Join(lines[max(0, len(lines)-n):], "\n"))
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

func writeHistory(path string, intents []intent, faults []fault, stores []stored, removals []removal) error {
	raw, err := json.MarshalIndent(map[string]any{"writes": intents, "faults": faults, "stored": stores, "removed": removals}, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, raw, 0o644)
}

// checkHistory judges the history a run wrote with --history again: a
// finding can be looked at, and the checker changed, without running the
// fleet again. It prints every violation and returns the exit code.
func checkHistory(path string, grace time.Duration) int {
	raw, err := os.ReadFile(path)
	if err != nil {
		logf("--check-history: %v", err)
		return exitError
	}
	var h struct {
		Writes  []intent
		Faults  []fault
		Stored  []stored
		Removed []removal
	}
	if err := json.Unmarshal(raw, &h); err != nil || len(h.Writes) == 0 {
		logf("--check-history: %s is no history --history wrote: %v", path, err)
		return exitError
	}
	c := &checker{intents: h.Writes, faults: h.Faults, grace: grace, stores: h.Stored}
	var members []string
	for _, s := range h.Stored {
		if !slices.Contains(members, s.Member) {
			members = append(members, s.Member)
		}
	}
	slices.Sort(members)
	n := 0
	for _, s := range h.Stored {
		if v := c.check(s); v != nil {
			n++
			fmt.Println(c.report(v, members, h.Writes[0].Sent))
		}
	}
	for _, d := range h.Removed {
		if v := c.checkRemoval(d); v != nil {
			n++
			fmt.Println(c.report(v, members, h.Writes[0].Sent))
		}
	}
	fmt.Printf("%s: %d stored versions and %d deletions checked against %d user writes (grace %s), %d violations\n",
		path, len(h.Stored), len(h.Removed), len(h.Writes), grace, n)
	if n > 0 {
		return exitViolation
	}
	return 0
}
