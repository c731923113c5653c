// Package placement owns which member clusters a binding targets and how many
// replicas each gets. It is pure functions over a Placement and the registered
// Clusters, with no API calls, mirroring Karmada's scheduler for the subset of
// placement the hub supports (see Place).
package placement

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
)

// Result is where a binding goes.
type Result struct {
	Targets []workv1alpha2.TargetCluster // sorted by cluster name
	// Unknown lists clusterAffinity.clusterNames entries that name no known cluster; reported, not silently dropped.
	Unknown []string
	// LacksAPI lists, sorted by cluster name, the clusters the placement
	// selects that Karmada's APIEnablement filter keeps out: they do not
	// serve the template's kind, or have not shown that they do (see
	// PlaceBinding). Only PlaceBinding fills it.
	LacksAPI []LacksAPI

	// What the Scheduled condition's message reports (Karmada's FitError):
	// the registered clusters, the template's API, and how many clusters
	// the affinity term the result comes from does not select.
	clusters       int
	api            schema.GroupVersionKind
	affinityMisses int
}

// LacksAPI is a cluster kept out because of the template's API.
type LacksAPI struct {
	Cluster string
	// Status is clusterv1alpha1.APIDisabled when the cluster's complete
	// list of APIs lacks the kind, clusterv1alpha1.APIUnknown when the
	// list is incomplete or not yet collected.
	Status clusterv1alpha1.APIEnablementStatus
}

// placementPath is where the placement sits in both policies and bindings, so
// an error points at the field the user wrote.
var placementPath = field.NewPath("spec", "placement")

// Place decides targets. clusters are the registered Cluster objects (cluster.karmada.io/v1alpha1). replicas is the template's replica count (0 for kinds without replicas).
//
// Supported, with Karmada's semantics (its scheduler's filter and assign
// steps, pkg/scheduler/core):
//   - clusterAffinity: clusterNames, exclude, labelSelector and fieldSelector
//     (provider, region, zone with In/NotIn, the keys and operators Karmada's
//     webhook admits). A nil affinity selects every cluster.
//   - clusterAffinities: terms are tried in order and the first one that
//     selects at least one cluster is used, as Karmada falls through to the
//     next term when scheduling with one fails. Karmada starts from the term
//     recorded in the binding's status.schedulerObservedAffinityName; Place
//     has no status and always starts from the first term, so it returns to a
//     preferred term as soon as that term selects a cluster again.
//   - replicaScheduling: Duplicated (or nil) gives every target the template's
//     replicas; Divided with Weighted preference (the default Karmada's webhook
//     sets) splits them by staticWeightList, or equally without one.
//
// Not supported, so Place returns an error naming the field rather than
// propagate wider than the user asked: spreadConstraints (unless Karmada
// itself ignores them, as it does under static weights), the Aggregated
// division preference, and dynamicWeight; these need the member capacity
// estimates of Karmada's scheduler estimator.
//
// Not evaluated at all, because they depend on state Place does not see:
// clusterTolerations against Cluster taints (Karmada skips the check for
// clusters already in the binding's targets), API enablement (needs the
// template's kind; PlaceBinding evaluates it), and graceful eviction tasks
// on the binding.
func Place(placement *policyv1alpha1.Placement, clusters []clusterv1alpha1.Cluster, replicas int32) (Result, error) {
	return PlaceForTemplate(placement, clusters, replicas, "")
}

// PlaceBinding places a binding as Karmada's scheduler does: its placement
// and replicas as PlaceForTemplate places them, with Karmada's APIEnablement
// filter for the template's kind (spec.resource). A cluster passes that
// filter when its status.apiEnablements lists the kind, or when the binding
// already targets it (spec.clusters), so that a member losing the API (a CRD
// deleted by accident) keeps what it was given. A cluster whose list is
// incomplete (CompleteAPIEnablements not True) or not yet collected does not
// pass unless it lists the kind: Karmada's filter is strict there too. Like
// the affinity, the filter runs per clusterAffinities term, so a term whose
// clusters all lack the kind falls through to the next.
func PlaceBinding(spec *workv1alpha2.ResourceBindingSpec, clusters []clusterv1alpha1.Cluster, templateUID types.UID) (Result, error) {
	filter := &apiFilter{api: schema.FromAPIVersionAndKind(spec.Resource.APIVersion, spec.Resource.Kind), scheduled: spec.Clusters}
	return place(spec.Placement, clusters, spec.Replicas, templateUID, filter)
}

// PlaceForTemplate is Place with the template's UID, which Karmada's scheduler
// uses to break ties when divided replicas do not split evenly (the binding's
// spec.resource.uid): with it, a division matches Karmada's replica for
// replica. Place breaks those ties as Karmada does for an empty UID, by
// giving the extra replica to the lexicographically smaller cluster name.
func PlaceForTemplate(placement *policyv1alpha1.Placement, clusters []clusterv1alpha1.Cluster, replicas int32, templateUID types.UID) (Result, error) {
	return place(placement, clusters, replicas, templateUID, nil)
}

// place runs the filters (affinity, then api unless nil) per affinity term
// and assigns replicas to the clusters that pass them all.
func place(placement *policyv1alpha1.Placement, clusters []clusterv1alpha1.Cluster, replicas int32, templateUID types.UID, api *apiFilter) (Result, error) {
	if replicas < 0 {
		return Result{}, fmt.Errorf("replicas: must not be negative, got %d", replicas)
	}
	if placement == nil {
		placement = &policyv1alpha1.Placement{}
	}
	division, err := replicaDivisionOf(placement)
	if err != nil {
		return Result{}, err
	}
	terms, err := affinityTerms(placement)
	if err != nil {
		return Result{}, err
	}

	known := make(map[string]bool, len(clusters))
	for i := range clusters {
		known[clusters[i].Name] = true
	}

	var candidates []*clusterv1alpha1.Cluster
	unknown := map[string]bool{}
	// diagnosed is what the Scheduled message reports: the term the
	// targets come from or, when no term yields any, the first one, as
	// Karmada reports the first term's failure.
	var diagnosed, tried Result
	for t, term := range terms {
		for _, name := range term.names {
			if !known[name] {
				unknown[name] = true
			}
		}
		candidates = candidates[:0]
		tried = Result{}
		for i := range clusters {
			cluster := &clusters[i]
			// Karmada clears a deleting cluster's scheduled results, so
			// scheduling onto it would only be undone.
			if !cluster.DeletionTimestamp.IsZero() {
				continue
			}
			if !term.matches(cluster) {
				tried.affinityMisses++
				continue
			}
			if status := api.admits(cluster); status != clusterv1alpha1.APIEnabled {
				tried.LacksAPI = append(tried.LacksAPI, LacksAPI{Cluster: cluster.Name, Status: status})
				continue
			}
			candidates = append(candidates, cluster)
		}
		if t == 0 || len(candidates) > 0 {
			diagnosed = tried
		}
		if len(candidates) > 0 {
			break
		}
	}

	result := Result{Targets: assignReplicas(division, candidates, replicas, templateUID),
		LacksAPI: diagnosed.LacksAPI, affinityMisses: diagnosed.affinityMisses, clusters: len(clusters)}
	if api != nil {
		result.api = api.api
	}
	slices.SortFunc(result.LacksAPI, func(a, b LacksAPI) int { return strings.Compare(a.Cluster, b.Cluster) })
	for name := range unknown {
		result.Unknown = append(result.Unknown, name)
	}
	slices.Sort(result.Unknown)
	sort.Slice(result.Targets, func(i, j int) bool { return result.Targets[i].Name < result.Targets[j].Name })
	return result, nil
}

// affinityTerms compiles the cluster filters to try, in order. Without any
// affinity there is one term that matches every cluster.
func affinityTerms(placement *policyv1alpha1.Placement) ([]*clusterFilter, error) {
	if placement.ClusterAffinity != nil && placement.ClusterAffinities != nil {
		// Karmada's validating webhook rejects this; the hub has none.
		return nil, fmt.Errorf("%s: clusterAffinities cannot co-exist with clusterAffinity", placementPath)
	}
	if len(placement.ClusterAffinities) == 0 {
		term, err := compileFilter(placement.ClusterAffinity, placementPath.Child("clusterAffinity"))
		if err != nil {
			return nil, err
		}
		return []*clusterFilter{term}, nil
	}
	terms := make([]*clusterFilter, 0, len(placement.ClusterAffinities))
	for i := range placement.ClusterAffinities {
		term, err := compileFilter(&placement.ClusterAffinities[i].ClusterAffinity, placementPath.Child("clusterAffinities").Index(i))
		if err != nil {
			return nil, err
		}
		terms = append(terms, term)
	}
	return terms, nil
}

// SelectsByLabels reports whether a Cluster's labels can change where
// placement puts things: a label selector in any cluster affinity (the
// placement's own, its ordered affinities, static weights' targets) or a
// spread by label. Conservative: a selector counts even where it would
// match every cluster.
func SelectsByLabels(placement *policyv1alpha1.Placement) bool {
	if placement == nil {
		return false
	}
	if placement.ClusterAffinity != nil && placement.ClusterAffinity.LabelSelector != nil {
		return true
	}
	for _, a := range placement.ClusterAffinities {
		if a.LabelSelector != nil {
			return true
		}
	}
	for _, s := range placement.SpreadConstraints {
		if s.SpreadByLabel != "" {
			return true
		}
	}
	if rs := placement.ReplicaScheduling; rs != nil && rs.WeightPreference != nil {
		for _, w := range rs.WeightPreference.StaticWeightList {
			if w.TargetCluster.LabelSelector != nil {
				return true
			}
		}
	}
	return false
}
