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

	workkeys "github.com/federator-dev/federator/apis/work"
	"github.com/federator-dev/federator/internal/works"
)

// `get works` and `get clusters`: the listings of what the hub dispatches,
// and where.

// dispatchingReason is the reason of the Work's Dispatching condition for
// its current spec, "Pending" while the dispatcher has not decided on it.
func dispatchingReason(w *workv1alpha1.Work) string {
	c := meta.FindStatusCondition(w.Status.Conditions, workkeys.ConditionDispatching)
	switch {
	case c == nil:
		return ""
	case c.ObservedGeneration != w.Generation:
		return StatePending
	}
	return c.Reason
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
	if m := works.FirstManifest(w); m != nil {
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
		if m := works.FirstManifest(w); m != nil {
			template = m.GetKind() + "/" + m.GetName()
		}
		cells := withNamespace(h.allNamespaces, templateNamespace(w), cluster, w.Name, template,
			dispatchingReason(w),
			conditionStatus(w.Status.Conditions, workkeys.ConditionApplied), age(w.CreationTimestamp, h.now()))
		if wide {
			message := w.Annotations[workkeys.HoldMessageAnnotation]
			if c := meta.FindStatusCondition(w.Status.Conditions, workkeys.ConditionApplied); message == "" && c != nil && c.Status != metav1.ConditionTrue {
				message = c.Message
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
	works []workv1alpha1.Work
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
	return clusterListing{objects: found, works: works.Items}, nil
}

func (l clusterListing) table(wide bool, h *hub) *table {
	t := &table{headers: []string{"NAME", "VERSION", "MODE", "READY", "AGE"}}
	if wide {
		t.headers = append(t.headers, "API-ENDPOINT", "WORKS", "HELD")
	}
	for _, obj := range l.objects {
		c := obj.(*clusterv1alpha1.Cluster)
		cells := []string{c.Name, c.Status.KubernetesVersion, string(c.Spec.SyncMode),
			conditionStatus(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady), age(c.CreationTimestamp, h.now())}
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
