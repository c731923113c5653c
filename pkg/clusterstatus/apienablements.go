package clusterstatus

import (
	"fmt"
	"sort"
	"strings"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterkeys "github.com/federator-dev/federator/apis/cluster"
)

// apiEnablements is Karmada's getAPIEnablements: what discovery read,
// without subresources ("deployments/scale"), resources sorted by name
// within each group version and group versions sorted, so that an unchanged
// member gives an equal list and its Cluster is not written.
func apiEnablements(lists []*metav1.APIResourceList) []clusterv1alpha1.APIEnablement {
	if len(lists) == 0 {
		return nil
	}
	enablements := make([]clusterv1alpha1.APIEnablement, 0, len(lists))
	for _, list := range lists {
		var resources []clusterv1alpha1.APIResource
		for _, r := range list.APIResources {
			if strings.Contains(r.Name, "/") {
				continue
			}
			resources = append(resources, clusterv1alpha1.APIResource{Name: r.Name, Kind: r.Kind})
		}
		sort.SliceStable(resources, func(i, j int) bool { return resources[i].Name < resources[j].Name })
		enablements = append(enablements, clusterv1alpha1.APIEnablement{GroupVersion: list.GroupVersion, Resources: resources})
	}
	sort.SliceStable(enablements, func(i, j int) bool { return enablements[i].GroupVersion < enablements[j].GroupVersion })
	return enablements
}

// completeAPIEnablements is Karmada's CompleteAPIEnablements condition for
// what discovery read (enablements) and how it failed (err): Empty when it
// read nothing, Partial when it read some groups but not all, Complete
// otherwise.
func completeAPIEnablements(enablements []clusterv1alpha1.APIEnablement, err error) metav1.Condition {
	cond := metav1.Condition{Type: clusterv1alpha1.ClusterConditionCompleteAPIEnablements}
	switch {
	case len(enablements) == 0:
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse,
			clusterkeys.ReasonAPIEnablementsEmpty, clusterkeys.MessageAPIEnablementsEmpty
	case err != nil:
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse,
			clusterkeys.ReasonAPIEnablementsPartial, fmt.Sprintf(clusterkeys.MessageAPIEnablementsPartial, len(enablements))
	default:
		cond.Status, cond.Reason, cond.Message = metav1.ConditionTrue,
			clusterkeys.ReasonAPIEnablementsComplete, clusterkeys.MessageAPIEnablementsComplete
	}
	return cond
}
