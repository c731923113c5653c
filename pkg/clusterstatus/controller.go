// Package clusterstatus owns the status of registered member Clusters: a
// Ready condition kept current by probing each member's API server,
// status.kubernetesVersion, and status.apiEnablements with its
// CompleteAPIEnablements condition (what the member serves, which placement
// reads), as Karmada's cluster status controller keeps them. Each member is
// probed on its own, so one that hangs delays no other's status. It writes
// only when something a person reads changed.
package clusterstatus

import (
	"context"
	"time"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
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
	// hub it keeps every other cluster's.
	Pull bool

	probes  *probes
	members *memberClients
}

// NewReconciler returns a Reconciler probing members reached through config,
// each probe bounded by timeout.
func NewReconciler(c client.Client, config ConfigFunc, recorder record.EventRecorder, interval, timeout time.Duration) *Reconciler {
	members := newMemberClients(config)
	return &Reconciler{Client: c, Recorder: recorder, Interval: interval,
		probes: newProbes(timeout, members.probe), members: members}
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
	if membership.Pull(cluster) != r.Pull {
		// A Pull cluster's agent keeps its status; the hub keeps the
		// others'.
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
		}
		r.Recorder.Event(cluster, eventType, ready.Reason, ready.Message)
	}
	return ctrl.Result{RequeueAfter: r.Interval}, nil
}

// forget drops what is kept for a member that left.
func (r *Reconciler) forget(cluster string) {
	r.probes.forget(cluster)
	r.members.forget(cluster)
}

// Options tune the cluster status controller.
type Options struct {
	// Config says how to reach a member.
	Config ConfigFunc
	// Interval paces each member's health probe.
	Interval time.Duration
	// Pull: it runs in a Pull cluster's agent (Reconciler.Pull).
	Pull bool
}

// SetupWithManager registers the controller.
func SetupWithManager(mgr ctrl.Manager, o Options) error {
	r := NewReconciler(mgr.GetClient(), o.Config, mgr.GetEventRecorderFor("cluster-status-controller"), o.Interval, probeTimeout)
	r.Pull = o.Pull
	if err := mgr.Add(r.probes); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).Named("clusterstatus").
		// Status writes do not retrigger a probe; RequeueAfter paces them.
		For(&clusterv1alpha1.Cluster{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		WatchesRawSource(r.probes.source()).
		WithOptions(controller.Options{MaxConcurrentReconciles: 4}).
		Complete(r)
}
