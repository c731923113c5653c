// Package clusterstatus owns the status of registered member Clusters: a
// Ready condition kept current by probing each member's API server,
// status.kubernetesVersion, and status.apiEnablements with its
// CompleteAPIEnablements condition (what the member serves, which placement
// reads), as Karmada's cluster status controller keeps them. Each member is
// probed on its own, so one that hangs delays no other's status. It writes
// only when something a person reads changed.
package clusterstatus

import (
	"cmp"
	"context"
	"time"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	clusterkeys "github.com/federator-dev/federator/apis/cluster"
	"github.com/federator-dev/federator/internal/conditions"
	"github.com/federator-dev/federator/pkg/membership"
)

// ConfigFunc returns how to reach a registered member.
type ConfigFunc func(ctx context.Context, cluster string) (*rest.Config, error)

// probeTimeout bounds one probe of one member.
const probeTimeout = 5 * time.Second

// Reconciler records each Cluster's Ready condition and version from probes
// of its API server, which run apart from the reconcile (see probes).
type Reconciler struct {
	Client   client.Client
	Recorder record.EventRecorder
	// Interval is the pause between a member's probe being recorded and
	// its next probe.
	Interval time.Duration

	// Pull: the Reconciler runs in a Pull cluster's agent and keeps the
	// status of Pull clusters only (its own: all its cache holds); on the
	// hub it keeps every other cluster's, and monitors the Pull clusters'.
	Pull bool
	// Leases reads, on the hub, the Leases Pull clusters' agents renew;
	// nil: Pull clusters are not monitored.
	Leases client.Reader
	// GracePeriod is how long a Pull cluster's agent may go without
	// renewing its Lease or writing its status before the hub calls the
	// cluster's Ready Unknown (Karmada's --cluster-monitor-grace-period).
	GracePeriod time.Duration
	// Clock is the real clock when nil.
	Clock clock.PassiveClock

	heartbeats heartbeats

	probes  *probes
	members *memberClients
}

// NewReconciler returns a Reconciler probing members reached through config,
// each probe bounded by timeout.
func NewReconciler(c client.Client, config ConfigFunc, recorder record.EventRecorder, interval, timeout time.Duration) *Reconciler {
	members := newMemberClients(config)
	return &Reconciler{Client: c, Recorder: recorder, Interval: interval,
		probes: newProbes(timeout, members.probe), members: members, heartbeats: heartbeats{seen: map[string]heartbeat{}}}
}

// Reconcile records the member's last probe, or starts one when there is
// none to record; the probe's end brings the Cluster back here.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	cluster := &clusterv1alpha1.Cluster{}
	if err := r.Client.Get(ctx, req.NamespacedName, cluster); err != nil {
		if apierrors.IsNotFound(err) {
			r.forget(req.Name)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	switch pull := membership.Pull(cluster); {
	case pull && !r.Pull:
		// A Pull cluster's agent keeps its status; the hub only sees
		// whether it still does.
		r.probes.forget(cluster.Name)
		return r.monitor(ctx, cluster)
	case !pull && r.Pull:
		// The hub keeps a Push cluster's status.
		r.forget(cluster.Name)
		return ctrl.Result{}, nil
	}
	// A Cluster being deleted is still probed, as Karmada's status
	// controller does until it is gone: while it leaves, its Ready says
	// whether its objects can be deleted there or its Works are let go
	// (pkg/dispatch), so a member that stops answering meanwhile does not
	// hold its Cluster for good.
	result, probed := r.probes.result(cluster.Name)
	if !probed {
		return ctrl.Result{}, r.probes.start(cluster.Name)
	}
	before := cluster.DeepCopy()
	ready := metav1.Condition{Type: clusterv1alpha1.ClusterConditionReady, Status: metav1.ConditionTrue,
		Reason: clusterkeys.ReasonClusterReady, Message: clusterkeys.MessageClusterReady}
	if result.err != nil {
		// As Karmada: a member that does not answer keeps the APIs it
		// last listed, so placement does not drop it meanwhile.
		ready = metav1.Condition{Type: clusterv1alpha1.ClusterConditionReady, Status: metav1.ConditionFalse,
			Reason: clusterkeys.ReasonClusterNotReachable, Message: clusterkeys.MessageClusterNotReachable}
	} else {
		cluster.Status.KubernetesVersion = result.version
		cluster.Status.APIEnablements = result.enablements
		complete := completeAPIEnablements(result.enablements, result.discoveryErr)
		// Told once per transition, not at every probe while a member's
		// aggregated API stays down.
		if conditions.Set(&cluster.Status.Conditions, cluster.Generation, complete) && result.discoveryErr != nil {
			ctrl.LoggerFrom(ctx).Error(result.discoveryErr, complete.Message)
		}
	}
	changed := conditions.Set(&cluster.Status.Conditions, cluster.Generation, ready)
	// Locked: the event below tells of the transition this write stores.
	if _, err := conditions.PatchStatus(ctx, r.Client, before, cluster, true); err != nil {
		return ctrl.Result{}, err // the retry probes again
	}
	if changed {
		eventType := corev1.EventTypeNormal
		if result.err != nil {
			eventType = corev1.EventTypeWarning
			// Karmada's message says only that; the log says why (a
			// member down, or credentials the hub refuses to use).
			ctrl.LoggerFrom(ctx).Error(result.err, ready.Message)
		}
		r.Recorder.Event(cluster, eventType, ready.Reason, ready.Message)
	}
	return ctrl.Result{RequeueAfter: r.Interval}, nil
}

// forget drops what is kept for a member that left.
func (r *Reconciler) forget(cluster string) {
	r.probes.forget(cluster)
	r.members.forget(cluster)
	r.heartbeats.forget(cluster)
}

// monitor keeps a Pull cluster's Ready honest on the hub, as Karmada's
// cluster controller does: its agent reports it (a status write on each
// change, its Lease renewed between them), and once neither has happened
// for GracePeriod, by the hub's clock, Ready turns Unknown, with an Event.
// It is checked again every Interval.
func (r *Reconciler) monitor(ctx context.Context, cluster *clusterv1alpha1.Cluster) (ctrl.Result, error) {
	if r.Leases == nil || r.GracePeriod <= 0 {
		return ctrl.Result{}, nil
	}
	l := &coordinationv1.Lease{}
	if err := r.Leases.Get(ctx, client.ObjectKey{Namespace: clusterkeys.LeaseNamespace, Name: cluster.Name}, l); apierrors.IsNotFound(err) {
		l = nil
	} else if err != nil {
		return ctrl.Result{}, err
	}
	now := r.now()
	if silent := now.Sub(r.heartbeats.observe(cluster, l, now)); silent < r.GracePeriod {
		return ctrl.Result{RequeueAfter: min(r.GracePeriod-silent, r.Interval)}, nil
	}
	ready := silentReady(meta.FindStatusCondition(cluster.Status.Conditions, clusterv1alpha1.ClusterConditionReady))
	if ready == nil {
		return ctrl.Result{RequeueAfter: r.Interval}, nil
	}
	before := cluster.DeepCopy()
	conditions.Set(&cluster.Status.Conditions, cluster.Generation, *ready)
	if _, err := conditions.PatchStatus(ctx, r.Client, before, cluster, true); err != nil {
		return ctrl.Result{}, err
	}
	r.heartbeats.written(cluster)
	r.Recorder.Event(cluster, corev1.EventTypeWarning, ready.Reason, ready.Message)
	return ctrl.Result{RequeueAfter: r.Interval}, nil
}

func (r *Reconciler) now() time.Time {
	if r.Clock == nil {
		return time.Now()
	}
	return r.Clock.Now()
}

// Options tune the cluster status controller.
type Options struct {
	// Config says how to reach a member.
	Config ConfigFunc
	// Interval paces each member's health probe.
	Interval time.Duration
	// Cluster, when set, is the Pull cluster whose agent this controller
	// runs in: it keeps that cluster's status and renews its Lease on the
	// hub. Unset, on the hub, it keeps every Push cluster's status and
	// monitors the Pull clusters'.
	Cluster string
	// LeaseDuration and LeaseRenewFraction: the agent's Lease
	// (karmada-agent's --cluster-lease-duration,
	// --cluster-lease-renew-interval-fraction); Karmada's defaults when 0.
	LeaseDuration      time.Duration
	LeaseRenewFraction float64
	// MonitorGracePeriod: the hub's Reconciler.GracePeriod; Karmada's
	// default when 0.
	MonitorGracePeriod time.Duration
}

// SetupWithManager registers the controller.
func SetupWithManager(mgr ctrl.Manager, o Options) error {
	r := NewReconciler(mgr.GetClient(), o.Config, mgr.GetEventRecorderFor("cluster-status-controller"), o.Interval, probeTimeout)
	if err := mgr.Add(r.probes); err != nil {
		return err
	}
	if o.Cluster != "" {
		r.Pull = true
		if err := renewLease(mgr, o.Cluster, cmp.Or(o.LeaseDuration, DefaultLeaseDuration),
			cmp.Or(o.LeaseRenewFraction, DefaultLeaseRenewFraction)); err != nil {
			return err
		}
	} else {
		r.Leases, r.GracePeriod = mgr.GetAPIReader(), cmp.Or(o.MonitorGracePeriod, DefaultMonitorGracePeriod)
	}
	return ctrl.NewControllerManagedBy(mgr).Named("clusterstatus").
		// Status writes do not retrigger a probe; RequeueAfter paces them.
		For(&clusterv1alpha1.Cluster{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		WatchesRawSource(r.probes.source()).
		WithOptions(controller.Options{MaxConcurrentReconciles: 4}).
		Complete(r)
}
