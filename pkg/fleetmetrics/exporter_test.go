package fleetmetrics

import (
	"context"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"
)

func deployment(ns, name, image string, replicas int32) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To(replicas), Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "web", Image: image}, {Name: "sidecar", Image: "envoy:1.0"}}}}},
	}
}

func steeringMap(data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: SteeringNamespace, Name: SteeringName}, Data: data}
}

// clock is a settable time for the exporter.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func startExporter(t *testing.T, members map[string]kubernetes.Interface, warn func(string)) (*Exporter, *clock) {
	t.Helper()
	var list []Member
	for _, name := range []string{"member1", "member2"} {
		if c, ok := members[name]; ok {
			list = append(list, Member{Name: name, Client: c})
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e, err := Start(ctx, list, warn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.Stop(); err != nil {
			t.Error(err)
		}
	})
	c := &clock{now: time.Date(2026, 12, 6, 2, 0, 0, 0, time.UTC)}
	e.Now = c.Now
	return e, c
}

// scrape gathers once and indexes every sample by its name and labels,
// e.g. `federator_fleet_http_requests_total{cluster=member1,code=500,deployment=web,namespace=shop,version=nginx:1.27}`
// and, for the histogram, `..._bucket{...,le=0.25}` and `..._count{...}`.
func scrape(t *testing.T, e *Exporter) map[string]float64 {
	t.Helper()
	families, err := e.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			key := func(suffix string, extra ...string) string {
				return f.GetName() + suffix + "{" + strings.Join(append(labels, extra...), ",") + "}"
			}
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				out[key("")] = m.GetCounter().GetValue()
			case dto.MetricType_HISTOGRAM:
				h := m.GetHistogram()
				out[key("_count")] = float64(h.GetSampleCount())
				out[key("_sum")] = h.GetSampleSum()
				for _, b := range h.GetBucket() {
					out[key("_bucket", "le="+strconv.FormatFloat(b.GetUpperBound(), 'g', -1, 64))] = float64(b.GetCumulativeCount())
				}
			}
		}
	}
	return out
}

func requests(cluster, ns, deploy, version, code string) string {
	return RequestsTotal + "{cluster=" + cluster + ",code=" + code + ",deployment=" + deploy + ",namespace=" + ns + ",version=" + version + "}"
}

func duration(suffix, cluster, ns, deploy, version string, extra ...string) string {
	labels := append([]string{"cluster=" + cluster, "deployment=" + deploy, "namespace=" + ns, "version=" + version}, extra...)
	return RequestDuration + suffix + "{" + strings.Join(labels, ",") + "}"
}

// Each member's traffic follows its own steering, per version, at a
// steady load per replica: what rate() over any window then measures.
func TestExporterServesEachMembersSteeredTraffic(t *testing.T) {
	member1 := fake.NewClientset(
		deployment("shop", "web", "nginx:1.27", 2),
		deployment("shop", "api", "nginx:1.26", 1),
		deployment("shop", "cart", "nginx:1.28-broken", 1),
		steeringMap(map[string]string{"1.27.errorRate": "0.2", "1.27.latency": "300ms"}),
	)
	member2 := fake.NewClientset(deployment("shop", "web", "nginx:1.27", 2))
	e, clock := startExporter(t, map[string]kubernetes.Interface{"member1": member1, "member2": member2}, nil)

	first := scrape(t, e)
	if got := first[requests("member1", "shop", "web", "nginx:1.27", "200")]; got != 0 {
		t.Errorf("requests before any time passed: %v", got)
	}
	clock.Add(10 * time.Second)
	got := scrape(t, e)
	want := map[string]float64{
		// 2 replicas × 10/s × 10 s, 20 % failing on member1 only.
		requests("member1", "shop", "web", "nginx:1.27", "200"): 160,
		requests("member1", "shop", "web", "nginx:1.27", "500"): 40,
		requests("member2", "shop", "web", "nginx:1.27", "200"): 200,
		requests("member2", "shop", "web", "nginx:1.27", "500"): 0,
		// Another version on member1 is not steered.
		requests("member1", "shop", "api", "nginx:1.26", "200"): 100,
		requests("member1", "shop", "api", "nginx:1.26", "500"): 0,
		// -broken fails half its requests by default.
		requests("member1", "shop", "cart", "nginx:1.28-broken", "200"): 50,
		requests("member1", "shop", "cart", "nginx:1.28-broken", "500"): 50,
		// 300ms typical: latencies from 150 to 450ms.
		duration("_count", "member1", "shop", "web", "nginx:1.27"):                    200,
		duration("_sum", "member1", "shop", "web", "nginx:1.27"):                      60,
		duration("_bucket", "member1", "shop", "web", "nginx:1.27", "le=0.1"):         0,
		duration("_bucket", "member1", "shop", "web", "nginx:1.27", "le=0.25"):        66,
		duration("_bucket", "member1", "shop", "web", "nginx:1.27", "le=0.5"):         200,
		duration("_bucket", "member2", "shop", "web", "nginx:1.27", "le=0.025"):       0,
		duration("_bucket", "member2", "shop", "web", "nginx:1.27", "le=0.05"):        100,
		duration("_bucket", "member2", "shop", "web", "nginx:1.27", "le=0.1"):         200,
		duration("_bucket", "member2", "shop", "api", "nginx:1.26", "le=0.1"):         0, // no such series
		duration("_bucket", "member1", "shop", "cart", "nginx:1.28-broken", "le=0.1"): 100,
	}
	for key, w := range want {
		if g := got[key]; math.Abs(g-w) > 0.001 {
			t.Errorf("%s = %v; want %v", key, g, w)
		}
	}

	By := t.Log
	By("the counters advance with time")
	clock.Add(10 * time.Second)
	later := scrape(t, e)
	if g := later[requests("member1", "shop", "web", "nginx:1.27", "500")]; g != 80 {
		t.Errorf("member1's errors after 20 s = %v; want 80", g)
	}

	By("the steering changes, and a Deployment moves to a new version")
	if _, err := member1.CoreV1().ConfigMaps(SteeringNamespace).Update(context.Background(),
		steeringMap(map[string]string{"1.27.errorRate": "0.5"}), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := member2.AppsV1().Deployments("shop").Update(context.Background(),
		deployment("shop", "web", "nginx:1.28", 4), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the informers see the changes", func() bool {
		cm, err1 := e.members[0].steering.ConfigMaps(SteeringNamespace).Get(SteeringName)
		d, err2 := e.members[1].deployments.Deployments("shop").Get("web")
		return err1 == nil && err2 == nil && cm.Data["1.27.errorRate"] == "0.5" && *d.Spec.Replicas == 4
	})
	scrape(t, e) // the new state from here on
	clock.Add(10 * time.Second)
	after := scrape(t, e)
	if g, w := after[requests("member1", "shop", "web", "nginx:1.27", "500")]-later[requests("member1", "shop", "web", "nginx:1.27", "500")], 100.0; g != w {
		t.Errorf("member1's errors in 10 s at 50%% = %v; want %v", g, w)
	}
	if _, ok := after[requests("member2", "shop", "web", "nginx:1.27", "200")]; ok {
		t.Errorf("member2 still serves nginx:1.27, which no Deployment runs there any more")
	}
	if g := after[requests("member2", "shop", "web", "nginx:1.28", "200")]; g != 400 {
		t.Errorf("member2's nginx:1.28 requests in 10 s on 4 replicas = %v; want 400", g)
	}
}

// A steering ConfigMap with a key it cannot use is said, naming the
// member, the ConfigMap and the key.
func TestExporterWarnsOfBadSteering(t *testing.T) {
	member1 := fake.NewClientset(steeringMap(map[string]string{"1.27.errorRate": "20%"}))
	warnings := make(chan string, 10)
	startExporter(t, map[string]kubernetes.Interface{"member1": member1}, func(s string) { warnings <- s })
	select {
	case w := <-warnings:
		for _, want := range []string{"member1: ConfigMap federator-system/federator-fleet-metrics", `key "1.27.errorRate": "20%" is no error rate`} {
			if !strings.Contains(w, want) {
				t.Errorf("warning %q does not say %q", w, want)
			}
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no warning about a bad steering key")
	}

	update := func(data map[string]string) {
		t.Helper()
		if _, err := member1.CoreV1().ConfigMaps(SteeringNamespace).Update(context.Background(), steeringMap(data), metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// Another key changes, the bad one stays: nothing new to say.
	update(map[string]string{"1.27.errorRate": "20%", "1.26.errorRate": "0.1"})
	// Mended, then broken again: said again.
	update(map[string]string{"1.27.errorRate": "0.2"})
	update(map[string]string{"1.27.latency": "soon"})
	select {
	case w := <-warnings:
		if !strings.Contains(w, `key "1.27.latency": "soon" is no latency`) {
			t.Errorf("warning %q; want the one about 1.27.latency (the bad error rate was said already)", w)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no warning about the new bad key")
	}
}

// The metrics are served over HTTP in Prometheus' text format.
func TestExporterServesHTTP(t *testing.T) {
	e, clock := startExporter(t, map[string]kubernetes.Interface{"member1": fake.NewClientset(deployment("shop", "web", "nginx:1.27", 1))}, nil)
	get := func() string {
		resp, err := http.Get(e.URL())
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return string(body)
	}
	get()
	clock.Add(3 * time.Second)
	body := get()
	want := `federator_fleet_http_requests_total{cluster="member1",code="200",deployment="web",namespace="shop",version="nginx:1.27"} 30`
	if !strings.Contains(body, want) {
		t.Errorf("%s does not serve %s:\n%s", e.URL(), want, body)
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
