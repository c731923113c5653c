package revision

import (
	"context"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1alpha1 "github.com/federator-dev/federator/apis/rollouts/v1alpha1"
)

// Rollout is a Rollout or a ClusterRollout, as both controllers read it.
type Rollout struct {
	Obj    client.Object
	Spec   *rolloutsv1alpha1.RolloutSpec
	Status *rolloutsv1alpha1.RolloutStatus
	// Kind is "Rollout" or "ClusterRollout".
	Kind string
}

// UID is the Rollout's UID.
func (r Rollout) UID() types.UID { return r.Obj.GetUID() }

// String names it for a person: "Rollout shop/web", "ClusterRollout all".
func (r Rollout) String() string {
	if ns := r.Obj.GetNamespace(); ns != "" {
		return r.Kind + " " + ns + "/" + r.Obj.GetName()
	}
	return r.Kind + " " + r.Obj.GetName()
}

// Governing finds the Rollout whose spec.policyRef names the policy
// (kind "PropagationPolicy" in namespace, or "ClusterPropagationPolicy");
// ok is false when none does. When several do, the oldest governs (the
// others say so in their status).
func Governing(ctx context.Context, c client.Reader, policyKind, namespace, name string) (Rollout, bool, error) {
	var found []Rollout
	switch policyKind {
	case "PropagationPolicy":
		list := &rolloutsv1alpha1.RolloutList{}
		if err := c.List(ctx, list, client.InNamespace(namespace)); err != nil {
			return Rollout{}, false, err
		}
		for i := range list.Items {
			r := &list.Items[i]
			if r.Spec.PolicyRef.Name == name && r.DeletionTimestamp.IsZero() {
				found = append(found, Rollout{Obj: r, Spec: &r.Spec, Status: &r.Status, Kind: "Rollout"})
			}
		}
	case "ClusterPropagationPolicy":
		list := &rolloutsv1alpha1.ClusterRolloutList{}
		if err := c.List(ctx, list); err != nil {
			return Rollout{}, false, err
		}
		for i := range list.Items {
			r := &list.Items[i]
			if r.Spec.PolicyRef.Name == name && r.DeletionTimestamp.IsZero() {
				found = append(found, Rollout{Obj: r, Spec: &r.Spec, Status: &r.Status, Kind: "ClusterRollout"})
			}
		}
	}
	if len(found) == 0 {
		return Rollout{}, false, nil
	}
	oldest := found[0]
	for _, r := range found[1:] {
		if t, o := r.Obj.GetCreationTimestamp(), oldest.Obj.GetCreationTimestamp(); t.Before(&o) ||
			t.Equal(&o) && r.Obj.GetName() < oldest.Obj.GetName() {
			oldest = r
		}
	}
	return oldest, true, nil
}

// Released says whether the Rollout has released the content with hash
// (what cluster gets now: the template with its overrides) to cluster,
// going by the stamp the binding carries: the stamp must be this Rollout's
// and name this content for the cluster, and the
// cluster's released revision must have reached the stamp's.
func (r Rollout) Released(stamp string, hash, cluster string) bool {
	s, ok := ParseStamp(stamp)
	if !ok || s.RolloutUID != string(r.UID()) || s.HashFor(cluster) != hash {
		return false
	}
	for _, c := range r.Status.Clusters {
		if c.Name == cluster {
			return c.Revision >= s.Revision
		}
	}
	return false
}

// Waiting is what the Rollout says the cluster waits for, "" when it says
// nothing.
func (r Rollout) Waiting(cluster string) string {
	for _, c := range r.Status.Clusters {
		if c.Name == cluster {
			return c.Message
		}
	}
	return ""
}
