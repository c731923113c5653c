package agent

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	"github.com/karmada-io/karmada/pkg/util/names"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	clusterkeys "github.com/federator-dev/federator/apis/cluster"
	gatingv1alpha1 "github.com/federator-dev/federator/apis/gating/v1alpha1"
	"github.com/federator-dev/federator/apis/policy"
	"github.com/federator-dev/federator/internal/hubclock"
	"github.com/federator-dev/federator/internal/hubwatch"
	"github.com/federator-dev/federator/internal/startup"
	"github.com/federator-dev/federator/pkg/clusterstatus"
	"github.com/federator-dev/federator/pkg/dispatch"
	"github.com/federator-dev/federator/pkg/membership"
	"github.com/federator-dev/federator/pkg/softdelete"
)

// Options say which cluster the agent serves and how it reaches the hub
// and its member. Flag names follow Karmada's karmada-agent.
type Options struct {
	// ClusterName is the Cluster it registers and serves (--cluster-name).
	ClusterName string
	// ClusterAPIEndpoint is the member's address as the hub records it
	// (--cluster-api-endpoint); the member config's host when empty.
	ClusterAPIEndpoint string
	// Hub reaches the hub (--karmada-kubeconfig); Member the cluster the
	// agent runs in (--kubeconfig, else in-cluster).
	Hub, Member *rest.Config
	// ClusterStatusUpdateFrequency paces the member's health probe
	// (--cluster-status-update-frequency).
	ClusterStatusUpdateFrequency time.Duration
	// ClusterLeaseDuration and ClusterLeaseRenewIntervalFraction: the
	// Lease it renews on the hub while it runs, by which the hub tells it
	// still reports (--cluster-lease-duration,
	// --cluster-lease-renew-interval-fraction).
	ClusterLeaseDuration              time.Duration
	ClusterLeaseRenewIntervalFraction float64
	// LeaderElect: two agents of one cluster take turns by a Lease in the
	// member, in LeaderElectionNamespace (--leader-elect,
	// --leader-elect-resource-namespace).
	LeaderElect             bool
	LeaderElectionNamespace string
	// LeaseDuration, RenewDeadline and RetryPeriod time the turns
	// (--leader-elect-lease-duration, --leader-elect-renew-deadline,
	// --leader-elect-retry-period): a standby takes the Lease a
	// LeaseDuration after the leader's last renewal.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// MetricsAddr and HealthProbeAddr: "0" disables either.
	MetricsAddr, HealthProbeAddr string
	// Member limits the requests to the member.
	MemberClient dispatch.ClientOptions
}

// DefaultOptions are Karmada's agent's defaults where it has them.
func DefaultOptions() Options {
	return Options{ClusterStatusUpdateFrequency: 10 * time.Second, ClusterLeaseDuration: clusterstatus.DefaultLeaseDuration,
		ClusterLeaseRenewIntervalFraction: clusterstatus.DefaultLeaseRenewFraction, LeaderElect: true, LeaderElectionNamespace: "federator-system",
		LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second,
		MetricsAddr: "0", HealthProbeAddr: "0", MemberClient: dispatch.ClientOptions{QPS: 200, Burst: 400}}
}

// workKind and clusterKind are the hub caches every write rests on.
var (
	workKind    = workv1alpha1.SchemeGroupVersion.WithKind("Work").GroupKind()
	clusterKind = clusterv1alpha1.SchemeGroupVersion.WithKind("Cluster").GroupKind()
)

// Run registers the cluster in Pull mode and serves it until ctx ends:
// its Works applied to the member, its countdowns and its Cluster status.
// ready, if not nil, is called once it runs.
func Run(ctx context.Context, o Options, ready func()) error {
	switch {
	case o.ClusterName == "":
		return errors.New("--cluster-name is required: the name of the Cluster this agent serves")
	case o.Hub == nil:
		return errors.New("--karmada-kubeconfig is required: the kubeconfig of the hub")
	case o.Member == nil:
		return errors.New("no member cluster: run in it, or give --kubeconfig the member's kubeconfig")
	}
	if err := membership.ValidName(o.ClusterName); err != nil {
		return fmt.Errorf("--cluster-name: %w", err)
	}
	if o.ClusterAPIEndpoint == "" {
		o.ClusterAPIEndpoint = o.Member.Host
	}
	// A freeze's end is counted from the hub's creationTimestamp: judged
	// by the hub's clock, which an edge machine's may be far from.
	hubClock := hubclock.New(nil)
	o.Hub = hubClock.Observe(o.Hub)
	scheme := policy.NewScheme()
	hubDirect, err := client.New(o.Hub, client.Options{Scheme: scheme})
	if err != nil {
		return fmt.Errorf("hub client: %w", err)
	}
	memberDirect, err := client.New(o.Member, client.Options{Scheme: scheme})
	if err != nil {
		return fmt.Errorf("member client: %w", err)
	}
	if err := Register(ctx, hubDirect, memberDirect, o.ClusterName, o.ClusterAPIEndpoint); err != nil {
		return err
	}
	if err := startup.EnsureNamespace(ctx, hubDirect, clusterkeys.LeaseNamespace); err != nil {
		return fmt.Errorf("creating namespace %s on the hub, for the Lease that says the agent of %s runs: %w",
			clusterkeys.LeaseNamespace, o.ClusterName, err)
	}

	ns := names.GenerateExecutionSpaceName(o.ClusterName)
	hubCaches := hubwatch.New(scheme, hubwatch.DefaultSettle, nil)
	mgr, err := ctrl.NewManager(o.Hub, ctrl.Options{
		Scheme: scheme,
		Logger: ctrl.Log.WithName("agent").WithValues("cluster", o.ClusterName),
		// Its controllers bear the hub's names (dispatch-<cluster>,
		// clusterstatus, softdelete), and may run in one process beside
		// the hub's, as in `federator up --pull-members`.
		Controller:                    config.Controller{SkipNameValidation: ptr.To(true)},
		Metrics:                       metricsserver.Options{BindAddress: o.MetricsAddr},
		HealthProbeBindAddress:        o.HealthProbeAddr,
		LeaderElection:                o.LeaderElect,
		LeaderElectionID:              membership.AgentName(o.ClusterName),
		LeaderElectionNamespace:       o.LeaderElectionNamespace,
		LeaderElectionConfig:          o.Member,
		LeaderElectionReleaseOnCancel: true,
		LeaseDuration:                 &o.LeaseDuration,
		RenewDeadline:                 &o.RenewDeadline,
		RetryPeriod:                   &o.RetryPeriod,
		// Only what is this cluster's: its execution namespace (Works,
		// tombstones), its Cluster, and the Freezes every dispatcher checks.
		Cache: cache.Options{DefaultTransform: cache.TransformStripManagedFields(), NewInformer: hubCaches.NewInformer,
			DefaultNamespaces: map[string]cache.Config{ns: {}},
			// A read of any other kind (a binding, a policy: what a
			// countdown's Event would be about) fails at once rather than
			// start a cache the agent has no right to fill, and wait on
			// it for good; the Event goes to the tombstone then.
			ReaderFailOnMissingInformer: true,
			ByObject: map[client.Object]cache.ByObject{
				&clusterv1alpha1.Cluster{}: {Field: fields.OneTermEqualSelector("metadata.name", o.ClusterName)},
			}},
	})
	if err != nil {
		return fmt.Errorf("controller manager: %w", err)
	}
	if o.LeaderElect {
		if err := startup.EnsureNamespace(ctx, memberDirect, o.LeaderElectionNamespace); err != nil {
			return fmt.Errorf("creating namespace %s in the member for the Lease %s (--leader-elect-resource-namespace): %w",
				o.LeaderElectionNamespace, membership.AgentName(o.ClusterName), err)
		}
	}
	for _, obj := range []client.Object{&workv1alpha1.Work{}, &clusterv1alpha1.Cluster{}, &gatingv1alpha1.Freeze{}, &corev1.ConfigMap{}} {
		if _, err := mgr.GetCache().GetInformer(ctx, obj, cache.BlockUntilSynced(false)); err != nil {
			return err
		}
	}
	config := func(_ context.Context, cluster string) (*rest.Config, error) {
		if cluster != o.ClusterName {
			return nil, fmt.Errorf("the agent of cluster %s reaches no other cluster (asked for %s)", o.ClusterName, cluster)
		}
		return o.Member, nil
	}
	members := dispatch.NewMembers(config, o.MemberClient)
	members.Guard(&dispatch.FreezeGuard{Reader: mgr.GetClient(), Clock: hubClock,
		Watching: func() error { return hubCaches.Watching(dispatch.FreezeKind) }})
	if err := dispatch.SetupPullWithManager(mgr, dispatch.PullOptions{Cluster: o.ClusterName, Members: members,
		HubCaches: current{hubCaches}}); err != nil {
		return err
	}
	if err := softdelete.SetupWithManager(mgr, softdelete.Options{Members: members, Cluster: o.ClusterName, Workers: 4}); err != nil {
		return err
	}
	if err := clusterstatus.SetupWithManager(mgr, clusterstatus.Options{Config: clusterstatus.ConfigFunc(config),
		Interval: o.ClusterStatusUpdateFrequency, Cluster: o.ClusterName,
		LeaseDuration: o.ClusterLeaseDuration, LeaseRenewFraction: o.ClusterLeaseRenewIntervalFraction}); err != nil {
		return err
	}
	if err := addProbes(mgr, hubCaches); err != nil {
		return err
	}
	if err := startup.WhenSynced(mgr, ready); err != nil {
		return err
	}
	return mgr.Start(ctx)
}

// current is what the agent's dispatcher asks before it writes to its
// member: every hub cache it holds watches the hub. (The hub's dispatcher
// also waits for its own controllers' passes; an agent has none: the
// Works it reads are what those passes wrote.)
type current struct{ caches *hubwatch.Tracker }

func (c current) Current(string, ...schema.GroupKind) error { return c.caches.Current() }

// addProbes serves /healthz (the process answers) and /readyz: ready while
// its hub caches of Works and of its Cluster watch the hub. An agent that
// lost the hub says so there, and writes nothing meanwhile.
func addProbes(mgr ctrl.Manager, caches *hubwatch.Tracker) error {
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	return mgr.AddReadyzCheck("hub", func(*http.Request) error {
		return errors.Join(caches.Watching(workKind), caches.Watching(clusterKind))
	})
}
