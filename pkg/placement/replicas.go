package placement

import (
	"container/heap"
	"fmt"
	"hash/fnv"

	"k8s.io/apimachinery/pkg/types"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
)

// replicaDivision is how a placement spreads replicas: duplicated, or divided
// by static weights.
type replicaDivision struct {
	divided bool
	// weights are the staticWeightList rules; none means equal weights.
	weights []weightRule
}

type weightRule struct {
	target *clusterFilter
	weight int64
}

// replicaDivisionOf reads replicaScheduling with the defaults a stored Karmada
// policy carries: replicaSchedulingType defaults to Divided (CRD default) and,
// under Divided, replicaDivisionPreference to Weighted (Karmada's mutating
// webhook, which the hub does not run).
func replicaDivisionOf(placement *policyv1alpha1.Placement) (replicaDivision, error) {
	path := placementPath.Child("replicaScheduling")
	strategy := placement.ReplicaScheduling
	if strategy == nil || strategy.ReplicaSchedulingType == policyv1alpha1.ReplicaSchedulingTypeDuplicated {
		return replicaDivision{}, checkSpreadConstraints(placement, false)
	}
	switch strategy.ReplicaSchedulingType {
	case policyv1alpha1.ReplicaSchedulingTypeDivided, "":
	default:
		return replicaDivision{}, fmt.Errorf("%s: unsupported value %q, must be Duplicated or Divided",
			path.Child("replicaSchedulingType"), strategy.ReplicaSchedulingType)
	}
	switch strategy.ReplicaDivisionPreference {
	case policyv1alpha1.ReplicaDivisionPreferenceWeighted, "":
	case policyv1alpha1.ReplicaDivisionPreferenceAggregated:
		return replicaDivision{}, fmt.Errorf("%s: Aggregated is not supported (it needs member capacity estimates); use Weighted",
			path.Child("replicaDivisionPreference"))
	default:
		return replicaDivision{}, fmt.Errorf("%s: unsupported value %q, must be Weighted",
			path.Child("replicaDivisionPreference"), strategy.ReplicaDivisionPreference)
	}

	division := replicaDivision{divided: true}
	preference := strategy.WeightPreference
	if preference == nil {
		return division, checkSpreadConstraints(placement, true)
	}
	if preference.DynamicWeight != "" {
		return replicaDivision{}, fmt.Errorf("%s: dynamic weights are not supported (they need member capacity estimates); use staticWeightList",
			path.Child("weightPreference", "dynamicWeight"))
	}
	for i := range preference.StaticWeightList {
		rule := &preference.StaticWeightList[i]
		target, err := compileFilter(&rule.TargetCluster, path.Child("weightPreference", "staticWeightList").Index(i).Child("targetCluster"))
		if err != nil {
			return replicaDivision{}, err
		}
		division.weights = append(division.weights, weightRule{target: target, weight: rule.Weight})
	}
	// Karmada quirk kept: an empty staticWeightList (without dynamicWeight)
	// does not switch spread constraints off, a missing weightPreference does.
	return division, checkSpreadConstraints(placement, len(preference.StaticWeightList) != 0)
}

// checkSpreadConstraints refuses spread constraints Karmada would enforce.
// Karmada ignores them under static-weight division (ignoredByKarmada).
func checkSpreadConstraints(placement *policyv1alpha1.Placement, ignoredByKarmada bool) error {
	if len(placement.SpreadConstraints) == 0 || ignoredByKarmada {
		return nil
	}
	return fmt.Errorf("%s: spread constraints are not supported", placementPath.Child("spreadConstraints"))
}

// assignReplicas is Karmada's AssignReplicas for the supported strategies.
func assignReplicas(division replicaDivision, candidates []*clusterv1alpha1.Cluster, replicas int32, templateUID types.UID) []workv1alpha2.TargetCluster {
	if len(candidates) == 0 {
		return nil
	}
	// Kinds without replicas go to every candidate, with none to assign,
	// whatever the strategy. (Karmada also divides when the template declares
	// resource requests with 0 replicas, which yields no targets under Divided;
	// Place sees only the count, so a workload scaled to 0 keeps its targets.)
	if replicas == 0 || !division.divided {
		targets := make([]workv1alpha2.TargetCluster, len(candidates))
		for i, cluster := range candidates {
			targets[i] = workv1alpha2.TargetCluster{Name: cluster.Name, Replicas: replicas}
		}
		return targets
	}

	parties := staticWeights(division.weights, candidates)
	allocateWebster(replicas, parties, tieBreakNameDescending(templateUID))
	// Karmada drops clusters left with no replica from a divided result
	// (removeZeroReplicasCluster; its --enable-empty-workload-propagation
	// flag, off by default, would keep them).
	var targets []workv1alpha2.TargetCluster
	for _, p := range parties {
		if p.seats > 0 {
			targets = append(targets, workv1alpha2.TargetCluster{Name: p.name, Replicas: p.seats})
		}
	}
	return targets
}

// staticWeights is Karmada's getStaticWeightInfoList: a candidate's weight is
// the largest weight among the rules that match it; candidates no rule
// matches get nothing; if no candidate has a weight, all weigh the same.
func staticWeights(rules []weightRule, candidates []*clusterv1alpha1.Cluster) []party {
	var parties []party
	for _, cluster := range candidates {
		var weight int64
		for _, rule := range rules {
			if rule.target.matches(cluster) {
				weight = max(weight, rule.weight)
			}
		}
		if weight > 0 {
			parties = append(parties, party{name: cluster.Name, votes: weight})
		}
	}
	if len(parties) == 0 {
		for _, cluster := range candidates {
			parties = append(parties, party{name: cluster.Name, votes: 1})
		}
	}
	return parties
}

// party is a cluster in the Webster (Sainte-Laguë) apportionment Karmada
// divides replicas with (pkg/util/helper/webstermethod.go).
type party struct {
	name  string
	votes int64
	seats int32
}

// allocateWebster hands out seats one at a time to the party with the highest
// votes/(2*seats+1), as Karmada's AllocateWebsterSeats does.
func allocateWebster(seats int32, parties []party, nameDescending bool) {
	if len(parties) == 0 {
		return
	}
	queue := &websterQueue{parties: make([]int, len(parties)), all: parties, nameDescending: nameDescending}
	for i := range parties {
		queue.parties[i] = i
	}
	heap.Init(queue)
	for ; seats > 0; seats-- {
		parties[queue.parties[0]].seats++
		heap.Fix(queue, 0)
	}
}

// websterQueue orders party indexes by Karmada's WebsterPriorityQueue.Less
// with the Dispenser's tie breaker. The order is total, so which party gets
// each seat does not depend on the heap's layout.
type websterQueue struct {
	parties        []int
	all            []party
	nameDescending bool
}

func (q *websterQueue) Len() int      { return len(q.parties) }
func (q *websterQueue) Swap(i, j int) { q.parties[i], q.parties[j] = q.parties[j], q.parties[i] }
func (q *websterQueue) Push(x any)    { q.parties = append(q.parties, x.(int)) }
func (q *websterQueue) Pop() any {
	last := q.parties[len(q.parties)-1]
	q.parties = q.parties[:len(q.parties)-1]
	return last
}

func (q *websterQueue) Less(i, j int) bool {
	a, b := q.all[q.parties[i]], q.all[q.parties[j]]
	// Same arithmetic as Karmada, float64 included, so ties are the same ties.
	aPriority := float64(a.votes) / float64(2*a.seats+1)
	bPriority := float64(b.votes) / float64(2*b.seats+1)
	if aPriority != bPriority {
		return aPriority > bPriority
	}
	// Fewer replicas first, which favours spreading to small clusters.
	if a.seats != b.seats {
		return a.seats < b.seats
	}
	if q.nameDescending {
		return a.name > b.name
	}
	return a.name < b.name
}

// tieBreakNameDescending is Karmada's tieBreakerByUID: the parity of the FNV-1a
// hash of the template's UID picks whether the larger or the smaller cluster
// name wins a tie, so remainders of different templates do not all land on
// the same cluster. An empty UID means the smaller name.
func tieBreakNameDescending(templateUID types.UID) bool {
	if templateUID == "" {
		return false
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(templateUID))
	return h.Sum32()&1 == 1
}
