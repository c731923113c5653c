package bindingstatus

import (
	"encoding/json"
	"fmt"

	configv1alpha1 "github.com/karmada-io/karmada/pkg/apis/config/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	"github.com/karmada-io/karmada/pkg/resourceinterpreter/default/native"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// interpreter is Karmada's built-in resource interpreter; its status
// aggregation is the hub template's status.
var interpreter = native.NewDefaultInterpreter()

// aggregatedKinds are the templates whose status the hub writes: the
// workloads. Karmada's interpreter aggregates a few more kinds (Service,
// Ingress, Pod, PV, PVC, PDB, HPA, CronJob); they are not written yet.
var aggregatedKinds = map[schema.GroupKind]bool{
	{Group: "apps", Kind: "Deployment"}:  true,
	{Group: "apps", Kind: "ReplicaSet"}:  true,
	{Group: "apps", Kind: "StatefulSet"}: true,
	{Group: "apps", Kind: "DaemonSet"}:   true,
	{Group: "batch", Kind: "Job"}:        true,
}

// federatedGenerationKinds are the kinds whose collected status carries
// Karmada's FederatedGeneration (the member object's generation and the
// template generation it runs).
var federatedGenerationKinds = map[schema.GroupKind]bool{
	{Group: "apps", Kind: "Deployment"}:  true,
	{Group: "apps", Kind: "ReplicaSet"}:  true,
	{Group: "apps", Kind: "StatefulSet"}: true,
	{Group: "apps", Kind: "DaemonSet"}:   true,
}

// TemplateStatus is the hub template's status aggregated from the
// members', by Karmada's default interpreter: replica counts summed, a
// Job's counts summed and its Complete or Failed condition once every
// member's Job finished, and so on. It returns whether the status differs
// from the template's, so an unchanged one is never written.
//
// Karmada counts a member as running the template's latest generation
// from the generation it stamps on member objects; federator stamps none,
// so current[cluster] says it instead (the cluster's Work carries the
// latest template, is dispatched and applied): observedGeneration becomes
// the template's generation once every target is current and its
// controller has observed its spec, else it keeps its old value.
func TemplateStatus(tpl *unstructured.Unstructured, items []workv1alpha2.AggregatedStatusItem, current map[string]bool) (map[string]any, bool, error) {
	gvk := tpl.GroupVersionKind()
	if !aggregatedKinds[gvk.GroupKind()] || !interpreter.HookEnabled(gvk, configv1alpha1.InterpreterOperationAggregateStatus) {
		return nil, false, nil
	}
	if federatedGenerationKinds[gvk.GroupKind()] {
		var err error
		if items, err = withTemplateGeneration(items, current, tpl.GetGeneration()); err != nil {
			return nil, false, fmt.Errorf("read the status collected from members for %s %s/%s: %w",
				tpl.GetKind(), tpl.GetNamespace(), tpl.GetName(), err)
		}
	}
	out, err := interpreter.AggregateStatus(tpl, items)
	if err != nil {
		return nil, false, fmt.Errorf("aggregate the members' status into %s %s/%s: %w",
			tpl.GetKind(), tpl.GetNamespace(), tpl.GetName(), err)
	}
	status, _ := out.Object["status"].(map[string]any)
	old, _ := tpl.Object["status"].(map[string]any)
	if gvk.Group == "batch" && gvk.Kind == "Job" && status != nil {
		jobStartTime(status, old, items)
	}
	if out == tpl || equality.Semantic.DeepEqual(status, old) {
		return old, false, nil
	}
	return status, true, nil
}

// withTemplateGeneration writes into each item the template generation
// Karmada's aggregation compares with the template's: at least the
// template's and the member object's own when the cluster is current, none
// otherwise.
func withTemplateGeneration(items []workv1alpha2.AggregatedStatusItem, current map[string]bool, templateGeneration int64) ([]workv1alpha2.AggregatedStatusItem, error) {
	out := make([]workv1alpha2.AggregatedStatusItem, len(items))
	for i, item := range items {
		out[i] = item
		if item.Status == nil {
			continue
		}
		var status map[string]json.RawMessage
		if err := json.Unmarshal(item.Status.Raw, &status); err != nil {
			return nil, fmt.Errorf("cluster %s: %w", item.ClusterName, err)
		}
		delete(status, "resourceTemplateGeneration")
		if current[item.ClusterName] {
			var generation native.FederatedGeneration
			if err := json.Unmarshal(item.Status.Raw, &generation); err != nil {
				return nil, fmt.Errorf("cluster %s: %w", item.ClusterName, err)
			}
			// Karmada compares a StatefulSet's with the member object's
			// generation, the others' with the template's.
			stamp, _ := json.Marshal(max(templateGeneration, generation.Generation))
			status["resourceTemplateGeneration"] = stamp
		}
		raw, err := json.Marshal(status)
		if err != nil {
			return nil, err
		}
		out[i].Status = &runtime.RawExtension{Raw: raw}
	}
	return out, nil
}

// jobStartTime keeps a Job's startTime as Karmada v1.17 does (v1.16 takes
// the earliest a member reported so far, which moves as members report):
// the API server refuses to change it once set, and refuses every later
// status with it. So it is set once, when every member's Job has started,
// and kept.
func jobStartTime(status, old map[string]any, items []workv1alpha2.AggregatedStatusItem) {
	if start, ok := old["startTime"]; ok && start != nil {
		status["startTime"] = start
		return
	}
	for _, item := range items {
		var s struct {
			StartTime *string `json:"startTime"`
		}
		if item.Status == nil || json.Unmarshal(item.Status.Raw, &s) != nil || s.StartTime == nil {
			delete(status, "startTime")
			return
		}
	}
}
