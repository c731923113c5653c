package cli

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"strings"

	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	"github.com/karmada-io/karmada/pkg/util/names"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workkeys "github.com/federator-dev/federator/apis/work"
	"github.com/federator-dev/federator/internal/manifest"
	"github.com/federator-dev/federator/internal/overrides"
	"github.com/federator-dev/federator/pkg/copystate"
)

// The states `get rollout` reports per template and cluster (names fixed
// in docs/guides/incident-freeze.md, get rollout -o json).
const (
	// StateApplied: the member runs the template's current generation.
	StateApplied = copystate.Applied
	// StateHeld: something holds the cluster's copy; the message says what
	// and what releases it.
	StateHeld = copystate.Held
	// StateFailed: the member refused the Work; the message is its error.
	StateFailed = copystate.Failed
	// StatePending: not applied yet (no Work yet, the Work not yet at the
	// template's generation, or the member not yet done).
	StatePending = copystate.Pending
	// StateDeleting: the copy is being removed from the member.
	StateDeleting = copystate.Deleting
)

// RolloutListVersion and RolloutListKind identify `get rollout -o json`'s
// document; a field is only ever added to it.
const (
	RolloutListVersion = "cli.federator.dev/v1alpha1"
	RolloutListKind    = "RolloutList"
)

// rolloutList is `get rollout -o json|yaml`: one item per template.
type rolloutList struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Items      []templateRollout `json:"items"`
}

// templateRollout is one template and each of its target clusters.
type templateRollout struct {
	Template templateInfo     `json:"template"`
	Policy   *objectRef       `json:"policy,omitempty"`
	Binding  objectRef        `json:"binding"`
	Clusters []clusterRollout `json:"clusters"`
}

type templateInfo struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
	// Generation is the template's metadata.generation on the hub; 0 when
	// the template is gone.
	Generation int64 `json:"generation"`
}

type objectRef struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

// clusterRollout is the state of one template in one cluster.
type clusterRollout struct {
	Cluster string `json:"cluster"`
	// State is Applied, Held, Failed, Pending or Deleting.
	State string `json:"state"`
	// Generation is the template generation the member runs; set when
	// Applied.
	Generation int64 `json:"generation,omitempty"`
	// Images are the container images the member runs; set when Applied.
	Images []string `json:"images,omitempty"`
	// RunningImages are the container images the member still runs while
	// its copy is Held, Pending or Failed, when the hub knows them.
	RunningImages []string `json:"runningImages,omitempty"`
	// WantedImages are the container images the Work carries and the
	// member does not run yet (Held, Pending, Failed).
	WantedImages []string `json:"wantedImages,omitempty"`
	// ReadyReplicas and DesiredReplicas come from the status collected from
	// the member, for workloads.
	ReadyReplicas   *int64 `json:"readyReplicas,omitempty"`
	DesiredReplicas *int64 `json:"desiredReplicas,omitempty"`
	// Reason is the hold reason when Held (SuspendDispatching, ...), else
	// the Work's Applied condition reason.
	Reason string `json:"reason,omitempty"`
	// Message says, for a person, what holds it and what releases it, the
	// member's error, or what it waits for.
	Message string     `json:"message,omitempty"`
	Work    *objectRef `json:"work,omitempty"`
}

// clusterState is the pure summary of one cluster's copy from its Work
// (nil when there is none yet), as pkg/copystate judges it. current
// says whether the Work carries the template's latest generation;
// deleting, whether the template or its binding is going away.
func clusterState(cluster string, work *workv1alpha1.Work, current, deleting bool, templateGeneration int64) clusterRollout {
	s := copystate.Of(cluster, work, current, deleting, templateGeneration)
	r := clusterRollout{Cluster: s.Cluster, State: s.State, Generation: s.Generation, Images: s.Images,
		ReadyReplicas: s.ReadyReplicas, DesiredReplicas: s.DesiredReplicas, Reason: s.Reason, Message: s.Message}
	if s.Running != nil {
		r.RunningImages = s.Running.Images
	}
	if s.Wants != nil {
		r.WantedImages = s.Wants.Images
	}
	if s.HasWork {
		r.Work = &objectRef{Kind: "Work", Namespace: work.Namespace, Name: work.Name}
	}
	return r
}

// carriesTemplate reports whether work carries tpl as the binding
// controller would write it now (internal/manifest's Render), i.e. whether the
// Work is at the template's latest generation.
func carriesTemplate(b binding, tpl *unstructured.Unstructured, target workv1alpha2.TargetCluster, work *workv1alpha1.Work,
	override overrides.Func) bool {
	have := workkeys.FirstManifest(work)
	if have == nil || tpl == nil {
		return false
	}
	idLabel := workv1alpha2.ResourceBindingPermanentIDLabel
	if b.clusterScoped {
		idLabel = workv1alpha2.ClusterResourceBindingPermanentIDLabel
	}
	want, _, err := manifest.Render(tpl, target, b.spec.Replicas > 0, manifest.Origin{
		ClusterScoped: b.clusterScoped, BindingNamespace: b.obj.GetNamespace(), BindingName: b.obj.GetName(),
		BindingID: b.obj.GetLabels()[idLabel], WorkNamespace: work.Namespace, WorkName: work.Name,
		ConflictResolution: b.spec.ConflictResolution,
		// A Pull cluster's manifest carries the template generation it
		// was made from (pkg/binding): so does the one it should be.
		Pull: have.GetAnnotations()[workv1alpha2.ResourceTemplateGenerationAnnotationKey] != "",
	}, override)
	if err != nil {
		return false
	}
	// Both decoded from JSON the same way, so numbers compare alike.
	raw, err := json.Marshal(want.Object)
	if err != nil {
		return false
	}
	decoded := &unstructured.Unstructured{}
	if decoded.UnmarshalJSON(raw) != nil {
		return false
	}
	return reflect.DeepEqual(have.Object, decoded.Object)
}

// listWorks indexes every Work on the hub by namespace and name.
func listWorks(ctx context.Context, c client.Reader) (map[client.ObjectKey]*workv1alpha1.Work, error) {
	works := &workv1alpha1.WorkList{}
	if err := c.List(ctx, works); err != nil {
		return nil, err
	}
	out := make(map[client.ObjectKey]*workv1alpha1.Work, len(works.Items))
	for i := range works.Items {
		out[client.ObjectKeyFromObject(&works.Items[i])] = &works.Items[i]
	}
	return out, nil
}

// rolloutFilter selects templates by the NAME argument: "web" or
// "Deployment/web" (kind matched case-insensitively).
func rolloutFilter(arg string) func(ref) bool {
	if arg == "" {
		return func(ref) bool { return true }
	}
	kind, name, hasKind := strings.Cut(arg, "/")
	if !hasKind {
		name, kind = arg, ""
	}
	return func(r ref) bool {
		return r.name == name && (kind == "" || strings.EqualFold(r.kind, kind))
	}
}

// gatherRollouts reads, from the hub, the state of every selected template
// in every cluster it targets or is leaving.
func gatherRollouts(ctx context.Context, h *hub, name string) ([]templateRollout, error) {
	bindings, err := listBindings(ctx, h.client, h.namespace, h.allNamespaces)
	if err != nil {
		return nil, h.explain(err, "list", ref{kind: "ResourceBindings", namespace: h.namespace, resource: "resourcebindings.work.karmada.io"})
	}
	works, err := listWorks(ctx, h.client)
	if err != nil {
		return nil, h.explain(err, "list", ref{kind: "Works", resource: "works.work.karmada.io"})
	}
	selected := rolloutFilter(name)
	tpls := &templates{h: h, byKind: map[schema.GroupVersionKind]map[client.ObjectKey]*unstructured.Unstructured{},
		override: overrides.Karmada(newListedOnce(h.client))}
	var out []templateRollout
	for _, b := range bindings {
		if !selected(b.template()) {
			continue
		}
		item, err := rolloutOf(ctx, h, b, tpls, works)
		if err != nil {
			return nil, err
		}
		out = append(out, item)
	}
	slices.SortFunc(out, func(a, b templateRollout) int {
		return strings.Compare(a.Template.Namespace+"/"+a.Template.Kind+"/"+a.Template.Name,
			b.Template.Namespace+"/"+b.Template.Kind+"/"+b.Template.Name)
	})
	return out, nil
}

// templates reads resource templates with one list per kind rather than
// one request per template, so a --watch refresh of a large hub costs it a
// few requests.
type templates struct {
	h      *hub
	byKind map[schema.GroupVersionKind]map[client.ObjectKey]*unstructured.Unstructured
	// override renders a template as the binding controller does, with
	// the override policies read once per command.
	override overrides.Func
}

// get returns the template, nil when there is none.
func (t *templates) get(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string) (*unstructured.Unstructured, error) {
	index, listed := t.byKind[gvk]
	if !listed {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		var opts []client.ListOption
		if !t.h.allNamespaces && namespace != "" {
			opts = append(opts, client.InNamespace(t.h.namespace))
		}
		if err := t.h.client.List(ctx, list, opts...); err != nil {
			return nil, t.h.explain(err, "list", ref{kind: gvk.Kind, namespace: namespace})
		}
		index = make(map[client.ObjectKey]*unstructured.Unstructured, len(list.Items))
		for i := range list.Items {
			index[client.ObjectKeyFromObject(&list.Items[i])] = &list.Items[i]
		}
		t.byKind[gvk] = index
	}
	return index[client.ObjectKey{Namespace: namespace, Name: name}], nil
}

func rolloutOf(ctx context.Context, h *hub, b binding, tpls *templates, works map[client.ObjectKey]*workv1alpha1.Work) (templateRollout, error) {
	res := b.spec.Resource
	item := templateRollout{
		Template: templateInfo{APIVersion: res.APIVersion, Kind: res.Kind, Namespace: res.Namespace, Name: res.Name},
		Binding:  objectRef{Kind: b.kind(), Namespace: b.obj.GetNamespace(), Name: b.obj.GetName()},
	}
	if p := b.policy(); p.kind != "" {
		item.Policy = &objectRef{Kind: p.kind, Namespace: p.namespace, Name: p.name}
	}
	tpl, err := tpls.get(ctx, b.templateGVK(), res.Namespace, res.Name)
	if err != nil {
		return item, err
	}
	if tpl != nil {
		item.Template.Generation = tpl.GetGeneration()
	}
	deleting := tpl == nil || !tpl.GetDeletionTimestamp().IsZero() || !b.obj.GetDeletionTimestamp().IsZero()
	targeted := map[string]bool{}
	for _, target := range b.spec.Clusters {
		targeted[target.Name] = true
		w := works[b.workKey(target.Name)]
		current := w != nil && carriesTemplate(b, tpl, target, w, tpls.override)
		item.Clusters = append(item.Clusters, clusterState(target.Name, w, current, deleting, item.Template.Generation))
	}
	// Works of clusters the binding no longer targets are on their way out.
	for key, w := range works {
		cluster, err := names.GetClusterName(key.Namespace)
		if err != nil || targeted[cluster] || key != b.workKey(cluster) {
			continue
		}
		item.Clusters = append(item.Clusters, clusterState(cluster, w, false, true, item.Template.Generation))
	}
	slices.SortFunc(item.Clusters, func(a, b clusterRollout) int { return strings.Compare(a.Cluster, b.Cluster) })
	return item, nil
}
