package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	workkeys "github.com/federator-dev/federator/apis/work"
	"github.com/federator-dev/federator/test/framework"
)

// The report: the figures a run prints (a table, or -o json), and the
// sums and quantiles they come from.

func quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(len(sorted)-1, int(q*float64(len(sorted))))]
}

// perTemplate is writes per template by "VERB resource".
func perTemplate(w framework.Writes, n int) map[string]float64 {
	out := map[string]float64{}
	for k, v := range w {
		if k.Resource == "leases" {
			continue
		}
		res := k.Resource
		if k.Subresource != "" {
			res += "/" + k.Subresource
		}
		key := k.Verb + " " + res
		if k.Code == "409" {
			key += " (409 Conflict)"
		}
		out[key] += v / float64(n)
	}
	return out
}

// series is one line of federator's metrics: its labels and value.
type series struct {
	labels map[string]string
	value  float64
}

// scrape reads every series of the metric named name (a histogram's
// name_bucket, name_sum, name_count are metrics of their own).
func scrape(ctx context.Context, addr, name string) ([]series, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("federator metrics: %w", err)
	}
	defer resp.Body.Close()
	var out []series
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	prefix := name + "{"
	for sc.Scan() {
		line := sc.Text()
		end := strings.LastIndexByte(line, '}')
		if !strings.HasPrefix(line, prefix) || end < 0 {
			continue
		}
		labels := map[string]string{}
		for _, l := range strings.Split(line[len(prefix):end], ",") {
			if k, v, ok := strings.Cut(l, "="); ok {
				labels[k] = strings.Trim(v, `"`)
			}
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(line[end+1:]), 64)
		if err != nil {
			return nil, fmt.Errorf("federator metrics: %q: %w", line, err)
		}
		out = append(out, series{labels: labels, value: v})
	}
	return out, sc.Err()
}

// scrapeDroppedEvents reads federator_events_dropped_total by reason.
func scrapeDroppedEvents(ctx context.Context, addr string) (map[string]float64, error) {
	s, err := scrape(ctx, addr, "federator_events_dropped_total")
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for _, x := range s {
		out[x.labels["reason"]] += x.value
	}
	return out, nil
}

// scrapeReconciles reads federator's controller_runtime_reconcile_total,
// by "controller (result)".
func scrapeReconciles(ctx context.Context, addr string) (map[string]float64, error) {
	s, err := scrape(ctx, addr, "controller_runtime_reconcile_total")
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for _, x := range s {
		out[x.labels["controller"]+" ("+x.labels["result"]+")"] += x.value
	}
	return out, nil
}

// holdWaitSlow is the wait a hold change counts as slow from: a bucket
// bound of federator_hold_queue_wait_seconds.
const holdWaitSlow = "0.25"

// holdCounters are federator_hold_queue_wait_seconds' counters for one
// controller and what it waited behind.
type holdCounters struct{ changes, seconds, slow float64 }

// scrapeHoldWaits reads federator_hold_queue_wait_seconds by "controller,
// behind X".
func scrapeHoldWaits(ctx context.Context, addr string) (map[string]holdCounters, error) {
	out := map[string]holdCounters{}
	for _, part := range []string{"count", "sum", "bucket"} {
		s, err := scrape(ctx, addr, "federator_hold_queue_wait_seconds_"+part)
		if err != nil {
			return nil, err
		}
		for _, x := range s {
			key := x.labels["controller"] + ", behind " + x.labels["behind"]
			c := out[key]
			switch {
			case part == "count":
				c.changes += x.value
				c.slow += x.value
			case part == "sum":
				c.seconds += x.value
			case x.labels["le"] == holdWaitSlow:
				c.slow -= x.value // those at most holdWaitSlow
			}
			out[key] = c
		}
	}
	return out, nil
}

// HoldWait is how long the hold changes of a phase waited in one
// controller's queue behind one thing.
type HoldWait struct {
	Changes     float64 `json:"changes"`
	MeanSeconds float64 `json:"meanSeconds"`
	Over250ms   float64 `json:"over250ms"`
}

// holdWaits turns two scrapeHoldWaits into the phase's waits, by
// "controller, behind X".
func holdWaits(after, before map[string]holdCounters) map[string]HoldWait {
	out := map[string]HoldWait{}
	for k, a := range after {
		b := before[k]
		if n := a.changes - b.changes; n > 0 {
			out[k] = HoldWait{Changes: n, MeanSeconds: (a.seconds - b.seconds) / n, Over250ms: a.slow - b.slow}
		}
	}
	return out
}

func perTemplateCount(m map[string]float64, n int) map[string]float64 {
	out := map[string]float64{}
	for k, v := range m {
		out[k] = v / float64(n)
	}
	return out
}

func machine() string {
	model := ""
	if raw, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(raw), "\n") {
			if strings.HasPrefix(line, "model name") {
				model = strings.TrimSpace(line[strings.IndexByte(line, ':')+1:])
				break
			}
		}
	}
	return fmt.Sprintf("%d cores, %s", runtime.NumCPU(), model)
}

func commit() string {
	out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
}

func (r *result) print(out io.Writer) {
	fmt.Fprintf(out, "benchfleet: %d Deployments × %d members; per member QPS/burst %s, %d writers; %s; %s; commit %s",
		r.Resources, r.Members, r.QPS, r.Concurrency, r.Machine, r.Date, r.Commit)
	if r.ControllerArgs != "" {
		fmt.Fprintf(out, "; federator controller %s", r.ControllerArgs)
	}
	if len(r.Skipped) > 0 {
		fmt.Fprintf(out, "; phases left out: %s", strings.Join(r.Skipped, ", "))
	}
	fmt.Fprint(out, "\n\n")
	t := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	ratio := func(a, b float64) string {
		if b <= 0 {
			return "-"
		}
		return fmt.Sprintf("%.1f×", a/b)
	}
	fmt.Fprintln(t, "MEASURE\tFEDERATOR\tDIRECT\tRATIO")
	fmt.Fprintf(t, "every member object exists\t%.2fs\t%.2fs\t%s\n", r.Propagate, r.BaselineCreate, ratio(r.Propagate, r.BaselineCreate))
	fmt.Fprintf(t, "  of which: every Work written on the hub\t%.2fs\t\t\n", r.WorksWritten)
	if r.ran(phaseCycle) {
		// A suspension writes every binding and every Work: at the hub's
		// measured write rate, that alone takes (M + M×K) / rate.
		floor := float64(r.Resources+r.Resources*r.Members) / r.HubWriteRate
		fmt.Fprintf(t, "suspension on every binding and Work\t%.2fs\t%.2fs\t%s (direct: %d writes at the hub's %.0f/s)\n",
			r.SuspendVisible, floor, ratio(r.SuspendVisible, floor), r.Resources+r.Resources*r.Members, r.HubWriteRate)
		holdFloor := float64(r.Resources+r.Resources*r.Members) / r.HubHoldRate
		fmt.Fprintf(t, "  against the hub's rate of hold patches\t\t%.2fs\t%s (%d patches at the hub's %.0f Work hold patches/s)\n",
			holdFloor, ratio(r.SuspendVisible, holdFloor), r.Resources+r.Resources*r.Members, r.HubHoldRate)
	}
	// What the hub alone needs for the writes each phase made, at the rate
	// it takes Works: below this no change to federator's own code goes
	// without cutting writes (or the hub's cost per write).
	for _, phase := range []struct {
		name   string
		writes framework.Writes
	}{{"propagation", r.propagationRaw}, {"suspend → update → resume", r.cycleRaw}} {
		n := phase.writes.Total("leases")
		fmt.Fprintf(t, "hub alone, the writes of the %s\t%.2fs\t\t(%.0f writes at the hub's %.0f Work writes/s)\n",
			phase.name, n/r.HubWorkWriteRate, n, r.HubWorkWriteRate)
	}
	if r.ran(phaseTemplateFreezes) {
		fmt.Fprintf(t, "one template frozen under load, p50\t%.2fs\t\t(%d tries while every template changes)\n", r.FreezeP50, r.FreezeTries)
		fmt.Fprintf(t, "one template frozen under load, p99\t%.2fs\t\t\n", r.FreezeP99)
	}
	if r.FleetFreezeTries > 0 {
		fmt.Fprintf(t, "fleet frozen under load → last member write, p50\t%.3fs\t\t(%d freezes while every template changes, median %.0f member writes/s before each; target p99 ≤ 1 s)\n", r.FleetFreezeP50, r.FleetFreezeTries, r.FleetFreezeLoad)
		fmt.Fprintf(t, "fleet frozen under load → last member write, p99\t%.3fs\t\t\n", r.FleetFreezeP99)
		fmt.Fprintf(t, "  then every Work records the freeze\t%.2fs\t%.2fs\t%s (%d Works at the hub's %.0f Work hold patches/s)\n",
			r.FleetFreezeRecorded, float64(r.Resources*r.Members)/r.HubHoldRate, ratio(r.FleetFreezeRecorded, float64(r.Resources*r.Members)/r.HubHoldRate), r.Resources*r.Members, r.HubHoldRate)
		fmt.Fprintf(t, "member objects changed after a freeze\t%d\t\t(must be 0; writes seen more than %s after it)\n", r.ChangedFrozen, fleetFreezeGrace)
	}
	if r.ran(phaseCycle) {
		fmt.Fprintf(t, "resume → new version, p50\t%.2fs\t\t\n", r.ResumeP50)
		fmt.Fprintf(t, "resume → new version, p99\t%.2fs\t\t\n", r.ResumeP99)
		fmt.Fprintf(t, "resume → new version, all\t%.2fs\t%.2fs\t%s\n", r.ResumeAll, r.BaselineUpdate, ratio(r.ResumeAll, r.BaselineUpdate))
		fmt.Fprintf(t, "member objects changed while suspended\t%d\t\t(must be 0)\n", r.ChangedHeld)
	}
	fmt.Fprintf(t, "CPU seconds, federator\t%.1f\t\t\n", r.FederatorCPU)
	fmt.Fprintf(t, "CPU seconds, hub API server\t%.1f\t\t\n", r.HubAPIServCPU)
	fmt.Fprintf(t, "federator peak RSS\t%.0f MB\t\t\n", r.FederatorPeak)
	for _, m := range []struct{ message, want string }{
		{workkeys.MessageDispatching, "(at least 2: propagation, resume)"},
		{workkeys.MessageSuspendDispatching, "(at least 1: suspension)"}} {
		fmt.Fprintf(t, "WorkDispatching Events per Work, %q\t%.2f\t\t%s\n", m.message, r.DispatchingEvents[m.message], m.want)
	}
	var dropped float64
	var why []string
	for _, k := range slices.Sorted(maps.Keys(r.EventsDropped)) {
		dropped += r.EventsDropped[k]
		why = append(why, fmt.Sprintf("%s %.0f", k, r.EventsDropped[k]))
	}
	fmt.Fprintf(t, "Events federator dropped\t%.0f\t\t%s\n", dropped, strings.Join(why, ", "))
	_ = t.Flush()
	printCPU(out, r.CPU, r.Resources*r.Members, runtime.NumCPU())
	if len(r.FreezeHoldWaits) > 0 {
		fmt.Fprintf(out, "\nhold changes of the freeze tries, by controller and what each waited behind in its queue:\n")
		keys := slices.Sorted(maps.Keys(r.FreezeHoldWaits))
		t := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
		for _, k := range keys {
			w := r.FreezeHoldWaits[k]
			fmt.Fprintf(t, "  %s\t%.0f changes\tmean %.0f ms\t%.0f over 250 ms\n", k, w.Changes, w.MeanSeconds*1000, w.Over250ms)
		}
		_ = t.Flush()
	}
	for _, part := range []struct {
		name string
		w    map[string]float64
	}{{"hub writes per template, propagation (leases left out)", r.PropagationWrites}, {"hub writes per template, suspend → update → resume (leases left out)", r.CycleWrites},
		{"hub requests per template, suspension until visible (reads included, leases left out)", r.SuspensionRequests},
		{"federator reconciles per template, propagation", r.PropagationReconciles},
		{"federator reconciles per template, suspend → update → resume", r.CycleReconciles}} {
		var total float64
		keys := make([]string, 0, len(part.w))
		for k, v := range part.w {
			total += v
			keys = append(keys, k)
		}
		slices.SortFunc(keys, func(a, b string) int {
			if part.w[a] != part.w[b] {
				if part.w[a] > part.w[b] {
					return -1
				}
				return 1
			}
			return strings.Compare(a, b)
		})
		fmt.Fprintf(out, "\n%s: %.2f\n", part.name, total)
		t := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
		for _, k := range keys {
			fmt.Fprintf(t, "  %s\t%.2f\n", k, part.w[k])
		}
		_ = t.Flush()
	}
}

func imageOf(d *appsv1.Deployment) string {
	if c := d.Spec.Template.Spec.Containers; len(c) > 0 {
		return c[0].Image
	}
	return ""
}

// dispatchingEvents is how many of Karmada's WorkDispatching Events the
// hub stores, per Work of works, by message: the sum of their counts (a
// repeat on the same Work PATCHes its count + 1).
func dispatchingEvents(ctx context.Context, hubCS kubernetes.Interface, works int) (map[string]float64, error) {
	list, err := hubCS.CoreV1().Events("").List(ctx, metav1.ListOptions{FieldSelector: "reason=" + workkeys.EventReasonWorkDispatching})
	if err != nil {
		return nil, fmt.Errorf("list the hub's WorkDispatching Events: %w", err)
	}
	out := map[string]float64{}
	for _, e := range list.Items {
		out[e.Message] += float64(max(e.Count, 1)) / float64(max(works, 1))
	}
	return out, nil
}
