// Package fleetmetrics owns the local fleet's stand-in application: on
// members whose nodes are simulated no pod runs, so nothing would serve the
// request metrics a Rollout's analysis queries. The Exporter reads each
// member's Deployments and serves, per cluster, namespace, Deployment and
// version (the first container's image), the request counter and latency
// histogram the application would, at a steady load per replica. A
// ConfigMap in each member (SteeringNamespace/SteeringName) sets the
// error rate and latency per version; tags ending in -broken fail half
// their requests unless it says otherwise.
package fleetmetrics

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/federator-dev/federator/internal/httpserve"
)

// Member is a cluster whose application the exporter stands in for.
type Member struct {
	Name   string
	Client kubernetes.Interface
}

// Exporter serves the stand-in metrics of every member on one HTTP
// endpoint: one port and one scrape target per fleet rather than one per
// member, in-process so that nothing more runs or can be left behind. Each
// series carries its cluster label itself (the fleet's Prometheus honours
// it), which is what a target label per member would have given.
type Exporter struct {
	members []*memberSource
	// Now is the clock traffic advances by; tests set it.
	Now func() time.Time

	mu       sync.Mutex // serialises scrapes: each advances the traffic
	registry *prometheus.Registry

	stop      context.CancelFunc
	served    chan error
	url       string
	factories []informers.SharedInformerFactory
}

type memberSource struct {
	traffic
	deployments appslisters.DeploymentLister
	steering    corelisters.ConfigMapLister
}

// Start reads every member's Deployments and steering ConfigMap through
// informers, returns once their caches are filled, and serves the metrics
// on a free port of the loopback until Stop. warn receives each problem
// with a steering ConfigMap as it is written (the keys it ignores).
func Start(ctx context.Context, members []Member, warn func(string)) (_ *Exporter, err error) {
	e := &Exporter{Now: time.Now, registry: prometheus.NewRegistry()}
	runCtx, cancel := context.WithCancel(context.Background())
	e.stop = cancel
	defer func() {
		if err != nil {
			_ = e.Stop()
		}
	}()
	for _, m := range members {
		e.members = append(e.members, e.watch(runCtx, m, warn))
	}
	for _, f := range e.factories {
		for typ, synced := range f.WaitForCacheSync(ctx.Done()) {
			if !synced {
				return nil, fmt.Errorf("fleetmetrics: reading %v of the members: %w", typ, context.Cause(ctx))
			}
		}
	}
	if err := e.registry.Register(e); err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("fleetmetrics: %w", err)
	}
	e.url = "http://" + l.Addr().String() + "/metrics"
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(e.registry, promhttp.HandlerOpts{}))
	e.served = make(chan error, 1)
	go func() { e.served <- httpserve.Serve(runCtx, l, mux, 5*time.Second) }()
	return e, nil
}

// watch starts the informers of one member.
func (e *Exporter) watch(ctx context.Context, m Member, warn func(string)) *memberSource {
	all := informers.NewSharedInformerFactory(m.Client, 0)
	steering := informers.NewSharedInformerFactoryWithOptions(m.Client, 0, informers.WithNamespace(SteeringNamespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", SteeringName).String()
		}))
	s := &memberSource{
		traffic:     traffic{cluster: m.Name, series: map[seriesKey]*series{}},
		deployments: all.Apps().V1().Deployments().Lister(),
		steering:    steering.Core().V1().ConfigMaps().Lister(),
	}
	// The same complaint is said once, however often the informer
	// delivers the ConfigMap.
	var mu sync.Mutex
	var said string
	report := func(obj any) {
		cm, ok := obj.(*corev1.ConfigMap)
		if !ok || warn == nil {
			return
		}
		_, errs := ParseSteering(cm.Data)
		complaint := ""
		if len(errs) > 0 {
			complaint = fmt.Sprintf("%s: ConfigMap %s/%s: %v; the other keys apply", m.Name, SteeringNamespace, SteeringName, errors.Join(errs...))
		}
		mu.Lock()
		defer mu.Unlock()
		if complaint != said && complaint != "" {
			warn(complaint)
		}
		said = complaint
	}
	_, _ = steering.Core().V1().ConfigMaps().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    report,
		UpdateFunc: func(_, obj any) { report(obj) },
	})
	for _, f := range []informers.SharedInformerFactory{all, steering} {
		f.Start(ctx.Done())
		e.factories = append(e.factories, f)
	}
	return s
}

// URL is where the metrics are served: http://127.0.0.1:PORT/metrics.
func (e *Exporter) URL() string { return e.url }

// Stop stops serving and reading the members. Idempotent.
func (e *Exporter) Stop() error {
	e.stop()
	for _, f := range e.factories {
		f.Shutdown()
	}
	if e.served == nil {
		return nil
	}
	err := <-e.served
	e.served = nil
	return err
}

// Gather advances the traffic to now and returns the metrics, as a
// scrape would.
func (e *Exporter) Gather() ([]*dto.MetricFamily, error) { return e.registry.Gather() }

// Describe sends nothing: the exporter is an unchecked collector, its
// series come and go with the members' Deployments.
func (e *Exporter) Describe(chan<- *prometheus.Desc) {}

// Collect advances every member's traffic to now and sends its metrics.
func (e *Exporter) Collect(ch chan<- prometheus.Metric) {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.Now()
	for _, m := range e.members {
		var steering Steering
		if cm, err := m.steering.ConfigMaps(SteeringNamespace).Get(SteeringName); err == nil {
			steering, _ = ParseSteering(cm.Data)
		}
		m.advance(now, deploymentsOf(m.deployments), steering)
		m.collect(ch)
	}
}

func deploymentsOf(lister appslisters.DeploymentLister) []Deployment {
	list, _ := lister.List(labels.Everything()) // a cache's List does not fail
	out := make([]Deployment, 0, len(list))
	for _, d := range list {
		out = append(out, deploymentOf(d))
	}
	return out
}

func deploymentOf(d *appsv1.Deployment) Deployment {
	out := Deployment{Namespace: d.Namespace, Name: d.Name, Replicas: 1}
	if d.Spec.Replicas != nil {
		out.Replicas = *d.Spec.Replicas
	}
	if c := d.Spec.Template.Spec.Containers; len(c) > 0 {
		out.Image = strings.TrimSpace(c[0].Image)
	}
	return out
}
