package hold

import (
	"fmt"
	"slices"

	"k8s.io/utils/ptr"

	policykeys "github.com/federator-dev/federator/apis/policy"
	workkeys "github.com/federator-dev/federator/apis/work"
)

// templateSuspendedCheck: the suspended annotation on the template holds its
// every cluster.
var templateSuspendedCheck = Check{Name: "TemplateSuspended", Holds: func(in Input, _ string) (Hold, bool) {
	return suspendedByAnnotation(in.Template)
}}

// policySuspendedCheck: the suspended annotation on the claiming policy
// holds every cluster of everything it propagates.
var policySuspendedCheck = Check{Name: "PolicySuspended", Holds: func(in Input, _ string) (Hold, bool) {
	return suspendedByAnnotation(in.Policy)
}}

func suspendedByAnnotation(o Object) (Hold, bool) {
	v, ok := o.Annotations[policykeys.SuspendedAnnotation]
	if !ok || o.Kind == "" {
		return Hold{}, false
	}
	note := annotationNote(v)
	return Hold{Reason: workkeys.ReasonSuspendDispatching, Note: note,
		Message: withNote("suspended by annotation "+policykeys.SuspendedAnnotation+" on "+o.String(), note) +
			"; remove the annotation to resume"}, true
}

// policySuspensionCheck: the policy's spec.suspension holds every cluster
// (dispatching: true) or the clusters it lists (dispatchingOnClusters), as
// Karmada's binding controller decides.
var policySuspensionCheck = Check{Name: "PolicySuspension", Holds: func(in Input, cluster string) (Hold, bool) {
	s := in.Suspension
	if s == nil {
		return Hold{}, false
	}
	policy := in.Policy.String()
	if in.Policy.Kind == "" {
		policy = "its policy"
	}
	if ptr.Deref(s.Dispatching, false) {
		return Hold{Reason: workkeys.ReasonSuspendDispatching,
			Message: "suspended by spec.suspension.dispatching of " + policy + "; set it to false to resume"}, true
	}
	if s.DispatchingOnClusters != nil && slices.Contains(s.DispatchingOnClusters.ClusterNames, cluster) {
		return Hold{Reason: workkeys.ReasonSuspendDispatching,
			Message: "suspended by spec.suspension.dispatchingOnClusters.clusterNames of " + policy +
				"; remove " + cluster + " from it to resume"}, true
	}
	return Hold{}, false
}}

// clusterSuspendedCheck: the annotation suspended.propagation.federator.dev/<cluster>
// on the template or on its policy holds that cluster only.
var clusterSuspendedCheck = Check{Name: "ClusterSuspended", Holds: func(in Input, cluster string) (Hold, bool) {
	key := policykeys.ClusterSuspendedAnnotationPrefix + cluster
	for _, o := range []Object{in.Template, in.Policy} {
		v, ok := o.Annotations[key]
		if !ok || o.Kind == "" {
			continue
		}
		note := annotationNote(v)
		return Hold{Reason: workkeys.ReasonSuspendDispatching, Note: note,
			Message: withNote("suspended by annotation "+key+" on "+o.String(), note) + "; remove the annotation to resume"}, true
	}
	return Hold{}, false
}}

// unknownSuspendedClusterCheck: a suspension list naming a cluster that is
// not registered is most likely a typo of the cluster meant, which would
// otherwise go unsuspended; every cluster is held until the name is fixed or
// such a cluster joins (fail safe).
var unknownSuspendedClusterCheck = Check{Name: "UnknownSuspendedCluster", Holds: func(in Input, _ string) (Hold, bool) {
	if in.KnownClusters == nil {
		return Hold{}, false
	}
	unknown := UnknownSuspendedClusters(in.Suspension, in.KnownClusters)
	if len(unknown) == 0 {
		return Hold{}, false
	}
	policy := in.Policy.String()
	if in.Policy.Kind == "" {
		policy = "its policy"
	}
	return Hold{Reason: workkeys.ReasonSuspendDispatching,
		Message: fmt.Sprintf("spec.suspension.dispatchingOnClusters.clusterNames of %s names %s, which is no registered Cluster; "+
			"every cluster is held until the name is fixed or such a cluster joins", policy, QuotedNames(unknown))}, true
}}
