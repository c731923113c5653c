// Package clusterstatus owns the status of registered member Clusters: a
// Ready condition kept current by probing each member's API server, and
// status.kubernetesVersion, as Karmada's cluster status controller keeps
// them. It writes only when something a person reads changed.
package clusterstatus

import (
	"context"
	"time"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// Karmada's strings (pkg/controllers/status/cluster_status_controller.go).
const (
	ReasonClusterReady         = "ClusterReady"
	MessageClusterReady        = "cluster is healthy and ready to accept workloads"
	ReasonClusterNotReachable  = "ClusterNotReachable"
	MessageClusterNotReachable = "cluster is not reachable"
)

// ConfigFunc returns how to reach a registered member.
type ConfigFunc func(ctx context.Context, cluster string) (*rest.Config, error)

// Reconciler probes one Cluster per call and requeues itself every Interval.
type Reconciler struct {
	Client   client.Client
	Config   ConfigFunc
	Recorder record.EventRecorder
	Interval time.Duration
}

// Reconcile probes the member's /version and records Ready and the version.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	cluster := &clusterv1alpha1.Cluster{}
	if err := r.Client.Get(ctx, req.NamespacedName, cluster); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !cluster.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	version, probeErr := r.probe(ctx, cluster.Name)
	ready := metav1.Condition{Type: clusterv1alpha1.ClusterConditionReady, Status: metav1.ConditionTrue,
		Reason: ReasonClusterReady, Message: MessageClusterReady}
	if probeErr != nil {
		ready = metav1.Condition{Type: clusterv1alpha1.ClusterConditionReady, Status: metav1.ConditionFalse,
			Reason: ReasonClusterNotReachable, Message: MessageClusterNotReachable}
		version = cluster.Status.KubernetesVersion
	}
	old := meta.FindStatusCondition(cluster.Status.Conditions, ready.Type)
	changed := old == nil || old.Status != ready.Status || old.Reason != ready.Reason || old.Message != ready.Message
	if !changed && version == cluster.Status.KubernetesVersion {
		return ctrl.Result{RequeueAfter: r.Interval}, nil
	}
	meta.SetStatusCondition(&cluster.Status.Conditions, ready)
	cluster.Status.KubernetesVersion = version
	if err := r.Client.Status().Update(ctx, cluster); err != nil {
		return ctrl.Result{}, err
	}
	if changed {
		eventType := corev1.EventTypeNormal
		if probeErr != nil {
			eventType = corev1.EventTypeWarning
		}
		r.Recorder.Event(cluster, eventType, ready.Reason, ready.Message)
	}
	return ctrl.Result{RequeueAfter: r.Interval}, nil
}

func (r *Reconciler) probe(ctx context.Context, name string) (string, error) {
	cfg, err := r.Config(ctx, name)
	if err != nil {
		return "", err
	}
	cfg = rest.CopyConfig(cfg)
	cfg.Timeout = 5 * time.Second
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return "", err
	}
	v, err := dc.ServerVersion()
	if err != nil {
		return "", err
	}
	return v.GitVersion, nil
}

// Setup registers the controller.
func Setup(mgr ctrl.Manager, config ConfigFunc, interval time.Duration) error {
	r := &Reconciler{Client: mgr.GetClient(), Config: config, Interval: interval,
		Recorder: mgr.GetEventRecorderFor("cluster-status-controller")}
	return ctrl.NewControllerManagedBy(mgr).Named("clusterstatus").
		// Status writes do not retrigger a probe; RequeueAfter paces them.
		For(&clusterv1alpha1.Cluster{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		WithOptions(controller.Options{MaxConcurrentReconciles: 4}).
		Complete(r)
}
