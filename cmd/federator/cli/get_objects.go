package cli

import (
	"context"
	"fmt"
	"slices"
	"strings"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	policykeys "github.com/federator-dev/federator/apis/policy"
	workkeys "github.com/federator-dev/federator/apis/work"
)

// objects is a listing of API objects: -o json|yaml prints them as kubectl
// does (a List, or the one object named), without managedFields.
type objects []client.Object

func (o objects) len() int { return len(o) }

func (o objects) object(single bool) any {
	scheme := policykeys.NewScheme()
	items := make([]client.Object, 0, len(o))
	for _, obj := range o {
		obj = obj.DeepCopyObject().(client.Object)
		if gvk, err := apiutil.GVKForObject(obj, scheme); err == nil {
			obj.GetObjectKind().SetGroupVersionKind(gvk)
		}
		obj.SetManagedFields(nil)
		items = append(items, obj)
	}
	if single && len(items) == 1 {
		return items[0]
	}
	return map[string]any{"apiVersion": "v1", "kind": "List", "items": items, "metadata": map[string]any{"resourceVersion": ""}}
}

// shortKind is what kubectl users type for the kind, for NAME cells in a
// listing of two kinds ("pp/web", "cpp/all").
func shortKind(obj client.Object) string {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		switch u.GetKind() {
		case kindPropagationPolicy:
			return "pp"
		case kindClusterPropagationPolicy:
			return "cpp"
		}
	}
	switch obj.(type) {
	case *policyv1alpha1.PropagationPolicy:
		return "pp"
	case *policyv1alpha1.ClusterPropagationPolicy:
		return "cpp"
	case *workv1alpha2.ResourceBinding:
		return "rb"
	case *workv1alpha2.ClusterResourceBinding:
		return "crb"
	}
	return ""
}

// nameCell is NAME: prefixed with the kind when two kinds share the table.
func nameCell(obj client.Object, mixed bool) string {
	if mixed {
		return shortKind(obj) + "/" + obj.GetName()
	}
	return obj.GetName()
}

// getOrList reads the object named name into one, or lists into list (in
// namespace, unless all or cluster-scoped); it returns what it found.
func getOrList(ctx context.Context, h *hub, one client.Object, list client.ObjectList, r ref, name string) ([]client.Object, error) {
	if name != "" {
		err := h.client.Get(ctx, client.ObjectKey{Namespace: r.namespace, Name: name}, one)
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		if err != nil {
			r.name = name
			return nil, h.explain(err, "get", r)
		}
		return []client.Object{one}, nil
	}
	var opts []client.ListOption
	if r.namespace != "" && !h.allNamespaces {
		opts = append(opts, client.InNamespace(r.namespace))
	}
	if err := h.client.List(ctx, list, opts...); err != nil {
		return nil, h.explain(err, "list", r)
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, err
	}
	out := make([]client.Object, 0, len(items))
	for _, item := range items {
		out = append(out, item.(client.Object))
	}
	return out, nil
}

// namedNotFound is the error for a NAME no listed kind has.
func namedNotFound(h *hub, kinds []string, namespaced bool, name string) error {
	where := ""
	if namespaced {
		where = " in namespace " + h.namespace
	}
	return fmt.Errorf("no %s named %q%s on the hub at %s: check the name and the namespace (-n)",
		strings.Join(kinds, " or "), name, where, h.host)
}

// source is one kind of object a listing reads.
type source struct {
	kind       string
	resource   string
	namespaced bool
	object     func() client.Object
	list       func() client.ObjectList
}

var (
	ppSource = source{kind: kindPropagationPolicy, resource: "propagationpolicies.policy.karmada.io", namespaced: true,
		object: func() client.Object { return storedPolicy("PropagationPolicy") },
		list:   func() client.ObjectList { return storedPolicies("PropagationPolicyList") }}
	cppSource = source{kind: kindClusterPropagationPolicy, resource: "clusterpropagationpolicies.policy.karmada.io",
		object: func() client.Object { return storedPolicy("ClusterPropagationPolicy") },
		list:   func() client.ObjectList { return storedPolicies("ClusterPropagationPolicyList") }}
	rbSource = source{kind: "ResourceBinding", resource: "resourcebindings.work.karmada.io", namespaced: true,
		object: func() client.Object { return &workv1alpha2.ResourceBinding{} },
		list:   func() client.ObjectList { return &workv1alpha2.ResourceBindingList{} }}
	crbSource = source{kind: "ClusterResourceBinding", resource: "clusterresourcebindings.work.karmada.io",
		object: func() client.Object { return &workv1alpha2.ClusterResourceBinding{} },
		list:   func() client.ObjectList { return &workv1alpha2.ClusterResourceBindingList{} }}
)

// Policies are read as stored (unstructured): their status, and the
// suspension proposal's spellings of spec.suspension, are not in Karmada's
// Go types.
func storedPolicy(kind string) client.Object {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(policyv1alpha1.SchemeGroupVersion.WithKind(kind))
	return u
}

func storedPolicies(kind string) client.ObjectList {
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(policyv1alpha1.SchemeGroupVersion.WithKind(kind))
	return l
}

// listSources reads the named object, or lists, of every source; as puts
// what it read into a listing, told whether two kinds share it.
func listSources(as func(items objects, mixed bool) listing, sources ...source) func(context.Context, *hub, string) (listing, error) {
	return func(ctx context.Context, h *hub, name string) (listing, error) {
		var items objects
		var kinds []string
		namespaced := false
		for _, src := range sources {
			r := ref{kind: src.kind, resource: src.resource}
			if src.namespaced {
				r.namespace, namespaced = h.namespace, true
			}
			found, err := getOrList(ctx, h, src.object(), src.list(), r, name)
			if err != nil {
				return nil, err
			}
			items, kinds = append(items, found...), append(kinds, src.kind)
		}
		if name != "" && len(items) == 0 {
			return nil, namedNotFound(h, kinds, namespaced, name)
		}
		return as(items, len(sources) > 1), nil
	}
}

// policyListing is `get policies|pp|cpp`.
type policyListing struct {
	objects
	mixed bool
}

func asPolicies(items objects, mixed bool) listing {
	return policyListing{objects: items, mixed: mixed}
}

func (l policyListing) table(wide bool, h *hub) *table {
	t := &table{headers: withNamespace(h.allNamespaces, "NAMESPACE", "NAME", "CONFLICT-RESOLUTION", "PRIORITY", "AGE")}
	if wide {
		t.headers = append(t.headers, "RESOURCES", "CLUSTERS")
	}
	t.headers = append(t.headers, "SUSPENDED")
	for _, p := range l.objects {
		spec := policykeys.SpecOf(p)
		if u, ok := p.(*unstructured.Unstructured); ok {
			if stored, err := policykeys.StoredSpec(u); err == nil {
				spec = stored
			}
		}
		cells := withNamespace(h.allNamespaces, p.GetNamespace(), nameCell(p, l.mixed), string(spec.ConflictResolution),
			fmt.Sprint(ptr.Deref(spec.Priority, 0)), age(p.GetCreationTimestamp(), h.now()))
		if wide {
			var selectors []string
			for _, s := range spec.ResourceSelectors {
				selectors = append(selectors, strings.Trim(s.Kind+"/"+s.Name, "/"))
			}
			var clusters []string
			if spec.Placement.ClusterAffinity != nil {
				clusters = spec.Placement.ClusterAffinity.ClusterNames
			}
			cells = append(cells, strings.Join(selectors, ","), strings.Join(clusters, ","))
		}
		t.add(append(cells, policySuspension(p.GetAnnotations(), spec.Suspension))...)
	}
	return t
}

// policySuspension says, in a few words, what a policy itself suspends:
// its annotations (with the reasons given) and its spec.suspension.
func policySuspension(annotations map[string]string, s *policyv1alpha1.Suspension) string {
	var parts []string
	if v, ok := annotations[policykeys.SuspendedAnnotation]; ok {
		parts = append(parts, "every cluster"+quotedReason(v))
	}
	var keys []string
	for k := range annotations {
		if strings.HasPrefix(k, policykeys.ClusterSuspendedAnnotationPrefix) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		parts = append(parts, strings.TrimPrefix(k, policykeys.ClusterSuspendedAnnotationPrefix)+quotedReason(annotations[k]))
	}
	if s != nil && ptr.Deref(s.Dispatching, false) {
		parts = append(parts, "every cluster (spec.suspension)")
	} else if s != nil && s.DispatchingOnClusters != nil && len(s.DispatchingOnClusters.ClusterNames) > 0 {
		parts = append(parts, strings.Join(s.DispatchingOnClusters.ClusterNames, ",")+" (spec.suspension)")
	}
	return strings.Join(parts, "; ")
}

// bindingListing is `get bindings|rb|crb`.
type bindingListing struct {
	objects
	mixed bool
}

func asBindings(items objects, mixed bool) listing {
	return bindingListing{objects: items, mixed: mixed}
}

func asBinding(obj client.Object) binding {
	if crb, ok := obj.(*workv1alpha2.ClusterResourceBinding); ok {
		return clusterBindingOf(crb)
	}
	return bindingOf(obj.(*workv1alpha2.ResourceBinding))
}

func (l bindingListing) table(wide bool, h *hub) *table {
	t := &table{headers: withNamespace(h.allNamespaces, "NAMESPACE", "NAME", "TEMPLATE", "CLUSTERS", "SCHEDULED", "FULLYAPPLIED", "AGE")}
	if wide {
		t.headers = append(t.headers, "POLICY", "WORKSSYNCED")
	}
	for _, obj := range l.objects {
		b := asBinding(obj)
		tpl := b.template()
		cells := withNamespace(h.allNamespaces, obj.GetNamespace(), nameCell(obj, l.mixed), tpl.kind+"/"+tpl.name,
			strings.Join(b.targets(), ","), conditionStatus(b.status.Conditions, workkeys.ConditionScheduled),
			conditionStatus(b.status.Conditions, workkeys.ConditionFullyApplied), age(obj.GetCreationTimestamp(), h.now()))
		if wide {
			policy := ""
			if p := b.policy(); p.kind != "" {
				policy = p.kind + "/" + p.name
			}
			cells = append(cells, policy, conditionStatus(b.status.Conditions, workkeys.ConditionWorksSynced))
		}
		t.add(cells...)
	}
	return t
}

func conditionStatus(conds []metav1.Condition, condType string) string {
	if c := meta.FindStatusCondition(conds, condType); c != nil {
		return string(c.Status)
	}
	return ""
}
