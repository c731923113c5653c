package hold

import gatingv1alpha1 "github.com/federator-dev/federator/apis/gating/v1alpha1"

// frozenCheck: a Freeze (gating.federator.dev) in force that names the
// cluster, or names none, holds it. The dispatchers refuse every write a
// freeze holds from the moment the hub stores it; this records it in the
// Works, for Karmada's tools and agents and for a dispatcher that starts
// later.
var frozenCheck = Check{Name: "Frozen", Holds: func(in Input, cluster string) (Hold, bool) {
	msg, ok := in.Frozen[cluster]
	if !ok {
		return Hold{}, false
	}
	return Hold{Check: "Frozen", Reason: gatingv1alpha1.ReasonFrozen, Message: msg}, true
}}
