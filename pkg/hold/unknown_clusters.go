package hold

import (
	"slices"
	"strconv"
	"strings"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"

	policykeys "github.com/federator-dev/federator/apis/policy"
)

// This file is the one home of the rule for cluster names that name no
// registered Cluster: a suspension that names one (in spec.suspension or
// a suspended.propagation.federator.dev/<cluster> annotation) holds every
// cluster, since it is most likely a typo of the cluster meant (the checks
// in suspension.go and suspension_unknown_cluster.go); pkg/detector's
// ClustersKnown condition tells of them with these functions, and
// `federator suspend --clusters` refuses them before it writes anything.

// UnknownClusters are the names that are not in known (the registered
// Clusters), in names' order; an empty name is unknown.
func UnknownClusters(names, known []string) []string {
	var unknown []string
	for _, name := range names {
		if !slices.Contains(known, name) {
			unknown = append(unknown, name)
		}
	}
	return unknown
}

// UnknownSuspendedClusters are the names in s's
// dispatchingOnClusters.clusterNames that are not in known (the registered
// Clusters), in the list's order: what unknownSuspendedClusterCheck holds
// every cluster for, and what pkg/detector's ClustersKnown condition tells.
func UnknownSuspendedClusters(s *policyv1alpha1.Suspension, known []string) []string {
	if s == nil || s.DispatchingOnClusters == nil {
		return nil
	}
	return UnknownClusters(s.DispatchingOnClusters.ClusterNames, known)
}

// UnknownAnnotatedClusters are the clusters that annotations suspend by
// suspended.propagation.federator.dev/<cluster> and that are not in known,
// sorted.
func UnknownAnnotatedClusters(annotations map[string]string, known []string) []string {
	var unknown []string
	for k := range annotations {
		if c, ok := strings.CutPrefix(k, policykeys.ClusterSuspendedAnnotationPrefix); ok && !slices.Contains(known, c) {
			unknown = append(unknown, c)
		}
	}
	slices.Sort(unknown)
	return unknown
}

// UnknownClusterAnnotations are the suspended.propagation.federator.dev/<cluster>
// keys among annotations whose cluster is not in known, sorted.
func UnknownClusterAnnotations(annotations map[string]string, known []string) []string {
	return suspendedKeys(UnknownAnnotatedClusters(annotations, known))
}

// suspendedKeys are the suspended.propagation.federator.dev/<cluster> keys
// of clusters.
func suspendedKeys(clusters []string) []string {
	keys := make([]string, len(clusters))
	for i, c := range clusters {
		keys[i] = policykeys.ClusterSuspendedAnnotationPrefix + c
	}
	return keys
}

// QuotedNames is how a message names clusters (or keys): each Go-quoted,
// so a stray space or an empty name shows, separated by commas. The hold
// messages and the policy's ClustersKnown condition both use it.
func QuotedNames(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}
