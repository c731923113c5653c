package placement

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/util/validation/field"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
)

// The cluster fields a fieldSelector may name (Karmada's pkg/util constants).
const (
	providerField = "provider"
	regionField   = "region"
	zoneField     = "zone"
)

// clusterFilter is a ClusterAffinity with its selectors parsed once, so an
// invalid selector is an error for the whole placement instead of, as in
// Karmada's util.ClusterMatches, a silent "no cluster matches".
type clusterFilter struct {
	names   []string
	exclude []string
	labels  labels.Selector // nil: no labelSelector
	// fields holds the provider and region requirements; nil: none.
	fields labels.Selector
	zones  []corev1.NodeSelectorRequirement
}

// compileFilter parses affinity; a nil affinity matches every cluster.
func compileFilter(affinity *policyv1alpha1.ClusterAffinity, path *field.Path) (*clusterFilter, error) {
	if affinity == nil {
		return &clusterFilter{}, nil
	}
	filter := &clusterFilter{names: affinity.ClusterNames, exclude: affinity.ExcludeClusters}
	if affinity.LabelSelector != nil {
		selector, err := metav1.LabelSelectorAsSelector(affinity.LabelSelector)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", path.Child("labelSelector"), err)
		}
		filter.labels = selector
	}
	if affinity.FieldSelector != nil {
		var fieldRequirements labels.Requirements
		for i, expr := range affinity.FieldSelector.MatchExpressions {
			exprPath := path.Child("fieldSelector", "matchExpressions").Index(i)
			// The keys and operators Karmada's webhook admits
			// (validation.ValidatePolicyFieldSelector).
			var op selection.Operator
			switch expr.Operator {
			case corev1.NodeSelectorOpIn:
				op = selection.In
			case corev1.NodeSelectorOpNotIn:
				op = selection.NotIn
			default:
				return nil, fmt.Errorf("%s: unsupported operator %q, must be In or NotIn", exprPath.Child("operator"), expr.Operator)
			}
			switch expr.Key {
			case zoneField:
				filter.zones = append(filter.zones, expr)
			case providerField, regionField:
				requirement, err := labels.NewRequirement(expr.Key, op, expr.Values)
				if err != nil {
					return nil, fmt.Errorf("%s: %v", exprPath, err)
				}
				fieldRequirements = append(fieldRequirements, *requirement)
			default:
				return nil, fmt.Errorf("%s: unsupported key %q, must be provider, region, or zone", exprPath.Child("key"), expr.Key)
			}
		}
		if len(fieldRequirements) > 0 {
			filter.fields = labels.NewSelector().Add(fieldRequirements...)
		}
	}
	return filter, nil
}

// matches is Karmada's util.ClusterMatches: exclusion first, then every
// selector that is set, then the name list if it is not empty.
func (f *clusterFilter) matches(cluster *clusterv1alpha1.Cluster) bool {
	if slices.Contains(f.exclude, cluster.Name) {
		return false
	}
	if f.labels != nil && !f.labels.Matches(labels.Set(cluster.Labels)) {
		return false
	}
	for i := range f.zones {
		if !zonesMatch(&f.zones[i], cluster.Spec.Zones) {
			return false
		}
	}
	if f.fields != nil && !f.fields.Matches(clusterFields(cluster)) {
		return false
	}
	return len(f.names) == 0 || slices.Contains(f.names, cluster.Name)
}

// clusterFields is the label set a provider/region requirement is matched
// against; an empty field is absent, so NotIn matches it and In does not.
func clusterFields(cluster *clusterv1alpha1.Cluster) labels.Set {
	fields := labels.Set{}
	if cluster.Spec.Provider != "" {
		fields[providerField] = cluster.Spec.Provider
	}
	if cluster.Spec.Region != "" {
		fields[regionField] = cluster.Spec.Region
	}
	return fields
}

// zonesMatch is Karmada's matchZones for the operators admitted: In needs
// every zone of the cluster listed (and at least one zone), NotIn needs none
// of them listed. The deprecated spec.zone is not consulted, as in Karmada.
func zonesMatch(expr *corev1.NodeSelectorRequirement, zones []string) bool {
	switch expr.Operator {
	case corev1.NodeSelectorOpIn:
		if len(zones) == 0 {
			return false
		}
		for _, zone := range zones {
			if !slices.Contains(expr.Values, zone) {
				return false
			}
		}
		return true
	case corev1.NodeSelectorOpNotIn:
		for _, zone := range zones {
			if slices.Contains(expr.Values, zone) {
				return false
			}
		}
		return true
	default:
		return false
	}
}
