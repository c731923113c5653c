package dashboard

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	"github.com/karmada-io/karmada/pkg/util/names"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gatingv1alpha1 "github.com/federator-dev/federator/apis/gating/v1alpha1"
	rolloutsv1alpha1 "github.com/federator-dev/federator/apis/rollouts/v1alpha1"
	workkeys "github.com/federator-dev/federator/apis/work"
	"github.com/federator-dev/federator/internal/countdown"
)

// States the grid shows beside copystate's: what a Rollout says of a
// cluster whose copy the member has taken.
const (
	StateProgressing = "Progressing"
	StateRolledBack  = "RolledBack"
	// StateNotTargeted is a cluster the template is not placed on.
	StateNotTargeted = "-"
)

// snapshot is everything the pages show, read from the cache at once.
type snapshot struct {
	now        time.Time
	clusters   []clusterv1alpha1.Cluster
	bindings   []binding
	works      map[client.ObjectKey]*workv1alpha1.Work
	rollouts   []rollout
	gates      []gatingv1alpha1.Gate
	tombstones []countdown.Tombstone
	// tombstonesKnown is false when the dashboard has no reader of them.
	tombstonesKnown bool
}

// binding is a ResourceBinding or a ClusterResourceBinding.
type binding struct {
	obj           client.Object
	spec          *workv1alpha2.ResourceBindingSpec
	clusterScoped bool
	// workName names the template's Work in every cluster: Karmada's
	// name hashes, which costs, so it is worked out once.
	workName string
}

func (b binding) kind() string {
	if b.clusterScoped {
		return "ClusterResourceBinding"
	}
	return "ResourceBinding"
}

// id names the binding in URLs: "rb/ns/name" or "crb/name".
func (b binding) id() string {
	if b.clusterScoped {
		return "crb/" + b.obj.GetName()
	}
	return "rb/" + b.obj.GetNamespace() + "/" + b.obj.GetName()
}

func (b binding) workKey(cluster string) client.ObjectKey {
	return client.ObjectKey{Namespace: names.GenerateExecutionSpaceName(cluster), Name: b.workName}
}

// policy is the policy that claims the template ("" kind when none), from
// the detector's annotations.
func (b binding) policy() (kind, namespace, name string) {
	return workkeys.ClaimingPolicy(b.obj.GetAnnotations())
}

// rollout is a Rollout or a ClusterRollout.
type rollout struct {
	kind, namespace, name string
	spec                  rolloutsv1alpha1.RolloutSpec
	status                rolloutsv1alpha1.RolloutStatus
}

// governs says whether the rollout governs what the policy claims.
func (r rollout) governs(policyKind, policyNamespace, policyName string) bool {
	if r.kind == "ClusterRollout" {
		return policyKind == "ClusterPropagationPolicy" && policyName == r.spec.PolicyRef.Name
	}
	return policyKind == "PropagationPolicy" && policyNamespace == r.namespace && policyName == r.spec.PolicyRef.Name
}

// What each part of the page reads.
const (
	readClusters = 1 << iota
	readBindings
	readWorks
	readRollouts
	readGates
	readTombstones
)

var partReads = map[string]int{
	fragGrid:      readClusters | readBindings | readWorks | readRollouts,
	fragDetail:    readBindings | readWorks | readRollouts,
	fragRollouts:  readRollouts,
	fragGates:     readGates,
	fragDeletions: readWorks | readTombstones,
	fragClusters:  readClusters,
}

// read lists what the parts show from the hub's cache. The dashboard
// never changes what it reads, so the cache's objects are not copied.
func read(ctx context.Context, src Source, now time.Time, parts []string) (*snapshot, error) {
	what := 0
	for _, p := range parts {
		what |= partReads[p]
	}
	s := &snapshot{now: now, works: map[client.ObjectKey]*workv1alpha1.Work{}}
	c := src.Hub
	noCopy := client.UnsafeDisableDeepCopy
	if what&readClusters != 0 {
		clusters := &clusterv1alpha1.ClusterList{}
		if err := c.List(ctx, clusters, noCopy); err != nil {
			return nil, fmt.Errorf("list Clusters: %w", err)
		}
		s.clusters = clusters.Items
		slices.SortFunc(s.clusters, func(a, b clusterv1alpha1.Cluster) int { return strings.Compare(a.Name, b.Name) })
	}
	if what&readBindings != 0 {
		rbs := &workv1alpha2.ResourceBindingList{}
		if err := c.List(ctx, rbs, noCopy); err != nil {
			return nil, fmt.Errorf("list ResourceBindings: %w", err)
		}
		for i := range rbs.Items {
			s.bindings = append(s.bindings, binding{obj: &rbs.Items[i], spec: &rbs.Items[i].Spec})
		}
		crbs := &workv1alpha2.ClusterResourceBindingList{}
		if err := c.List(ctx, crbs, noCopy); err != nil {
			return nil, fmt.Errorf("list ClusterResourceBindings: %w", err)
		}
		for i := range crbs.Items {
			s.bindings = append(s.bindings, binding{obj: &crbs.Items[i], spec: &crbs.Items[i].Spec, clusterScoped: true})
		}
		for i := range s.bindings {
			r := s.bindings[i].spec.Resource
			s.bindings[i].workName = names.GenerateWorkName(r.Kind, r.Name, r.Namespace)
		}
		slices.SortFunc(s.bindings, func(a, b binding) int {
			ra, rb := a.spec.Resource, b.spec.Resource
			return strings.Compare(ra.Namespace+"/"+ra.Kind+"/"+ra.Name, rb.Namespace+"/"+rb.Kind+"/"+rb.Name)
		})
	}
	if what&readWorks != 0 {
		workList := &workv1alpha1.WorkList{}
		if err := c.List(ctx, workList, noCopy); err != nil {
			return nil, fmt.Errorf("list Works: %w", err)
		}
		for i := range workList.Items {
			s.works[client.ObjectKeyFromObject(&workList.Items[i])] = &workList.Items[i]
		}
	}
	if what&readRollouts != 0 {
		ros := &rolloutsv1alpha1.RolloutList{}
		if err := c.List(ctx, ros, noCopy); err != nil {
			return nil, fmt.Errorf("list Rollouts: %w", err)
		}
		for _, r := range ros.Items {
			s.rollouts = append(s.rollouts, rollout{kind: "Rollout", namespace: r.Namespace, name: r.Name, spec: r.Spec, status: r.Status})
		}
		cros := &rolloutsv1alpha1.ClusterRolloutList{}
		if err := c.List(ctx, cros, noCopy); err != nil {
			return nil, fmt.Errorf("list ClusterRollouts: %w", err)
		}
		for _, r := range cros.Items {
			s.rollouts = append(s.rollouts, rollout{kind: "ClusterRollout", name: r.Name, spec: r.Spec, status: r.Status})
		}
		slices.SortFunc(s.rollouts, func(a, b rollout) int {
			return strings.Compare(a.kind+"/"+a.namespace+"/"+a.name, b.kind+"/"+b.namespace+"/"+b.name)
		})
	}
	if what&readGates != 0 {
		gates := &gatingv1alpha1.GateList{}
		if err := c.List(ctx, gates, noCopy); err != nil {
			return nil, fmt.Errorf("list Gates: %w", err)
		}
		s.gates = gates.Items
		slices.SortFunc(s.gates, func(a, b gatingv1alpha1.Gate) int {
			return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
		})
	}
	if what&readTombstones != 0 && src.Tombstones != nil {
		s.tombstonesKnown = true
		cms := &corev1.ConfigMapList{}
		if err := src.Tombstones.List(ctx, cms, noCopy, client.MatchingLabels{workkeys.TombstoneLabel: "true"}); err != nil {
			return nil, fmt.Errorf("list deletion tombstones: %w", err)
		}
		for i := range cms.Items {
			if t, err := countdown.FromConfigMap(&cms.Items[i]); err == nil {
				s.tombstones = append(s.tombstones, t)
			}
		}
		slices.SortFunc(s.tombstones, func(a, b countdown.Tombstone) int { return a.StartedAt.Compare(b.StartedAt) })
	}
	return s, nil
}
