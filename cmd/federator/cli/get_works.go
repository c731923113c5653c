package cli

import (
	"context"
	"fmt"
	"slices"
	"strings"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	"github.com/karmada-io/karmada/pkg/util/names"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gatingv1alpha1 "github.com/federator-dev/federator/apis/gating/v1alpha1"
	workkeys "github.com/federator-dev/federator/apis/work"
	"github.com/federator-dev/federator/pkg/gatestate"
	"github.com/federator-dev/federator/pkg/membership"
)

// `get works` and `get clusters`: the listings of what the hub dispatches,
// and where.

// currentCondition is the Work's condition of condType when it speaks of
// the Work's current generation; else nil and what a column shows instead:
// "Pending" while the dispatcher has not acted on this generation, "" when
// there is no such condition.
func currentCondition(w *workv1alpha1.Work, condType string) (*metav1.Condition, string) {
	c := meta.FindStatusCondition(w.Status.Conditions, condType)
	switch {
	case c == nil:
		return nil, ""
	case c.ObservedGeneration != w.Generation:
		return nil, StatePending
	}
	return c, ""
}

// dispatchingReason is the reason of the Work's Dispatching condition for
// its current spec, "Pending" while the dispatcher has not decided on it.
func dispatchingReason(w *workv1alpha1.Work) string {
	c, cell := currentCondition(w, workkeys.ConditionDispatching)
	if c == nil {
		return cell
	}
	return c.Reason
}

// appliedStatus is the Work's Applied status for its current spec,
// "Pending" while the member does not run this generation yet (an Applied
// of an older one says nothing of it), and the failure's message.
func appliedStatus(w *workv1alpha1.Work) (status, message string) {
	c, cell := currentCondition(w, workkeys.ConditionApplied)
	if c == nil {
		return cell, ""
	}
	if c.Status != metav1.ConditionTrue {
		message = c.Message
	}
	return string(c.Status), message
}

// workListing is `get works`: Works of templates in the namespace (every
// Work with -A), NAMESPACE being the template's.
type workListing struct{ objects }

func listWorkObjects(ctx context.Context, h *hub, name string) (listing, error) {
	works := &workv1alpha1.WorkList{}
	if err := h.client.List(ctx, works); err != nil {
		return nil, h.explain(err, "list", ref{kind: "Works", resource: "works.work.karmada.io"})
	}
	var items objects
	for i := range works.Items {
		w := &works.Items[i]
		if (name != "" && w.Name != name) || (!h.allNamespaces && templateNamespace(w) != h.namespace) {
			continue
		}
		items = append(items, w)
	}
	slices.SortFunc(items, func(a, b client.Object) int {
		return strings.Compare(templateNamespace(a.(*workv1alpha1.Work))+"/"+a.GetName()+"/"+a.GetNamespace(),
			templateNamespace(b.(*workv1alpha1.Work))+"/"+b.GetName()+"/"+b.GetNamespace())
	})
	if name != "" && len(items) == 0 {
		return nil, namedNotFound(h, []string{"Work"}, !h.allNamespaces, name)
	}
	return workListing{items}, nil
}

func templateNamespace(w *workv1alpha1.Work) string {
	if m := workkeys.FirstManifest(w); m != nil {
		return m.GetNamespace()
	}
	return ""
}

func (l workListing) table(wide bool, h *hub) *table {
	t := &table{headers: withNamespace(h.allNamespaces, "NAMESPACE", "CLUSTER", "NAME", "TEMPLATE", "DISPATCHING", "APPLIED", "AGE")}
	if wide {
		t.headers = append(t.headers, "MESSAGE")
	}
	for _, obj := range l.objects {
		w := obj.(*workv1alpha1.Work)
		cluster, _ := names.GetClusterName(w.Namespace)
		template := ""
		if m := workkeys.FirstManifest(w); m != nil {
			template = m.GetKind() + "/" + m.GetName()
		}
		applied, failure := appliedStatus(w)
		cells := withNamespace(h.allNamespaces, templateNamespace(w), cluster, w.Name, template,
			dispatchingReason(w), applied, age(w.CreationTimestamp, h.now()))
		if wide {
			message := w.Annotations[workkeys.HoldMessageAnnotation]
			if message == "" {
				message = failure
			}
			cells = append(cells, message)
		}
		t.add(cells...)
	}
	return t
}

// clusterListing is `get clusters`, with Karmada's columns.
type clusterListing struct {
	objects
	works   []workv1alpha1.Work
	freezes []gatingv1alpha1.Freeze
}

func listClusters(ctx context.Context, h *hub, name string) (listing, error) {
	r := ref{kind: "Cluster", resource: "clusters.cluster.karmada.io"}
	found, err := getOrList(ctx, h, &clusterv1alpha1.Cluster{}, &clusterv1alpha1.ClusterList{}, r, name)
	if err != nil {
		return nil, err
	}
	if name != "" && len(found) == 0 {
		return nil, namedNotFound(h, []string{"Cluster"}, false, name)
	}
	works := &workv1alpha1.WorkList{}
	if err := h.client.List(ctx, works); err != nil {
		return nil, h.explain(err, "list", ref{kind: "Works", resource: "works.work.karmada.io"})
	}
	// A hub that does not serve Freezes yet has none in force.
	freezes := &gatingv1alpha1.FreezeList{}
	if err := h.client.List(ctx, freezes); err != nil && !meta.IsNoMatchError(err) {
		return nil, h.explain(err, "list", freezeRef)
	}
	return clusterListing{objects: found, works: works.Items, freezes: freezes.Items}, nil
}

func (l clusterListing) table(wide bool, h *hub) *table {
	t := &table{headers: []string{"NAME", "VERSION", "MODE", "READY", "FROZEN", "AGE"}}
	if wide {
		t.headers = append(t.headers, "API-ENDPOINT", "WORKS", "HELD")
	}
	// Freezes end by the hub's clock.
	now, ok := h.hubNow()
	if !ok {
		now = h.now()
	}
	for _, obj := range l.objects {
		c := obj.(*clusterv1alpha1.Cluster)
		frozen := "-"
		if f := gatestate.Frozen(l.freezes, c.Name, now); f != nil {
			frozen = f.Name
			if f.Spec.Message != "" {
				frozen += " (" + f.Spec.Message + ")"
			}
		}
		cells := []string{c.Name, c.Status.KubernetesVersion, membership.Mode(c),
			conditionStatus(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady), frozen, age(c.CreationTimestamp, h.now())}
		if wide {
			total, held := 0, 0
			for _, w := range l.works {
				if w.Namespace == names.GenerateExecutionSpaceName(c.Name) {
					total++
					if ptr.Deref(w.Spec.SuspendDispatching, false) {
						held++
					}
				}
			}
			cells = append(cells, c.Spec.APIEndpoint, fmt.Sprint(total), fmt.Sprint(held))
		}
		t.add(cells...)
	}
	return t
}
