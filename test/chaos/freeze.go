package main

import (
	"context"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gatingv1alpha1 "github.com/federator-dev/federator/apis/gating/v1alpha1"
)

// Freezes: the run freezes every member, or one or two of them, and
// unfreezes, as `federator freeze [--clusters]` and `federator unfreeze`
// write: one Freeze created, every Freeze deleted. A freeze holds what it
// names whatever the policy says, and while the policy is deleted too:
// nothing a freeze holds may be stored from the moment the hub stored it
// (within the grace, as for every hold).

// frozen is whether a Freeze of s holds member.
func (s state) frozen(member string) bool {
	return s.Freezing && (s.Freeze == nil || s.Freeze[member])
}

// writeFreeze sends an opFreeze or an opUnfreeze.
func writeFreeze(ctx context.Context, hub client.Client, o op) error {
	if o.Kind == opUnfreeze {
		return hub.DeleteAllOf(ctx, &gatingv1alpha1.Freeze{})
	}
	return hub.Create(ctx, &gatingv1alpha1.Freeze{ObjectMeta: metav1.ObjectMeta{GenerateName: "chaos-"},
		Spec: gatingv1alpha1.FreezeSpec{Clusters: slices.Clone(o.Clusters), Message: holdReason}})
}
