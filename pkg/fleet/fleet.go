// Package fleet owns the local fleet: it starts and stops local clusters (a
// hub and member1..N, each a real kube-apiserver + etcd run through
// controller-runtime's envtest from binaries the project builds) and
// registers members with the hub the way `karmadactl join` does.
package fleet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/federator-dev/federator/pkg/fleetmetrics"
)

// HubName is the name of the hub cluster; members are member1..memberN.
const HubName = "hub"

// Options says what Start starts and where it writes kubeconfigs.
type Options struct {
	// Dir receives the kubeconfigs: Dir/hub.kubeconfig, Dir/member1.kubeconfig, ...
	// It is created if missing (and removed by Stop if Start created it and
	// it is empty by then).
	Dir string
	// Members is the number of member clusters, named member1..memberN.
	Members int
	// BinDir holds kube-apiserver and etcd (and kube-controller-manager when
	// ControllerManager is set). Empty means $KUBEBUILDER_ASSETS.
	BinDir string
	// CRDs are installed on the hub only; Start returns once they are served.
	CRDs []*apiextensionsv1.CustomResourceDefinition
	// ControllerManager starts kube-controller-manager against every
	// cluster: on the hub only the namespace, garbage-collector and
	// serviceaccount-token controllers (templates stay templates); in
	// members the controllers a cluster has for service accounts and
	// workloads (HubControllers, memberControllers), signing tokens with
	// the key each API server verifies.
	ControllerManager bool
	// Workloads makes members run pods: kube-scheduler, Nodes simulated
	// nodes each offering NodeAllocatable, and kwok playing their kubelets
	// (pods of an image tagged -broken never become Ready, -crash restart
	// in a loop). It implies ControllerManager. The hub never runs them.
	Workloads bool
	// Nodes is the number of simulated nodes per member with Workloads;
	// 0 means DefaultNodes.
	Nodes int
	// Prometheus runs Debian's prometheus (PrometheusBinary, else
	// prometheus on $PATH) beside the fleet, scraping every
	// PrometheusScrapeInterval the request metrics a stand-in application
	// serves for every member's Deployments (pkg/fleetmetrics); its URL is
	// PrometheusURL and, for scripts, Dir/prometheus.url.
	Prometheus       bool
	PrometheusBinary string
	// Log receives progress lines ("starting member2 ..."); may be nil.
	Log io.Writer
	// Alerts receives, besides Log, what a person should see at once: a
	// program that died while the fleet runs and its restart; may be nil.
	Alerts io.Writer
}

// Fleet is a running hub and its members.
type Fleet struct {
	Hub     *Cluster
	Members []*Cluster

	dir        string
	dirCreated bool

	progress          *progressLog
	metricsMu         sync.Mutex // guards metrics, prometheus and prometheusURLFile
	metrics           *fleetmetrics.Exporter
	prometheus        *prometheusServer
	prometheusURLFile string

	stopMu  sync.Mutex
	stopped bool
}

// MemberName is the name of the i-th member (1-based): member1, member2, ...
func MemberName(i int) string { return fmt.Sprintf("member%d", i) }

// Start starts the hub and the members in parallel, writes their kubeconfigs
// into o.Dir and installs o.CRDs on the hub. On any error it stops everything
// it already started before returning. A cancelled ctx is noticed between
// steps; a cluster already starting finishes (or times out) first.
func Start(ctx context.Context, o Options) (*Fleet, error) {
	if o.Members < 0 {
		return nil, fmt.Errorf("fleet: Members is %d; it must be 0 or more", o.Members)
	}
	if o.Dir == "" {
		return nil, errors.New("fleet: Options.Dir is empty; say where the kubeconfigs go")
	}
	if o.Nodes < 0 {
		return nil, fmt.Errorf("fleet: Nodes is %d; it must be 0 or more", o.Nodes)
	}
	if o.Nodes == 0 {
		o.Nodes = DefaultNodes
	}
	var prometheusBinary string
	if o.Prometheus {
		var err error
		if prometheusBinary, err = findPrometheus(o.PrometheusBinary); err != nil {
			return nil, err
		}
	}
	bins, err := findBinaries(o.BinDir, o.ControllerManager || o.Workloads, o.Workloads)
	if err != nil {
		return nil, err
	}
	dir, err := filepath.Abs(o.Dir)
	if err != nil {
		return nil, fmt.Errorf("fleet: kubeconfig directory %q: %w", o.Dir, err)
	}
	_, statErr := os.Stat(dir)
	dirCreated := os.IsNotExist(statErr)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("fleet: creating kubeconfig directory: %w", err)
	}

	progress := &progressLog{w: o.Log, alerts: o.Alerts}
	f := &Fleet{dir: dir, dirCreated: dirCreated, progress: progress}
	names := []string{HubName}
	for i := 1; i <= o.Members; i++ {
		names = append(names, MemberName(i))
	}

	began := time.Now()
	clusters := make([]*Cluster, len(names))
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			spec := clusterSpec{
				name:              name,
				bins:              bins,
				kubeconfigPath:    filepath.Join(dir, name+".kubeconfig"),
				controllerManager: o.ControllerManager || o.Workloads,
				progress:          progress,
			}
			if name == HubName {
				spec.crds = o.CRDs
			} else if o.Workloads {
				spec.nodes = o.Nodes
			}
			clusters[i], errs[i] = startCluster(ctx, spec)
		}()
	}
	wg.Wait()

	f.Hub = clusters[0]
	for _, c := range clusters[1:] {
		if c != nil {
			f.Members = append(f.Members, c)
		}
	}
	startErr := errors.Join(errs...)
	if startErr == nil {
		startErr = ctx.Err()
	}
	if startErr == nil && o.Prometheus {
		startErr = f.startMetrics(ctx, prometheusBinary)
	}
	if startErr != nil {
		return nil, errors.Join(startErr, f.Stop())
	}
	progress.printf("fleet ready: %s and %d member(s) in %s", HubName, len(f.Members), time.Since(began).Round(100*time.Millisecond))
	return f, nil
}

// Clusters returns the hub followed by the members.
func (f *Fleet) Clusters() []*Cluster {
	var all []*Cluster
	if f.Hub != nil {
		all = append(all, f.Hub)
	}
	return append(all, f.Members...)
}

// Member returns the member named name, or nil if there is none.
func (f *Fleet) Member(name string) *Cluster {
	for _, m := range f.Members {
		if m.Name == name {
			return m
		}
	}
	return nil
}

// Stop stops every process Start started (Prometheus, kube-controller-manager,
// kube-apiserver, etcd), removes their temporary directories and the
// kubeconfig files Start wrote. Clusters stop in parallel. A second call does
// nothing and returns nil.
func (f *Fleet) Stop() error {
	f.stopMu.Lock()
	defer f.stopMu.Unlock()
	if f.stopped {
		return nil
	}
	f.stopped = true

	// Prometheus and the exporter first: they read the members.
	metricsErr := f.stopMetrics()
	all := f.Clusters()
	errs := make([]error, len(all))
	var wg sync.WaitGroup
	for i, c := range all {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = c.stop()
		}()
	}
	wg.Wait()
	if f.dirCreated {
		// Only an empty directory goes: the user may have put files there.
		_ = os.Remove(f.dir)
	}
	return errors.Join(append(errs, metricsErr)...)
}

// progressLog serialises progress lines from clusters starting in parallel.
type progressLog struct {
	mu     sync.Mutex
	w      io.Writer
	alerts io.Writer // also gets alertf's lines
}

// alertf is printf that also goes to the alerts writer.
func (p *progressLog) alertf(format string, args ...any) {
	p.printf(format, args...)
	if p == nil || p.alerts == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.alerts, format+"\n", args...)
}

func (p *progressLog) printf(format string, args ...any) {
	if p == nil || p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, format+"\n", args...)
}
