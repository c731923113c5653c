package main

import (
	"context"
	"fmt"
	"sort"
	"strings"

	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	"github.com/karmada-io/karmada/pkg/util/names"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// explainStale says why template may not have reached member: what the
// hub holds for it (the template's version there, and the member's Work:
// its hold fields, its hold annotations, the version its manifest
// carries and its conditions), so a run that does not converge says
// where the change stopped without a second run.
func (r *chaosRun) explainStale(ctx context.Context, template, member string) string {
	var parts []string
	tpl := &unstructured.Unstructured{}
	tpl.SetGroupVersionKind(gvkOf(template))
	if err := r.hub.Get(ctx, types.NamespacedName{Namespace: namespace, Name: template}, tpl); err != nil {
		parts = append(parts, "hub template: "+err.Error())
	} else {
		parts = append(parts, fmt.Sprintf("hub template: %s (resourceVersion %s)", versionOf(template)(tpl), tpl.GetResourceVersion()))
	}
	w := &workv1alpha1.Work{}
	key := types.NamespacedName{Namespace: names.GenerateExecutionSpaceName(member), Name: names.GenerateWorkName(gvkOf(template).Kind, template, namespace)}
	if err := r.hub.Get(ctx, key, w); err != nil {
		return strings.Join(append(parts, "Work "+key.String()+": "+err.Error()), "; ")
	}
	suspended := w.Spec.SuspendDispatching != nil && *w.Spec.SuspendDispatching
	parts = append(parts, fmt.Sprintf("Work %s: suspendDispatching=%t generation=%d resourceVersion=%s deleting=%t",
		key, suspended, w.Generation, w.ResourceVersion, w.DeletionTimestamp != nil))
	for _, m := range w.Spec.Workload.Manifests {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(m.Raw); err == nil && u.GetName() == template {
			parts = append(parts, "manifest version "+versionOf(template)(u))
		}
	}
	var notes []string
	for k, v := range w.Annotations {
		if strings.Contains(k, "federator.dev/") {
			notes = append(notes, k+"="+v)
		}
	}
	sort.Strings(notes)
	parts = append(parts, notes...)
	for _, c := range w.Status.Conditions {
		parts = append(parts, fmt.Sprintf("condition %s=%s %s: %s", c.Type, c.Status, c.Reason, c.Message))
	}
	var said []string
	for _, l := range r.processes().logs() {
		if strings.Contains(l, template) && strings.Contains(l, member) {
			said = append(said, l)
		}
	}
	out := strings.Join(parts, "; ")
	if len(said) > 0 {
		out += "\n    the controllers' last lines about it:\n      " + strings.Join(said[max(0, len(said)-5):], "\n      ")
	}
	return out
}
