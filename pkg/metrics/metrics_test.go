package metrics

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	gatingv1alpha1 "github.com/federator-dev/federator/apis/gating/v1alpha1"
	"github.com/federator-dev/federator/apis/policy"
)

func work(ns, name, reason string) *workv1alpha1.Work {
	w := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if reason != "" {
		w.Status.Conditions = []metav1.Condition{{Type: workv1alpha1.WorkDispatching, Reason: reason}}
	}
	return w
}

// series scrapes c as Prometheus would: `name{label="value",...}` → value.
func series(t *testing.T, c prometheus.Collector) map[string]float64 {
	t.Helper()
	registry := prometheus.NewPedanticRegistry()
	if err := registry.Register(c); err != nil {
		t.Fatal(err)
	}
	families, err := registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			sort.Strings(labels)
			out[f.GetName()+"{"+strings.Join(labels, ",")+"}"] = m.GetGauge().GetValue()
		}
	}
	return out
}

func TestWorkCountsFollowWorkEvents(t *testing.T) {
	counts := newWorkCounts()
	held := work("karmada-es-member2", "web", "SuspendDispatching")
	fresh := work("karmada-es-member2", "api", "")
	gone := work("karmada-es-member1", "old", "Dispatching")
	for _, w := range []*workv1alpha1.Work{
		work("karmada-es-member1", "web", "Dispatching"),
		gone, held, fresh,
		work("default", "w", "Dispatching"), // not an execution namespace
	} {
		counts.OnAdd(w, true)
	}

	released := held.DeepCopy()
	released.Status.Conditions[0].Reason = "Dispatching"
	counts.OnUpdate(held, released)
	counts.OnUpdate(released, released.DeepCopy()) // a resync changes nothing
	counts.OnDelete(gone)
	// A Work deleted while the watch was down arrives as a tombstone.
	counts.OnDelete(toolscache.DeletedFinalStateUnknown{Key: "karmada-es-member2/api", Obj: fresh})

	got := series(t, collector{reader: fake.NewClientBuilder().WithScheme(policy.NewScheme()).Build(),
		works: counts, synced: func() bool { return true }})
	want := map[string]float64{
		`federator_works{cluster="member1",dispatching="Dispatching"}`: 1,
		`federator_works{cluster="member2",dispatching="Dispatching"}`: 1,
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("scraped %v\nwant %v", got, want)
	}
}

// TestScrapeCopiesNoWork: a scrape reads the counts, never the Works, so
// its cost does not grow with the number of templates; member readiness
// still comes from the Clusters.
func TestScrapeCopiesNoWork(t *testing.T) {
	ready := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member1"}}
	ready.Status.Conditions = []metav1.Condition{{Type: clusterv1alpha1.ClusterConditionReady, Status: metav1.ConditionTrue}}
	down := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member2"}}
	reader := fake.NewClientBuilder().WithScheme(policy.NewScheme()).
		WithObjects(ready, down, work("karmada-es-member1", "web", "Dispatching")).
		WithInterceptorFuncs(interceptor.Funcs{List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if _, works := list.(*workv1alpha1.WorkList); works {
				t.Error("a scrape listed every Work")
			}
			return c.List(ctx, list, opts...)
		}}).Build()
	counts := newWorkCounts()
	counts.OnAdd(work("karmada-es-member1", "web", "Dispatching"), true)

	got := series(t, collector{reader: reader, works: counts, synced: func() bool { return true }})
	want := map[string]float64{
		`federator_works{cluster="member1",dispatching="Dispatching"}`: 1,
		`federator_cluster_ready{cluster="member1"}`:                   1,
		`federator_cluster_ready{cluster="member2"}`:                   0,
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("scraped %v\nwant %v", got, want)
	}

	// Until the informer has replayed every stored Work, counts would be
	// partial: none are served.
	unsynced := series(t, collector{reader: reader, works: counts, synced: func() bool { return false }})
	if _, found := unsynced[`federator_works{cluster="member1",dispatching="Dispatching"}`]; found {
		t.Errorf("federator_works served before the Work informer synced: %v", unsynced)
	}
}

func gated(ns, name, gates string) *workv1alpha1.Work {
	w := work(ns, name, "GateClosed")
	w.Annotations = map[string]string{"work.federator.dev/hold-reason": "GateClosed", "work.federator.dev/hold-gates": gates,
		"work.federator.dev/hold-message": "waiting approval, gate 'ops/elsewhere' is closed (wording metrics must not parse)"}
	return w
}

func TestGateSeries(t *testing.T) {
	open := &gatingv1alpha1.Gate{ObjectMeta: metav1.ObjectMeta{Namespace: "ops", Name: "window"}}
	open.Status.Conditions = []metav1.Condition{{Type: "Opened", Status: metav1.ConditionTrue}}
	closed := &gatingv1alpha1.Gate{ObjectMeta: metav1.ObjectMeta{Namespace: "ops", Name: "approval"}}
	reader := fake.NewClientBuilder().WithScheme(policy.NewScheme()).WithObjects(open, closed).Build()

	counts := newWorkCounts()
	both := gated("karmada-es-member1", "web", "ops/approval,ops/other")
	one := gated("karmada-es-member2", "web", "ops/approval")
	for _, w := range []*workv1alpha1.Work{both, one} {
		counts.OnAdd(w, true)
	}
	// A Work released by the gate leaves its series.
	released := one.DeepCopy()
	released.Annotations = nil
	released.Status.Conditions[0].Reason = "Dispatching"
	counts.OnUpdate(one, released)

	got := series(t, collector{reader: reader, works: counts, synced: func() bool { return true }})
	for s, v := range map[string]float64{
		`federator_gate_open{name="window",namespace="ops"}`:         1,
		`federator_gate_open{name="approval",namespace="ops"}`:       0,
		`federator_gate_held_works{name="approval",namespace="ops"}`: 1,
		`federator_gate_held_works{name="window",namespace="ops"}`:   0,
	} {
		if got[s] != v {
			t.Errorf("%s = %v, want %v (scraped %v)", s, got[s], v, got)
		}
	}
	if _, found := got[`federator_gate_held_works{name="other",namespace="ops"}`]; found {
		t.Errorf("a series for a gate that does not exist: %v", got)
	}
}

func TestObserveHoldQueueWait(t *testing.T) {
	holdQueueWait.Reset()
	ObserveHoldQueueWait("resourcebinding", 30*time.Millisecond, false)
	ObserveHoldQueueWait("resourcebinding", 2*time.Second, true)
	ObserveHoldQueueWait("detector", time.Millisecond, true)
	for _, c := range []struct {
		controller, behind string
		count              uint64
		sum                float64
	}{{"resourcebinding", "worker", 1, 0.03}, {"resourcebinding", "same-object", 1, 2}, {"detector", "same-object", 1, 0.001}, {"detector", "worker", 0, 0}} {
		m := &dto.Metric{}
		if err := holdQueueWait.WithLabelValues(c.controller, c.behind).(prometheus.Histogram).Write(m); err != nil {
			t.Fatal(err)
		}
		if got := m.GetHistogram(); got.GetSampleCount() != c.count || got.GetSampleSum() != c.sum {
			t.Errorf("%s behind %s: %d waits summing %gs, want %d summing %gs", c.controller, c.behind,
				got.GetSampleCount(), got.GetSampleSum(), c.count, c.sum)
		}
	}
}
