package binding

import (
	"slices"

	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	"k8s.io/utils/ptr"
)

// SuspendDispatching reports whether dispatching to cluster is suspended by
// a binding's suspension: all clusters when dispatching is true, otherwise
// the clusters named in dispatchingOnClusters (Karmada's
// shouldSuspendDispatching).
func SuspendDispatching(s *workv1alpha2.Suspension, cluster string) bool {
	if s == nil {
		return false
	}
	if ptr.Deref(s.Dispatching, false) {
		return true
	}
	return s.DispatchingOnClusters != nil && slices.Contains(s.DispatchingOnClusters.ClusterNames, cluster)
}
