package framework

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"k8s.io/client-go/kubernetes"
)

// writeVerbs are the apiserver_request_total verbs that write: server-side
// apply is counted as APPLY, not PATCH.
var writeVerbs = map[string]bool{"POST": true, "PUT": true, "PATCH": true, "APPLY": true, "DELETE": true, "DELETECOLLECTION": true}

// WriteKey is one apiserver_request_total series that writes.
type WriteKey struct {
	Verb, Resource, Subresource, Code string
}

// resource is "works" or "works/status".
func (k WriteKey) resource() string {
	if k.Subresource == "" {
		return k.Resource
	}
	return k.Resource + "/" + k.Subresource
}

// Writes is a reading of the hub API server's write counters.
type Writes map[WriteKey]float64

// ScrapeWrites reads a kube-apiserver's /metrics (the hub's or a member's)
// and keeps the apiserver_request_total series of writing verbs.
func ScrapeWrites(ctx context.Context, cs kubernetes.Interface) (Writes, error) {
	return scrape(ctx, cs, func(verb string) bool { return writeVerbs[verb] })
}

// ScrapeRequests is ScrapeWrites with the reads kept too (GET, LIST), not
// the long-running WATCH: every request that costs the API server per call.
func ScrapeRequests(ctx context.Context, cs kubernetes.Interface) (Writes, error) {
	return scrape(ctx, cs, func(verb string) bool { return writeVerbs[verb] || verb == "GET" || verb == "LIST" })
}

func scrape(ctx context.Context, cs kubernetes.Interface, keep func(verb string) bool) (Writes, error) {
	raw, err := cs.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("GET /metrics: %w", err)
	}
	out := Writes{}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	const prefix = "apiserver_request_total{"
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, prefix) {
			continue
		}
		end := strings.LastIndexByte(line, '}')
		if end < 0 {
			continue
		}
		labels := parseLabels(line[len(prefix):end])
		if !keep(labels["verb"]) {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(line[end+1:]), 64)
		if err != nil {
			return nil, fmt.Errorf("/metrics: %q: %w", line, err)
		}
		out[WriteKey{Verb: labels["verb"], Resource: labels["resource"], Subresource: labels["subresource"],
			Code: labels["code"]}] += v
	}
	return out, sc.Err()
}

// parseLabels parses `a="x",b="y"` as the Prometheus text format writes it.
func parseLabels(s string) map[string]string {
	out := map[string]string{}
	for len(s) > 0 {
		eq := strings.IndexByte(s, '=')
		if eq < 0 || eq+1 >= len(s) || s[eq+1] != '"' {
			return out
		}
		name := strings.TrimLeft(s[:eq], ", ")
		var value strings.Builder
		i := eq + 2
		for ; i < len(s) && s[i] != '"'; i++ {
			if s[i] == '\\' && i+1 < len(s) {
				i++
				switch s[i] {
				case 'n':
					value.WriteByte('\n')
				default:
					value.WriteByte(s[i])
				}
				continue
			}
			value.WriteByte(s[i])
		}
		out[name] = value.String()
		if i+1 >= len(s) {
			break
		}
		s = s[i+1:]
	}
	return out
}

// Since is what was written between an earlier reading and this one.
func (w Writes) Since(earlier Writes) Writes { return Delta(w, earlier) }

// Delta is what each counter of now grew by since earlier (counters that
// did not grow are left out).
func Delta[K comparable, V int | float64, M ~map[K]V](now, earlier M) M {
	out := M{}
	for k, v := range now {
		if d := v - earlier[k]; d > 0 {
			out[k] = d
		}
	}
	return out
}

// Total is the number of writes, leaving out the resources named.
func (w Writes) Total(except ...string) float64 {
	var sum float64
	for k, v := range w {
		skip := false
		for _, e := range except {
			if k.Resource == e {
				skip = true
			}
		}
		if !skip {
			sum += v
		}
	}
	return sum
}

// Conflicts counts the writes the hub refused with 409 Conflict: each is a
// write that cost the API server and must be retried.
func (w Writes) Conflicts() float64 {
	var sum float64
	for k, v := range w {
		if k.Code == "409" {
			sum += v
		}
	}
	return sum
}

// contributor is the writes of one verb on one resource (all codes), and
// how many of them the API server refused with 409 Conflict.
type contributor struct {
	verb, resource    string
	count, conflicted float64
}

// biggest lists the writes by verb and resource, largest first.
func (w Writes) biggest() []contributor {
	sums := map[[2]string]*contributor{}
	for k, v := range w {
		key := [2]string{k.Verb, k.resource()}
		c := sums[key]
		if c == nil {
			c = &contributor{verb: k.Verb, resource: k.resource()}
			sums[key] = c
		}
		c.count += v
		if k.Code == "409" {
			c.conflicted += v
		}
	}
	out := make([]contributor, 0, len(sums))
	for _, c := range sums {
		out = append(out, *c)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].count != out[j].count {
			return out[i].count > out[j].count
		}
		return out[i].resource+out[i].verb < out[j].resource+out[j].verb
	})
	return out
}

// Breakdown formats the writes for a log line: total, per template, then
// every verb+resource with its share per template and its 409s.
func (w Writes) Breakdown(perTemplate int) string {
	var b strings.Builder
	total := w.Total()
	fmt.Fprintf(&b, "%.0f writes", total)
	if perTemplate > 0 {
		fmt.Fprintf(&b, " (%.2f/template)", total/float64(perTemplate))
	}
	if c := w.Conflicts(); c > 0 {
		fmt.Fprintf(&b, ", %.0f of them refused with 409 Conflict", c)
	}
	for _, c := range w.biggest() {
		fmt.Fprintf(&b, "\n\t\t%-7s %-26s %6.0f", c.verb, c.resource, c.count)
		if perTemplate > 0 {
			fmt.Fprintf(&b, "  %5.2f/template", c.count/float64(perTemplate))
		}
		if c.conflicted > 0 {
			fmt.Fprintf(&b, "  (409: %.0f)", c.conflicted)
		}
	}
	return b.String()
}

// WriteCounter counts the write requests the benchmark itself sends to the
// hub, so the controllers' share of the hub's writes can be told apart.
type WriteCounter struct {
	Next  http.RoundTripper
	Count *atomic.Int64
}

func (c WriteCounter) RoundTrip(req *http.Request) (*http.Response, error) {
	switch req.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		c.Count.Add(1)
	}
	return c.Next.RoundTrip(req)
}

// WaitQuiet waits until the API server cs talks to has written nothing but
// the resources named in except (leases, say) for quiet, reading its
// counters every half second, and returns the reading at the start of that
// quiet time and when it was taken. It gives up after limit, returning the
// last reading and ok=false: a server that never stops writing is itself a
// finding, for the caller to report.
func WaitQuiet(ctx context.Context, cs kubernetes.Interface, quiet, limit time.Duration, except ...string) (w Writes, at time.Time, ok bool, err error) {
	began := time.Now()
	last, err := ScrapeWrites(ctx, cs)
	if err != nil {
		return nil, time.Time{}, false, err
	}
	lastChange := time.Now()
	for {
		select {
		case <-ctx.Done():
			return nil, time.Time{}, false, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
		now, err := ScrapeWrites(ctx, cs)
		if err != nil {
			return nil, time.Time{}, false, err
		}
		if now.Since(last).Total(except...) > 0 {
			last, lastChange = now, time.Now()
		}
		if time.Since(lastChange) >= quiet {
			return last, lastChange, true, nil
		}
		if time.Since(began) > limit {
			return now, time.Now(), false, nil
		}
	}
}
