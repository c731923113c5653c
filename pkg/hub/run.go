// Package hub owns running federator's controllers against a hub: one
// controller-runtime manager holding the named controllers (Controllers:
// the detector, the binding, dispatch, cluster status, namespace sync
// controllers, ...), started once pkg/hubinstall has made the hub serve
// what they need (or checked it, with --install-crds=false).
package hub

import (
	"context"
	"fmt"
	"net/http"
	"time"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	gatingv1alpha1 "github.com/federator-dev/federator/apis/gating/v1alpha1"
	"github.com/federator-dev/federator/apis/policy"
	"github.com/federator-dev/federator/internal/countdown"
	"github.com/federator-dev/federator/internal/holdqueue"
	"github.com/federator-dev/federator/internal/holdwrites"
	"github.com/federator-dev/federator/internal/hubclock"
	"github.com/federator-dev/federator/internal/hubwatch"
	"github.com/federator-dev/federator/internal/recorder"
	"github.com/federator-dev/federator/internal/redecide"
	"github.com/federator-dev/federator/internal/startup"
	"github.com/federator-dev/federator/pkg/binding"
	"github.com/federator-dev/federator/pkg/dispatch"
	"github.com/federator-dev/federator/pkg/gate"
	"github.com/federator-dev/federator/pkg/hubinstall"
	"github.com/federator-dev/federator/pkg/membership"
	"github.com/federator-dev/federator/pkg/metrics"
)

// Options tune the controllers.
type Options struct {
	// HubQPS and HubBurst bound requests to the hub.
	HubQPS   float32
	HubBurst int
	// HubBulkWrites bounds the writes to the hub in flight at once that
	// change no hold (internal/holdwrites); 0 bounds none.
	HubBulkWrites int
	// EventQueueLimit is how many Events wait for the hub per recorder
	// shard before more are dropped (internal/recorder); 0 queues none,
	// as client-go's recorder alone does.
	EventQueueLimit int
	// Member bounds requests to each member.
	Member dispatch.ClientOptions
	// Workers per controller. A reconcile mostly waits for the hub, so
	// they are many: with 8, a suspension of 500 templates on 3 members
	// took 13-15 s and the fleet's 2 cores were not busy; with 32, 10-11 s
	// with both busy (make bench-fleet).
	Workers int
	// ClusterStatusInterval paces member health probes.
	ClusterStatusInterval time.Duration
	// ClusterMonitorGracePeriod is how long a Pull cluster's agent may go
	// without reporting before its Ready turns Unknown.
	ClusterMonitorGracePeriod time.Duration
	// MetricsAddr serves Prometheus metrics; "0" disables.
	MetricsAddr string
	// Controllers to run (see Enabled): "*" for all, "-name" to disable one.
	Controllers []string
	// Verbosity of the controllers' log: 1 logs every reconcile's outcome.
	Verbosity int
	// WebhookAddr serves the gate webhook receiver; "0" disables.
	WebhookAddr string
	// MaxDeletionDelay caps every federator.dev/deletion-delay.
	MaxDeletionDelay time.Duration
	// EnablePprof serves net/http/pprof under /debug/pprof/ at
	// ProfilingBindAddress, as Karmada's --enable-pprof does.
	EnablePprof          bool
	ProfilingBindAddress string
	// LeaderElection makes replicas take turns: only the one holding the
	// Lease LeaderElectionID in LeaderElectionNamespace runs controllers
	// (and every runnable that writes); it releases the Lease when ctx ends.
	LeaderElection          bool
	LeaderElectionNamespace string
	// LeaseDuration, RenewDeadline and RetryPeriod are client-go's leader
	// election timings; zero leaves controller-runtime's (15s, 10s, 2s).
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// HealthProbeAddr serves /healthz and /readyz; "0" disables.
	HealthProbeAddr string
	// InstallCRDs makes the controller install the CRDs and admission
	// policies (hubinstall.Install). Off where they are installed with the
	// manifests (config/install): the controller then only checks that the
	// hub serves them (hubinstall.Verify) and needs no right to change CRDs.
	InstallCRDs bool
	// DashboardAddr serves the read-only dashboard from the manager's
	// cache, on every replica (leader or not); "" or "0" disables. A
	// host left out (":8090") is localhost.
	DashboardAddr string
	// DashboardListening, if not nil, is told the dashboard's URL once it
	// listens, before the controllers start.
	DashboardListening func(url string)
}

// LeaderElectionID names the Lease replicas of `federator controller`
// take turns by.
const LeaderElectionID = "federator-controller"

// DefaultOptions are high enough that client rate limits are never what
// limits throughput.
func DefaultOptions() Options {
	return Options{HubQPS: 2000, HubBurst: 4000, HubBulkWrites: holdwrites.DefaultBulkWrites, EventQueueLimit: recorder.QueueLimit, Member: dispatch.ClientOptions{QPS: 200, Burst: 400},
		Workers: 32, ClusterStatusInterval: 5 * time.Second, ClusterMonitorGracePeriod: 40 * time.Second, MetricsAddr: "0", WebhookAddr: "0",
		Controllers: []string{"*"}, MaxDeletionDelay: countdown.DefaultMaxDelay, ProfilingBindAddress: ":6060",
		HealthProbeAddr: "0", LeaderElectionNamespace: Namespace, InstallCRDs: true}
}

// Run installs what the hub needs and runs the controllers until ctx ends.
// ready, if not nil, is called once the controllers are running.
func Run(ctx context.Context, cfg *rest.Config, o Options, ready func()) error {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = o.HubQPS, o.HubBurst
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return holdwrites.Limit(rt, o.HubBulkWrites) })
	// A freeze's end is counted from the hub's creationTimestamp: judged
	// by the hub's clock, whichever machine this replica runs on.
	hubClock := hubclock.New(nil)
	cfg = hubClock.Observe(cfg)
	scheme := policy.NewScheme()

	direct, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return fmt.Errorf("hub client: %w", err)
	}
	install := hubinstall.Install
	if !o.InstallCRDs {
		install = hubinstall.Verify
	}
	installed, err := install(ctx, direct)
	if err != nil {
		return err
	}

	pprofAddr := "0"
	if o.EnablePprof {
		pprofAddr = o.ProfilingBindAddress
	}
	if o.LeaderElection {
		if err := ensureNamespace(ctx, direct, o.LeaderElectionNamespace); err != nil {
			return err
		}
	}
	hubCaches := hubwatch.New(scheme, hubwatch.DefaultSettle, nil)
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                  scheme,
		Metrics:                 metricsserver.Options{BindAddress: o.MetricsAddr},
		HealthProbeBindAddress:  o.HealthProbeAddr,
		PprofBindAddress:        pprofAddr,
		LeaderElection:          o.LeaderElection,
		LeaderElectionID:        LeaderElectionID,
		LeaderElectionNamespace: o.LeaderElectionNamespace,
		// SIGTERM hands the Lease over at once: the manager has stopped
		// every runnable by then, so the next leader never overlaps it.
		LeaderElectionReleaseOnCancel: true,
		LeaseDuration:                 nonZero(o.LeaseDuration),
		RenewDeadline:                 nonZero(o.RenewDeadline),
		RetryPeriod:                   nonZero(o.RetryPeriod),
		// Templates of any kind are read from the informer cache too.
		Client: client.Options{Cache: &client.CacheOptions{Unstructured: true}},
		// No controller reads managedFields, and they are often the largest
		// part of an object: the cache keeps objects without them.
		Cache: cache.Options{DefaultTransform: cache.TransformStripManagedFields(),
			// Whether each informer watches the hub: the dispatcher writes
			// nothing to a member from a cache that may be behind.
			NewInformer: hubCaches.NewInformer},
	})
	if err != nil {
		return fmt.Errorf("controller manager: %w", err)
	}
	// The controllers' Events go through several broadcasters: the
	// manager's one client-go broadcaster drops them under bulk load
	// (internal/recorder).
	queued, dropped := metrics.EventQueue()
	events := recorder.NewBroadcaster(recorder.Shards, o.EventQueueLimit, recorder.Hooks{Queued: queued, Dropped: dropped})
	defer events.Shutdown()
	if err := recorder.Start(events, cfg, mgr.GetHTTPClient(), ctrl.Log.WithName("events")); err != nil {
		return err
	}
	mgr = recorder.Manager{Manager: mgr, Events: events}
	hubReader := mgr.GetClient()
	credentials, err := membership.NewCredentialReader(mgr)
	if err != nil {
		return err
	}
	memberConfig := func(ctx context.Context, name string) (*rest.Config, error) {
		cluster := &clusterv1alpha1.Cluster{}
		if err := hubReader.Get(ctx, client.ObjectKey{Name: name}, cluster); err != nil {
			return nil, fmt.Errorf("cluster %s: %w", name, err)
		}
		return membership.Config(ctx, credentials, cluster)
	}
	members := dispatch.NewMembers(memberConfig, o.Member)
	// Every write to a member is checked against the Freezes first, from
	// the hub cache, and refused while its cache does not watch the hub.
	members.Guard(&dispatch.FreezeGuard{Reader: mgr.GetClient(), Clock: hubClock,
		Watching: func() error { return hubCaches.Watching(dispatch.FreezeKind) }})
	// Its cache starts with the manager's, whichever controllers run.
	if _, err := mgr.GetCache().GetInformer(ctx, &gatingv1alpha1.Freeze{}, cache.BlockUntilSynced(false)); err != nil {
		return err
	}

	if err := metrics.Register(mgr.GetCache()); err != nil {
		return err
	}
	enabled, err := Enabled(o.Controllers)
	if err != nil {
		return err
	}
	if err := mgr.Add(tellCRDChanges(installed, mgr.GetEventRecorderFor("federator"))); err != nil {
		return err
	}
	d := deps{options: o, members: members, hubCaches: hubCaches, memberConfig: memberConfig, noPolicyStatus: !installed.PolicyStatus(),
		deciders: &holdqueue.Deciders{}}
	if enabled["binding"] {
		d.firstPass = redecide.NewFirstPass()
	}
	if enabled["binding"] && enabled["detector"] {
		// Leader-elected, as the controllers it drives.
		d.catchUp = redecide.New(listBindings(mgr.GetAPIReader()), binding.FirstPassPatience, ctrl.Log.WithName("catchup"))
		hubCaches.CatchUp(d.catchUp)
		if err := mgr.Add(d.catchUp); err != nil {
			return err
		}
	}
	for _, c := range Controllers {
		if !enabled[c.Name] {
			ctrl.Log.Info("controller disabled by --controllers", "controller", c.Name)
			continue
		}
		if err := c.setup(mgr, d); err != nil {
			return fmt.Errorf("controller %s: %w", c.Name, err)
		}
	}
	if o.WebhookAddr != "0" && o.WebhookAddr != "" && enabled["gate"] {
		if err := mgr.Add(gate.Serve{Addr: o.WebhookAddr, Receiver: &gate.Receiver{Client: mgr.GetClient(),
			Secrets: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorderFor("gate-webhook"), Clock: clock.RealClock{}}}); err != nil {
			return err
		}
	}
	if err := addProbes(mgr); err != nil {
		return err
	}
	if err := addDashboard(mgr, o); err != nil {
		return err
	}
	if err := startup.WhenSynced(mgr, ready); err != nil {
		return err
	}
	return mgr.Start(ctx)
}

type runnable func(context.Context) error

// tellCRDChanges says, once per start (on the leader), what
// hubinstall.Install added to CRDs already on the hub or could not: a log
// line and an Event on each CRD, since what the hub serves has changed, or
// federator works with less.
func tellCRDChanges(report hubinstall.InstallReport, recorder record.EventRecorder) runnable {
	return func(ctx context.Context) error {
		log := ctrl.Log.WithName("install")
		for _, c := range report.Changes {
			crd := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: c.Name}}
			crd.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
			if c.Err != nil {
				log.Info("warning: "+c.Message(), "crd", c.Name)
				recorder.Event(crd, corev1.EventTypeWarning, policy.EventReasonCRDUpdateForbidden, c.Message())
				continue
			}
			log.Info(c.Message(), "crd", c.Name)
			recorder.Event(crd, corev1.EventTypeNormal, policy.EventReasonCRDUpdated, c.Message())
		}
		return nil
	}
}

func (r runnable) Start(ctx context.Context) error { return r(ctx) }
