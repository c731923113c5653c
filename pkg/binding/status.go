package binding

import (
	"encoding/json"

	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	appsv1 "k8s.io/api/apps/v1"
)

// memberDeploymentStatus is a Deployment's status as collected from a
// member, with the member object's generation beside it (Karmada's
// WrappedDeploymentStatus, less the template generation it stamps).
type memberDeploymentStatus struct {
	appsv1.DeploymentStatus `json:",inline"`
	Generation              int64 `json:"generation,omitempty"`
}

// DeploymentStatus aggregates members' Deployment statuses into the hub
// template's, as Karmada's default interpreter does: replica counts are
// summed; observedGeneration becomes the template's generation once every
// target runs it (current[cluster]: the Work carries the latest template, is
// dispatched and applied) and its controller has observed it, else it keeps
// its old value.
func DeploymentStatus(items []workv1alpha2.AggregatedStatusItem, current map[string]bool, templateGeneration int64, old appsv1.DeploymentStatus) appsv1.DeploymentStatus {
	var out appsv1.DeploymentStatus
	observed := 0
	for _, item := range items {
		if item.Status == nil {
			continue
		}
		var m memberDeploymentStatus
		if err := json.Unmarshal(item.Status.Raw, &m); err != nil {
			continue
		}
		if current[item.ClusterName] && m.ObservedGeneration >= m.Generation {
			observed++
		}
		out.Replicas += m.Replicas
		out.ReadyReplicas += m.ReadyReplicas
		out.UpdatedReplicas += m.UpdatedReplicas
		out.AvailableReplicas += m.AvailableReplicas
		out.UnavailableReplicas += m.UnavailableReplicas
	}
	out.ObservedGeneration = old.ObservedGeneration
	if len(items) > 0 && observed == len(items) {
		out.ObservedGeneration = templateGeneration
	}
	return out
}
