package agent

import (
	"context"
	"fmt"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/federator-dev/federator/pkg/membership"
)

// Register registers the cluster with the hub in Pull mode, as Karmada's
// karmada-agent does: a Cluster named name with spec.syncMode Pull, the
// endpoint it is known by and its ID (the member's kube-system UID), created
// if missing, updated in place if it is already a Pull cluster (the
// endpoint only while it has none). A Cluster
// of that name in Push mode is refused (membership.ModeError), and nothing
// is changed. A write that meets another's (a second agent of the cluster
// starting beside it, the hub's controllers writing the Cluster) is made
// again on the Cluster as it is then.
func Register(ctx context.Context, hub client.Client, member client.Reader, name, endpoint string) error {
	return retry.OnError(retry.DefaultBackoff, func(err error) bool { return apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) },
		func() error { return register(ctx, hub, member, name, endpoint) })
}

func register(ctx context.Context, hub client.Client, member client.Reader, name, endpoint string) error {
	kubeSystem := &corev1.Namespace{}
	if err := member.Get(ctx, client.ObjectKey{Name: metav1.NamespaceSystem}, kubeSystem); err != nil {
		return fmt.Errorf("cluster %s: reading the member's %s namespace (its UID is the cluster ID): %w", name, metav1.NamespaceSystem, err)
	}
	cluster := &clusterv1alpha1.Cluster{}
	err := hub.Get(ctx, client.ObjectKey{Name: name}, cluster)
	switch {
	case apierrors.IsNotFound(err):
		cluster = &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Pull, APIEndpoint: endpoint, ID: string(kubeSystem.UID)}}
		if err := hub.Create(ctx, cluster); err != nil {
			return fmt.Errorf("registering cluster %s with the hub: %w", name, err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("cluster %s: reading its Cluster on the hub: %w", name, err)
	case !membership.Pull(cluster):
		return &membership.ModeError{Cluster: name, Registered: clusterv1alpha1.Push}
	case !cluster.DeletionTimestamp.IsZero():
		return fmt.Errorf("cluster %s is being deleted from the hub (unjoined): start the agent again once it is gone", name)
	}
	// The endpoint is set once, when the Cluster has none (federator join
	// --mode pull registers it before the agent knows it): after that it is
	// the hub's to change, never its agent's (config/install/admission's
	// federator-agent-cluster refuses it), so an agent that reaches its
	// member elsewhere says so and leaves it.
	setEndpoint := cluster.Spec.APIEndpoint == "" && endpoint != ""
	if cluster.Spec.APIEndpoint != "" && cluster.Spec.APIEndpoint != endpoint {
		log.FromContext(ctx).Info("the Cluster's spec.apiEndpoint differs from the endpoint this agent reaches its member at; an agent may not change it: an administrator of the hub may",
			"cluster", name, "spec.apiEndpoint", cluster.Spec.APIEndpoint, "endpoint", endpoint)
	}
	if !setEndpoint && cluster.Spec.ID == string(kubeSystem.UID) {
		return nil
	}
	before := cluster.DeepCopy()
	if setEndpoint {
		cluster.Spec.APIEndpoint = endpoint
	}
	cluster.Spec.ID = string(kubeSystem.UID)
	if err := hub.Patch(ctx, cluster, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("cluster %s: updating its Cluster on the hub: %w", name, err)
	}
	return nil
}
