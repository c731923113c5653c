package fleet

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/model"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// A fleet asked for Prometheus where there is none says how to get it,
// before it starts anything.
func TestPrometheusMissingSaysHowToInstallIt(t *testing.T) {
	tmp := isolateTempDir(t)
	_, err := Start(context.Background(), Options{Dir: filepath.Join(tmp, "fleet"), BinDir: tmp, Prometheus: true,
		PrometheusBinary: filepath.Join(tmp, "no-such-dir", "prometheus")})
	if err == nil || !strings.Contains(err.Error(), "apt-get install prometheus") {
		t.Fatalf("Start without the prometheus program: %v; want it to say apt-get install prometheus", err)
	}
	requireEmpty(t, tmp)
}

func requirePrometheus(t *testing.T) string {
	t.Helper()
	path, err := findPrometheus("")
	if err != nil {
		t.Skipf("%v (Debian's package; .ci/run installs it)", err)
	}
	return path
}

// Prometheus starts on the loopback with the configuration the fleet
// writes, scrapes the metrics it is given every second, keeps its address
// and data across StopPrometheus and StartPrometheus, and leaves no
// process and no file once stopped.
func TestPrometheusScrapesStopsAndStartsAgain(t *testing.T) {
	binary := requirePrometheus(t)
	tmp := isolateTempDir(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	registry := prometheus.NewRegistry()
	served := prometheus.NewCounter(prometheus.CounterOpts{Name: "federator_fleet_test_total", Help: "test"})
	registry.MustRegister(served)
	served.Add(7)
	mux := http.NewServeMux()
	mux.Handle("/members/metrics", promhttp.HandlerFor(registry, promhttp.HandlerOpts{}))
	target := httptest.NewServer(mux)
	defer target.Close()

	s, err := startPrometheus(ctx, binary, target.URL+"/members/metrics", &progressLog{w: testLog{t}})
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			_ = s.stop()
		}
	}()
	if !strings.HasPrefix(s.URL(), "http://127.0.0.1:") {
		t.Errorf("URL %s is not on the loopback", s.URL())
	}
	config, err := os.ReadFile(s.configPath())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"scrape_interval: 1s", `metrics_path: "/members/metrics"`, `targets: ["` + strings.TrimPrefix(target.URL, "http://") + `"]`, "honor_labels: true"} {
		if !strings.Contains(string(config), want) {
			t.Errorf("the configuration does not say %s:\n%s", want, config)
		}
	}
	if pids := processesUnder(t, tmp); len(pids) != 1 {
		t.Errorf("processes running from the fleet's temporary directory: %v; want one prometheus", pids)
	}

	query := prometheusQuery(ctx, s.URL())
	waitQuery := func(q string, want float64) {
		t.Helper()
		waitForSample(t, query, q, func(v float64) bool { return v == want }, fmt.Sprint(want))
	}
	waitQuery(`federator_fleet_test_total{job="federator-fleet-members"}`, 7)
	// Scrapes a second apart (Prometheus' default would be 15 s).
	waitForSample(t, query, `count_over_time(federator_fleet_test_total[5s])`, func(v float64) bool { return v >= 4 }, "at least 4")

	url := s.URL()
	if err := s.pause(); err != nil {
		t.Fatal(err)
	}
	if _, err := query("federator_fleet_test_total"); err == nil {
		t.Error("Prometheus still answers after it was stopped")
	}
	if pids := processesUnder(t, tmp); len(pids) != 0 {
		t.Errorf("processes left running after StopPrometheus: %v", pids)
	}
	served.Add(1)
	if err := s.start(ctx); err != nil {
		t.Fatal(err)
	}
	if s.URL() != url {
		t.Errorf("started again at %s; it was at %s", s.URL(), url)
	}
	// The samples from before the stop are still there.
	waitQuery(`min_over_time(federator_fleet_test_total[5m])`, 7)
	waitQuery(`federator_fleet_test_total`, 8)

	stopped = true
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	if pids := processesUnder(t, tmp); len(pids) != 0 {
		t.Errorf("processes left running after stop: %v", pids)
	}
	requireEmpty(t, tmp)
	if err := s.start(ctx); err == nil {
		t.Error("a stopped Prometheus started again")
	}
}

type errNoSample struct {
	query string
	value model.Value
}

func (e errNoSample) Error() string {
	return "no single sample for " + e.query + ": " + e.value.String()
}

// prometheusQuery runs instant queries against the Prometheus at url and
// returns their one sample.
func prometheusQuery(ctx context.Context, url string) func(string) (float64, error) {
	return func(q string) (float64, error) {
		c, err := api.NewClient(api.Config{Address: url})
		if err != nil {
			return 0, err
		}
		v, _, _, err := promv1.NewAPI(c).Query(ctx, q, time.Now())
		if err != nil {
			return 0, err
		}
		if vec, ok := v.(model.Vector); ok && len(vec) == 1 {
			return float64(vec[0].Value), nil
		}
		return 0, errNoSample{q, v}
	}
}

// waitForSample waits until query q gives a value ok accepts.
func waitForSample(t *testing.T, query func(string) (float64, error), q string, ok func(float64) bool, want string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		got, err := query(q)
		if err == nil && ok(got) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s = %v (%v); want %s", q, got, err, want)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// A fleet with Prometheus, from the start (Options.Prometheus) or added
// to a running fleet (AddPrometheus), serves each member's stand-in
// application metrics through it, says where (PrometheusURL,
// Dir/prometheus.url), and stops it with the rest.
func TestFleetWithPrometheus(t *testing.T) {
	requirePrometheus(t)
	bins := requireBinaries(t, false)
	for _, added := range []bool{false, true} {
		t.Run(map[bool]string{false: "Options.Prometheus", true: "AddPrometheus"}[added], func(t *testing.T) {
			testFleetWithPrometheus(t, bins, added)
		})
	}
}

func testFleetWithPrometheus(t *testing.T, bins string, added bool) {
	tmp := isolateTempDir(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := filepath.Join(t.TempDir(), "fleet")
	f, err := Start(ctx, Options{Dir: dir, Members: 1, BinDir: bins, Prometheus: !added, Log: testLog{t}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Stop() }()
	if added {
		if f.PrometheusURL() != "" {
			t.Fatalf("a fleet started without Prometheus has PrometheusURL %q", f.PrometheusURL())
		}
		if err := f.AddPrometheus(ctx, ""); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.AddPrometheus(ctx, ""); err == nil || !strings.Contains(err.Error(), "runs a Prometheus already, at "+f.PrometheusURL()) {
		t.Errorf("AddPrometheus on a fleet with Prometheus: %v; want an error naming the one it runs", err)
	}
	written, err := os.ReadFile(filepath.Join(dir, PrometheusURLFile))
	if err != nil || strings.TrimSpace(string(written)) != f.PrometheusURL() || f.PrometheusURL() == "" {
		t.Errorf("%s holds %q (%v); PrometheusURL is %q", PrometheusURLFile, written, err, f.PrometheusURL())
	}

	cs, err := kubernetes.NewForConfig(f.Members[0].Config)
	if err != nil {
		t.Fatal(err)
	}
	web := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27-broken"}}},
			},
		},
	}
	if _, err := cs.AppsV1().Deployments("default").Create(ctx, web, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	q := `sum(rate(federator_fleet_http_requests_total{cluster="member1",namespace="default",deployment="web",version="nginx:1.27-broken",code="500"}[5s]))`
	// One replica, 10 requests a second, half failing (-broken).
	waitForSample(t, prometheusQuery(ctx, f.PrometheusURL()), q, func(v float64) bool { return v > 4 && v < 6 }, "about 5")

	if err := f.Stop(); err != nil {
		t.Fatal(err)
	}
	if f.PrometheusURL() != "" || f.MetricsURL() != "" {
		t.Errorf("a stopped fleet still names its Prometheus %q and metrics %q", f.PrometheusURL(), f.MetricsURL())
	}
	if pids := processesUnder(t, tmp); len(pids) != 0 {
		t.Errorf("processes left running: %v", pids)
	}
	requireEmpty(t, tmp)
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the fleet's directory is left behind (%v)", err)
	}
}
