package main

import (
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/federator-dev/federator/pkg/fleetmetrics"
)

func get(h http.Handler, path string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	return rec
}

func TestHandler(t *testing.T) {
	for _, tc := range []struct {
		broken    bool
		wantReady int
	}{{false, http.StatusOK}, {true, http.StatusServiceUnavailable}} {
		h := handler("1.25", "pod-a", tc.broken, 0)
		for path, want := range map[string]int{"/": http.StatusOK, "/healthz": http.StatusOK, "/readyz": tc.wantReady, "/metrics": http.StatusOK, "/nope": http.StatusNotFound} {
			if rec := get(h, path); rec.Code != want {
				t.Errorf("broken=%t GET %s: %d, want %d", tc.broken, path, rec.Code, want)
			}
		}
		if got := get(h, "/").Body.String(); !strings.Contains(got, "federator web 1.25 on pod-a") {
			t.Errorf("GET /: %q", got)
		}
	}
}

// scrape is the handler's /metrics, each sample by name and labels, e.g.
// `federator_fleet_http_requests_total{code=500,version=1.27}` and
// `..._count{version=1.27}`; a histogram's bucket bounds are `..._le{...}`.
func scrape(t *testing.T, h http.Handler) map[string]string {
	t.Helper()
	rec := get(h, "/metrics")
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /metrics: %d %s", rec.Code, rec.Body)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(rec.Body)
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	out := map[string]string{}
	for name, f := range families {
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			key := func(suffix string) string { return name + suffix + "{" + strings.Join(labels, ",") + "}" }
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				out[key("")] = fmt.Sprint(m.GetCounter().GetValue())
			case dto.MetricType_HISTOGRAM:
				out[key("_count")] = fmt.Sprint(m.GetHistogram().GetSampleCount())
				var bounds []float64
				for _, b := range m.GetHistogram().GetBucket() {
					bounds = append(bounds, b.GetUpperBound())
				}
				out[key("_le")] = fmt.Sprint(bounds)
			default:
				out[key("")] = f.GetType().String() // a family the tests do not expect
			}
		}
	}
	return out
}

// After n requests to /, exactly ⌊n·rate⌋ failed with 500, each at its
// turn, and /metrics counts them by version and code, with their latency;
// requests to other endpoints are not counted.
func TestMetricsCountRequestsByCode(t *testing.T) {
	for _, tc := range []struct {
		broken    bool
		rate      float64
		n         int
		wantFails string // the requests that fail, 1-based
	}{
		{false, 0, 6, ""},
		{true, 0.5, 10, "2 4 6 8 10"},
		{false, 0.25, 8, "4 8"},
		{false, 0.1, 30, "10 20 30"},
		{false, 0.7, 10, "2 3 5 6 8 9 10"},
		{true, 1, 3, "1 2 3"},
	} {
		t.Run(fmt.Sprintf("rate %g", tc.rate), func(t *testing.T) {
			h := handler("1.27", "pod-a", tc.broken, tc.rate)
			// Both codes are there, at 0, before the first request.
			if got, want := scrape(t, h), metrics(0, 0); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("/metrics before any request:\n got %v\nwant %v", got, want)
			}
			var fails []string
			for i := 1; i <= tc.n; i++ {
				rec := get(h, "/")
				switch rec.Code {
				case http.StatusInternalServerError:
					fails = append(fails, fmt.Sprint(i))
				case http.StatusOK:
				default:
					t.Fatalf("request %d: %d %s", i, rec.Code, rec.Body)
				}
				get(h, "/readyz")
				get(h, "/healthz")
			}
			if got := strings.Join(fails, " "); got != tc.wantFails {
				t.Errorf("failed requests %q, want %q", got, tc.wantFails)
			}
			failed := len(fails)
			if got, want := scrape(t, h), metrics(tc.n-failed, failed); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("/metrics after %d requests:\n got %v\nwant %v", tc.n, got, want)
			}
		})
	}
}

// Rates whose n·rate falls just short of a whole number in floats still
// fail exactly ⌊n·rate⌋ of n requests (0.29·100 is 28.999999999999996).
func TestErrorRateIsExactForDecimalRates(t *testing.T) {
	for _, tc := range []struct {
		rate float64
		n    int
	}{{0.29, 100}, {0.57, 100}, {0.3, 10}} {
		h := handler("1.27", "pod-a", false, tc.rate)
		failed := 0
		for range tc.n {
			if get(h, "/").Code == http.StatusInternalServerError {
				failed++
			}
		}
		if want := int(math.Round(tc.rate * float64(tc.n))); failed != want {
			t.Errorf("rate %g: %d of %d requests failed, want %d", tc.rate, failed, tc.n, want)
		}
	}
}

// Concurrent requests each take their own turn: of 200 at once at rate
// 0.5, exactly 100 fail, and /metrics counts them all.
func TestConcurrentRequestsFailExactly(t *testing.T) {
	h := handler("1.27", "pod-a", true, 0.5)
	codes := make(chan int, 200)
	var wg sync.WaitGroup
	for range cap(codes) {
		wg.Go(func() { codes <- get(h, "/").Code })
	}
	wg.Wait()
	close(codes)
	count := map[int]int{}
	for code := range codes {
		count[code]++
	}
	if count[http.StatusOK] != 100 || count[http.StatusInternalServerError] != 100 {
		t.Errorf("codes %v, want 100 of 200 and 100 of 500", count)
	}
	if got, want := scrape(t, h), metrics(100, 100); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("/metrics:\n got %v\nwant %v", got, want)
	}
}

// metrics are what scrape should find of version 1.27 after ok requests
// served and failed ones failed: client_golang's default buckets, as the
// local fleet's.
func metrics(ok, failed int) map[string]string {
	return map[string]string{
		requestsTotal + "{code=200,version=1.27}": fmt.Sprint(ok),
		requestsTotal + "{code=500,version=1.27}": fmt.Sprint(failed),
		requestDuration + "_count{version=1.27}":  fmt.Sprint(ok + failed),
		requestDuration + "_le{version=1.27}":     fmt.Sprint(append(slices.Clone(prometheus.DefBuckets), math.Inf(1))),
	}
}

// The error rate comes from -error-rate, else WEB_ERROR_RATE, else the
// build: half for a broken one, none otherwise.
func TestOptionsErrorRate(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want float64
	}{
		{nil, nil, 0},
		{nil, map[string]string{"WEB_BROKEN": "true"}, 0.5},
		{[]string{"-broken"}, nil, 0.5},
		{nil, map[string]string{"WEB_BROKEN": "true", "WEB_ERROR_RATE": "0"}, 0},
		{nil, map[string]string{"WEB_ERROR_RATE": "0.2"}, 0.2},
		{[]string{"-error-rate", "1"}, map[string]string{"WEB_ERROR_RATE": "0.2", "WEB_BROKEN": "true"}, 1},
		{[]string{"-broken", "-error-rate=0"}, nil, 0},
	} {
		o, err := parseOptions(tc.args, func(k string) string { return tc.env[k] }, io.Discard)
		if err != nil || o.errorRate != tc.want {
			t.Errorf("args %q env %v: error rate %g, %v; want %g", tc.args, tc.env, o.errorRate, err, tc.want)
		}
	}
}

// A WEB_ERROR_RATE or -error-rate that is no number from 0 to 1 is
// refused, naming the variable or the flag and what it accepts.
func TestOptionsRefuseBadErrorRate(t *testing.T) {
	for _, bad := range []string{"abc", "50%", "1.5", "-0.1", "NaN", "Inf"} {
		for _, tc := range []struct {
			args []string
			env  map[string]string
			name string
		}{
			{nil, map[string]string{"WEB_ERROR_RATE": bad}, "WEB_ERROR_RATE=" + bad},
			{[]string{"-error-rate", bad}, nil, "flag -error-rate"},
		} {
			_, err := parseOptions(tc.args, func(k string) string { return tc.env[k] }, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tc.name) || !strings.Contains(err.Error(), "from 0 to 1") {
				t.Errorf("args %q env %v: %v, want an error naming %s and what it accepts", tc.args, tc.env, err, tc.name)
			}
		}
	}
}

// The image serves the local fleet's metric names, and its broken build
// fails as often as the local fleet's broken versions do by default.
func TestMatchesFleetmetrics(t *testing.T) {
	if requestsTotal != fleetmetrics.RequestsTotal || requestDuration != fleetmetrics.RequestDuration {
		t.Errorf("metrics %s, %s; the local fleet's are %s, %s", requestsTotal, requestDuration, fleetmetrics.RequestsTotal, fleetmetrics.RequestDuration)
	}
	if brokenErrorRate != fleetmetrics.BrokenErrorRate {
		t.Errorf("broken error rate %g; the local fleet's is %g", brokenErrorRate, fleetmetrics.BrokenErrorRate)
	}
}
