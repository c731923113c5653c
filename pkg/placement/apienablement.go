package placement

import (
	"fmt"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"

	workkeys "github.com/federator-dev/federator/apis/work"
)

// apiFilter is Karmada's APIEnablement filter plugin
// (pkg/scheduler/framework/plugins/apienablement) for one binding.
type apiFilter struct {
	api       schema.GroupVersionKind
	scheduled []workv1alpha2.TargetCluster
}

// admits says whether cluster may be a target of the binding: APIEnabled
// when it may, else why not. A nil filter admits every cluster.
func (f *apiFilter) admits(cluster *clusterv1alpha1.Cluster) clusterv1alpha1.APIEnablementStatus {
	if f == nil {
		return clusterv1alpha1.APIEnabled
	}
	// Never take away what is scheduled: should the API vanish from the
	// member (a CRD deleted by accident), its objects come back with it.
	for i := range f.scheduled {
		if f.scheduled[i].Name == cluster.Name {
			return clusterv1alpha1.APIEnabled
		}
	}
	// Karmada's Cluster.APIEnablement, which weighs the list by the
	// CompleteAPIEnablements condition; like Karmada's filter, only a kind
	// found in the list passes.
	return cluster.APIEnablement(f.api)
}

// maxNamedClusters bounds how many clusters a message names, so that it
// stays readable in a large fleet.
const maxNamedClusters = 10

// Scheduled is the binding's Scheduled condition for this result, with
// Karmada's reasons and messages: Success when there are targets,
// NoClusterFit with Karmada's FitError message ("0/3 clusters are
// available: ...") when there are none. Where the template's kind kept
// clusters out, the message goes on to name them and the kind; Karmada says
// only how many, and nothing at all when other clusters fit.
func (r Result) Scheduled() metav1.Condition {
	if len(r.Targets) > 0 {
		message := workkeys.MessageScheduled
		if len(r.LacksAPI) > 0 {
			message += fmt.Sprintf(" %d %s: %s", len(r.LacksAPI), workkeys.FilterAPIMissing, r.lacksAPIDetail())
		}
		return metav1.Condition{Type: workkeys.ConditionScheduled, Status: metav1.ConditionTrue,
			Reason: workkeys.ReasonScheduled, Message: message}
	}
	// Karmada's FitError.Error: how many clusters each filter kept out.
	// Deleting clusters are counted among the clusters but run no filter.
	histogram := map[string]int{}
	if r.affinityMisses > 0 {
		histogram[workkeys.FilterAffinityMismatch] = r.affinityMisses
	}
	if len(r.LacksAPI) > 0 {
		histogram[workkeys.FilterAPIMissing] = len(r.LacksAPI)
	}
	reasons := workkeys.MessageNoClusterExists
	if r.clusters > 0 && len(histogram) > 0 {
		counted := make([]string, 0, len(histogram))
		for reason, n := range histogram {
			counted = append(counted, fmt.Sprintf("%d %s", n, reason))
		}
		sort.Strings(counted)
		reasons = strings.Join(counted, ", ")
	}
	message := fmt.Sprintf(workkeys.MessageNoClusterFit, r.clusters, reasons)
	if len(r.LacksAPI) > 0 {
		message += " " + r.lacksAPIDetail()
	}
	return metav1.Condition{Type: workkeys.ConditionScheduled, Status: metav1.ConditionFalse,
		Reason: workkeys.ReasonNoClusterFit, Message: message}
}

// lacksAPIDetail names the kind and the clusters kept out for it, and what
// brings them in, e.g. "example.com/v1, kind=Widget is not served by
// member3; each is placed as soon as it serves it."
func (r Result) lacksAPIDetail() string {
	var disabled, unknown []string
	for _, c := range r.LacksAPI {
		if c.Status == clusterv1alpha1.APIUnknown {
			unknown = append(unknown, c.Cluster)
		} else {
			disabled = append(disabled, c.Cluster)
		}
	}
	var parts []string
	if len(disabled) > 0 {
		parts = append(parts, "not served by "+nameList(disabled))
	}
	if len(unknown) > 0 {
		parts = append(parts, "not known to be served by "+nameList(unknown)+
			" (their API enablements are incomplete or not yet collected)")
	}
	return fmt.Sprintf("%s, kind=%s is %s; each is placed as soon as it serves it.",
		r.api.GroupVersion(), r.api.Kind, strings.Join(parts, " and "))
}

// nameList joins names, naming at most maxNamedClusters of them.
func nameList(names []string) string {
	if len(names) <= maxNamedClusters {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:maxNamedClusters], ", "), len(names)-maxNamedClusters)
}
