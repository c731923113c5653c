package metrics

import (
	"context"
	"maps"
	"sync"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policykeys "github.com/federator-dev/federator/apis/policy"
)

// DispatchLatency is how long a change took from the hub to a member: from
// the time the binding controller wrote the changed manifest into the Work
// (or the Work was released from a hold, if later) to the member accepting
// the write.
var DispatchLatency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
	Name:    "federator_dispatch_latency_seconds",
	Help:    "Seconds from a change written into a Work on the hub (or its release from a hold, if later) to the member accepting it.",
	Buckets: prometheus.ExponentialBuckets(0.01, 2, 16),
}, []string{"cluster"})

var (
	suspendedDesc = prometheus.NewDesc("federator_suspended",
		"1 while the propagation.federator.dev/suspended annotation holds a policy or a template.",
		[]string{"kind", "namespace", "name"}, nil)
	suspendedInfoDesc = prometheus.NewDesc("federator_suspended_info",
		"The reason given in the propagation.federator.dev/suspended annotation (\"true\" when none).",
		[]string{"kind", "namespace", "name", "reason"}, nil)
)

// SuspendedKey names a suspended policy or template.
type SuspendedKey struct{ Kind, Namespace, Name string }

// SuspendedTemplates tracks the templates the suspended annotation holds,
// as the binding controller sees them (policies are read at scrape time:
// they are few and in the cache).
var SuspendedTemplates = &suspended{reasons: map[SuspendedKey]string{}}

type suspended struct {
	mu      sync.Mutex
	reasons map[SuspendedKey]string
}

// Observe records a template's annotations: suspended or not.
func (s *suspended) Observe(key SuspendedKey, annotations map[string]string) {
	reason, ok := annotations[policykeys.SuspendedAnnotation]
	s.mu.Lock()
	defer s.mu.Unlock()
	if ok {
		s.reasons[key] = reason
	} else {
		delete(s.reasons, key)
	}
}

// Forget drops a template that is gone.
func (s *suspended) Forget(key SuspendedKey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.reasons, key)
}

func (s *suspended) snapshot() map[SuspendedKey]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.reasons)
}

// suspendedCollector serves federator_suspended and its info metric.
type suspendedCollector struct {
	reader    client.Reader
	templates *suspended
}

func (c suspendedCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- suspendedDesc
	ch <- suspendedInfoDesc
}

func (c suspendedCollector) Collect(ch chan<- prometheus.Metric) {
	all := c.templates.snapshot()
	ctx := context.Background()
	pps := &policyv1alpha1.PropagationPolicyList{}
	if err := c.reader.List(ctx, pps, client.UnsafeDisableDeepCopy); err == nil {
		for _, p := range pps.Items {
			if reason, ok := p.Annotations[policykeys.SuspendedAnnotation]; ok {
				all[SuspendedKey{"PropagationPolicy", p.Namespace, p.Name}] = reason
			}
		}
	}
	cpps := &policyv1alpha1.ClusterPropagationPolicyList{}
	if err := c.reader.List(ctx, cpps, client.UnsafeDisableDeepCopy); err == nil {
		for _, p := range cpps.Items {
			if reason, ok := p.Annotations[policykeys.SuspendedAnnotation]; ok {
				all[SuspendedKey{"ClusterPropagationPolicy", "", p.Name}] = reason
			}
		}
	}
	for k, reason := range all {
		ch <- prometheus.MustNewConstMetric(suspendedDesc, prometheus.GaugeValue, 1, k.Kind, k.Namespace, k.Name)
		ch <- prometheus.MustNewConstMetric(suspendedInfoDesc, prometheus.GaugeValue, 1, k.Kind, k.Namespace, k.Name, reason)
	}
}
