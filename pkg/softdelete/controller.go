package softdelete

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workkeys "github.com/federator-dev/federator/apis/work"
	"github.com/federator-dev/federator/internal/countdown"
	"github.com/federator-dev/federator/internal/retry"
	"github.com/federator-dev/federator/pkg/membership"
	"github.com/federator-dev/federator/pkg/metrics"
)

// MemberClients hands out a client per member cluster (pkg/dispatch's
// Members does).
type MemberClients interface {
	Client(ctx context.Context, cluster string) (client.Client, error)
}

// Reconciler ends the countdown one tombstone records.
type Reconciler struct {
	// Hub writes; Tombstones reads tombstones (a cache of them only).
	Hub        client.Client
	Tombstones client.Reader
	// HubReader reads the hub uncached (whether the object is placed
	// again, before a deletion); Hub when nil.
	HubReader client.Reader
	Members   MemberClients
	Recorder  record.EventRecorder
	Clock     clock.PassiveClock
	// MaxDelay caps every delay (--max-deletion-delay); 0: no cap.
	MaxDelay time.Duration
	// Pull: the Reconciler runs in a Pull cluster's agent, and ends the
	// countdowns of Pull clusters only (its own: all its cache holds); on
	// the hub it ends those of every other cluster, and those of Works it
	// keeps.
	Pull bool
	// Frozen is nil when no Freeze holds the cluster now (pkg/dispatch's
	// FreezeGuard.Check), else an error with RetryAfter; it is asked
	// before the hub deletes a Work it kept (a member write is checked by
	// Members). Nil: not checked.
	Frozen func(ctx context.Context, cluster string) error
}

// Reconcile reads the tombstone and the member object it names, decides,
// and deletes, waits exactly until the delay ends, or lets go.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	result, outcome, err := r.reconcile(ctx, req)
	if outcome != "" {
		ctrl.LoggerFrom(ctx).V(1).Info(outcome)
	}
	return retry.Quietly(result, err)
}

func (r *Reconciler) reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, string, error) {
	cm := &corev1.ConfigMap{}
	if err := r.Tombstones.Get(ctx, req.NamespacedName, cm); err != nil {
		return ctrl.Result{}, "", client.IgnoreNotFound(err)
	}
	t, err := countdown.FromConfigMap(cm)
	if err != nil {
		// Nothing to act on; a person deletes it (the member object keeps
		// its mark and stays).
		return ctrl.Result{}, "unreadable tombstone: " + err.Error(), nil
	}
	cluster := &clusterv1alpha1.Cluster{}
	if err := r.Hub.Get(ctx, client.ObjectKey{Name: t.Cluster}, cluster); apierrors.IsNotFound(err) {
		return ctrl.Result{}, "cluster left: countdown dropped", r.end(ctx, t, corev1.EventTypeNormal, workkeys.EventReasonSoftDeletionCancelled,
			fmt.Sprintf("%s: cluster %s left the federation, so its deletion is no longer the hub's to do", t.Object(), t.Cluster), false)
	} else if err != nil {
		return ctrl.Result{}, "", err
	}
	if t.Work != "" {
		// A Work the hub keeps for the countdown: the hub's to end.
		if r.Pull {
			return ctrl.Result{}, "", nil
		}
		return r.reconcileKept(ctx, t)
	}
	if membership.Pull(cluster) != r.Pull {
		// A Pull cluster's countdowns in its member are its agent's, the
		// others the hub's.
		return ctrl.Result{}, "", nil
	}
	member, err := r.Members.Client(ctx, t.Cluster)
	if err != nil {
		return ctrl.Result{}, "", err
	}
	obj := &unstructured.Unstructured{}
	obj.SetAPIVersion(t.APIVersion)
	obj.SetKind(t.Kind)
	var observed countdown.Observed
	switch err := member.Get(ctx, client.ObjectKey{Namespace: t.Namespace, Name: t.Name}, obj); {
	case apierrors.IsNotFound(err):
	case err != nil:
		return ctrl.Result{}, "", err
	default:
		observed = countdown.Observed{Exists: true, UID: obj.GetUID()}
		observed.StartedAt, observed.HasStartedAt = countdown.StartedAt(obj)
	}

	now := r.Clock.Now()
	if result, outcome, done, err := r.decide(ctx, t, observed, now,
		fmt.Sprintf("%s is no longer in %s (deleted there directly)", t.Object(), t.Cluster)); done {
		return result, outcome, err
	}
	// Only the object the countdown is for, as it was read: if it was
	// placed again meanwhile (its mark removed), the write that removed the
	// mark changed its resourceVersion and this deletion is refused.
	uid, rv := obj.GetUID(), obj.GetResourceVersion()
	err = member.Delete(ctx, obj, client.Preconditions{UID: &uid, ResourceVersion: &rv}, client.PropagationPolicy(metav1.DeletePropagationBackground))
	if apierrors.IsConflict(err) {
		return retry.Soon(), "", nil
	}
	var held retryAfter
	if errors.As(err, &held) {
		// A freeze holds the member: the deletion is delayed, not taken
		// back, and comes once the freeze ends.
		return ctrl.Result{RequeueAfter: held.RetryAfter()}, fmt.Sprintf("%s in %s: due, held: %v", t.Object(), t.Cluster, err), nil
	}
	if client.IgnoreNotFound(err) != nil {
		return ctrl.Result{}, "", err
	}
	return ctrl.Result{}, "deleted", r.end(ctx, t, corev1.EventTypeNormal, workkeys.EventReasonSoftDeletionCompleted, r.deletedMessage(t, now), true)
}

// decide is what the countdown takes at now, done when it is not a
// deletion (or a deletion to wait for); gone says how its object went.
func (r *Reconciler) decide(ctx context.Context, t countdown.Tombstone, observed countdown.Observed, now time.Time, gone string) (ctrl.Result, string, bool, error) {
	action, wait := countdown.Decide(t, observed, now, r.MaxDelay)
	switch action {
	case countdown.Wait:
		return ctrl.Result{RequeueAfter: wait}, fmt.Sprintf("%s in %s: deleted in %s", t.Object(), t.Cluster, wait), true, nil
	case countdown.Keep:
		return ctrl.Result{}, fmt.Sprintf("%s in %s: kept, deletion delay %q is invalid", t.Object(), t.Cluster, t.Delay), true, nil
	case countdown.TakenBack:
		return ctrl.Result{}, "taken back", true, r.end(ctx, t, corev1.EventTypeNormal, workkeys.EventReasonSoftDeletionCancelled,
			countdown.TakenBackMessage(t), false)
	case countdown.Gone:
		return ctrl.Result{}, "gone", true, r.end(ctx, t, corev1.EventTypeNormal, workkeys.EventReasonSoftDeletionCompleted,
			fmt.Sprintf("%s; its countdown, started %s, is over", gone, t.StartedAt.UTC().Format(time.RFC3339)), true)
	}
	if !t.DeleteNow.IsZero() {
		return ctrl.Result{}, "", false, nil
	}
	// Due, unless the hub places the object there again: then the
	// dispatcher (or, for a kept Work, the binding controller) takes the
	// countdown back, and one that is late at it (its hub caches behind, a
	// restart) must not lose the object the user created again in time.
	by, err := r.placedAgain(ctx, t)
	if err != nil {
		return ctrl.Result{}, "", true, err
	}
	if by != "" {
		return ctrl.Result{RequeueAfter: placedAgainRetry}, fmt.Sprintf("%s in %s: due, but %s places it there again: "+
			"waiting for its countdown to be taken back", t.Object(), t.Cluster, by), true, nil
	}
	return ctrl.Result{}, "", false, nil
}

// deletedMessage tells of t's object deleted at now.
func (r *Reconciler) deletedMessage(t countdown.Tombstone, now time.Time) string {
	if t.DeleteNow.IsZero() {
		return fmt.Sprintf("%s deleted from %s at %s (deletion delay %s, countdown started %s)", t.Object(), t.Cluster,
			now.UTC().Format(time.RFC3339), t.Delay, t.StartedAt.UTC().Format(time.RFC3339))
	}
	msg := fmt.Sprintf("%s deleted from %s at %s on request (federator delete --now); countdown started %s", t.Object(), t.Cluster,
		now.UTC().Format(time.RFC3339), t.StartedAt.UTC().Format(time.RFC3339))
	if due, ok := t.DueAt(r.MaxDelay); ok {
		msg += ", was due at " + due.UTC().Format(time.RFC3339)
	}
	return msg
}

// retryAfter is a write to a member refused before it was sent, to be
// tried again that much later (pkg/dispatch's FrozenError: a Freeze holds
// the member).
type retryAfter interface {
	error
	RetryAfter() time.Duration
}

// placedAgainRetry is how soon a due countdown whose object the hub
// places again is looked at again, if the take-back has not ended it.
const placedAgainRetry = 2 * time.Second

// placedAgain names the binding that places t's object on t's cluster
// again, read from the API server ("" when none does): the template was
// created again, or the cluster chosen again, after the countdown began.
func (r *Reconciler) placedAgain(ctx context.Context, t countdown.Tombstone) (string, error) {
	reader := r.fresh()
	var spec *workv1alpha2.ResourceBindingSpec
	var meta metav1.Object
	switch t.Binding.Kind {
	case "ResourceBinding":
		b := &workv1alpha2.ResourceBinding{}
		if err := reader.Get(ctx, client.ObjectKey{Namespace: t.Binding.Namespace, Name: t.Binding.Name}, b); err != nil {
			return "", client.IgnoreNotFound(err)
		}
		spec, meta = &b.Spec, b
	case "ClusterResourceBinding":
		b := &workv1alpha2.ClusterResourceBinding{}
		if err := reader.Get(ctx, client.ObjectKey{Name: t.Binding.Name}, b); err != nil {
			return "", client.IgnoreNotFound(err)
		}
		spec, meta = &b.Spec, b
	default:
		return "", nil
	}
	if !meta.GetDeletionTimestamp().IsZero() || spec.Resource.Kind != t.Kind || spec.Resource.Namespace != t.Namespace ||
		spec.Resource.Name != t.Name || !slices.ContainsFunc(spec.Clusters, func(c workv1alpha2.TargetCluster) bool { return c.Name == t.Cluster }) {
		return "", nil
	}
	return t.Binding.String(), nil
}

// end drops the tombstone and tells why; completed counts a deletion.
func (r *Reconciler) end(ctx context.Context, t countdown.Tombstone, eventType, reason, message string, completed bool) error {
	if err := countdown.Forget(ctx, r.Hub, r.fresh(), t); err != nil {
		return err
	}
	if completed {
		metrics.SoftDeletionsCompleted.WithLabelValues(t.Cluster).Inc()
	}
	countdown.Announce(ctx, r.Hub, r.Recorder, t, eventType, reason, message)
	return nil
}

// fresh reads the hub uncached.
func (r *Reconciler) fresh() client.Reader {
	if r.HubReader == nil {
		return r.Hub
	}
	return r.HubReader
}
