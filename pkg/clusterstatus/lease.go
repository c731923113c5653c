package clusterstatus

import (
	"context"
	"sync"
	"time"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/component-helpers/apimachinery/lease"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	clusterkeys "github.com/federator-dev/federator/apis/cluster"
)

// A Pull cluster's agent renews a Lease on the hub while it runs, and the
// hub turns the cluster's Ready Unknown once neither that Lease nor the
// cluster's status has changed for the monitor grace period, as Karmada's
// agent and cluster controller do (the lease is the heartbeat between
// status writes, which are made only on a change).

// Karmada's defaults: karmada-agent's --cluster-lease-duration and
// --cluster-lease-renew-interval-fraction, karmada-controller-manager's
// --cluster-monitor-grace-period.
const (
	DefaultLeaseDuration      = 40 * time.Second
	DefaultLeaseRenewFraction = 0.25
	DefaultMonitorGracePeriod = 40 * time.Second
)

// renewLease renews, while mgr leads, the Lease of cluster on the hub
// (clusterkeys.LeaseNamespace), owned by its Cluster so that it goes with
// it.
func renewLease(mgr ctrl.Manager, cluster string, duration time.Duration, fraction float64) error {
	kube, err := kubernetes.NewForConfig(mgr.GetConfig())
	if err != nil {
		return err
	}
	hub := mgr.GetClient()
	owned := func(l *coordinationv1.Lease) error {
		if len(l.OwnerReferences) > 0 {
			return nil
		}
		c := &clusterv1alpha1.Cluster{}
		if err := hub.Get(context.Background(), client.ObjectKey{Name: cluster}, c); err != nil {
			return err
		}
		l.OwnerReferences = []metav1.OwnerReference{{APIVersion: clusterv1alpha1.SchemeGroupVersion.String(), Kind: "Cluster",
			Name: c.Name, UID: c.UID}}
		return nil
	}
	renew := time.Duration(float64(duration) * fraction)
	c := lease.NewController(clock.RealClock{}, kube, cluster, int32(duration.Seconds()), nil, renew, cluster,
		clusterkeys.LeaseNamespace, owned)
	return mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		c.Run(ctx)
		return nil
	}))
}

// heartbeats is what the hub last saw of each Pull cluster's agent: its
// Ready condition and Lease renewal, and when either last changed, by the
// hub's own clock (never the agent's).
type heartbeats struct {
	mu   sync.Mutex
	seen map[string]heartbeat
}

type heartbeat struct {
	ready   *metav1.Condition
	renewed *metav1.MicroTime
	at      time.Time
}

// observe records what the hub sees of cluster's agent now, and returns
// when it last saw it report.
func (h *heartbeats) observe(cluster *clusterv1alpha1.Cluster, l *coordinationv1.Lease, now time.Time) time.Time {
	ready := meta.FindStatusCondition(cluster.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
	var renewed *metav1.MicroTime
	if l != nil {
		renewed = l.Spec.RenewTime
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	last, ok := h.seen[cluster.Name]
	switch {
	case !ok,
		// A status write of its own, or a renewal.
		!equality.Semantic.DeepEqual(last.ready, ready),
		renewed != nil && (last.renewed == nil || last.renewed.Before(renewed)):
		h.seen[cluster.Name] = heartbeat{ready: ready.DeepCopy(), renewed: renewed.DeepCopy(), at: now}
		return now
	}
	return last.at
}

// written records a Ready the hub wrote itself, which is no heartbeat.
func (h *heartbeats) written(cluster *clusterv1alpha1.Cluster) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if last, ok := h.seen[cluster.Name]; ok {
		last.ready = meta.FindStatusCondition(cluster.Status.Conditions, clusterv1alpha1.ClusterConditionReady).DeepCopy()
		h.seen[cluster.Name] = last
	}
}

func (h *heartbeats) forget(cluster string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.seen, cluster)
}

// silentReady is the Ready a Pull cluster takes when its agent has not
// reported for the grace period: Unknown, with Karmada's reason (never
// reported, or stopped), keeping the transition time of an Unknown it
// already has; nil when it is Unknown already.
func silentReady(current *metav1.Condition) *metav1.Condition {
	switch {
	case current == nil:
		return &metav1.Condition{Type: clusterv1alpha1.ClusterConditionReady, Status: metav1.ConditionUnknown,
			Reason: clusterkeys.ReasonClusterStatusNeverUpdated, Message: clusterkeys.MessageClusterStatusNeverUpdated}
	case current.Status == metav1.ConditionUnknown:
		return nil
	}
	return &metav1.Condition{Type: clusterv1alpha1.ClusterConditionReady, Status: metav1.ConditionUnknown,
		Reason: clusterkeys.ReasonClusterStatusUnknown, Message: clusterkeys.MessageClusterStatusUnknown}
}
