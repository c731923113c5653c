package binding

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	gatingv1alpha1 "github.com/federator-dev/federator/apis/gating/v1alpha1"
	"github.com/federator-dev/federator/pkg/gatestate"
	"github.com/federator-dev/federator/pkg/hold"
)

// frozenTargets fills in in.Frozen, for each of targets a Freeze in force
// holds, what that freeze says, and in.FrozenUntil, from the Freezes reader
// has, judged by the controller's clock. The dispatchers refuse the writes
// a freeze holds already; this is the record in the Works.
func (r *Reconciler) frozenTargets(ctx context.Context, reader client.Reader, in *hold.Input, targets []string) error {
	list := &gatingv1alpha1.FreezeList{}
	if err := reader.List(ctx, list); err != nil {
		return err
	}
	now := r.now()
	in.Frozen = nil
	for _, t := range targets {
		if f := gatestate.Frozen(list.Items, t, now); f != nil {
			if in.Frozen == nil {
				in.Frozen = map[string]string{}
			}
			in.Frozen[t] = gatestate.FreezeMessage(f, t)
		}
	}
	in.FrozenUntil = gatestate.NextFreezeEnd(list.Items, now)
	return nil
}
