package cli

import (
	"context"
	"slices"

	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	"github.com/karmada-io/karmada/pkg/util/names"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workkeys "github.com/federator-dev/federator/apis/work"
)

// binding is what the commands read of a ResourceBinding or a
// ClusterResourceBinding, so one code path serves both.
type binding struct {
	obj           client.Object
	spec          *workv1alpha2.ResourceBindingSpec
	status        *workv1alpha2.ResourceBindingStatus
	clusterScoped bool
}

func bindingOf(rb *workv1alpha2.ResourceBinding) binding {
	return binding{obj: rb, spec: &rb.Spec, status: &rb.Status}
}

func clusterBindingOf(crb *workv1alpha2.ClusterResourceBinding) binding {
	return binding{obj: crb, spec: &crb.Spec, status: &crb.Status, clusterScoped: true}
}

func (b binding) kind() string {
	if b.clusterScoped {
		return "ClusterResourceBinding"
	}
	return "ResourceBinding"
}

// policy names the policy that claims the binding's template, from the
// annotations the detector records (Karmada's keys); kind "" when none.
func (b binding) policy() ref {
	kind, namespace, name := workkeys.ClaimingPolicy(b.obj.GetAnnotations())
	if kind == "" {
		return ref{}
	}
	return ref{kind: kind, namespace: namespace, name: name}
}

// template names the binding's resource template.
func (b binding) template() ref {
	r := b.spec.Resource
	return ref{kind: r.Kind, namespace: r.Namespace, name: r.Name}
}

func (b binding) templateGVK() schema.GroupVersionKind {
	return schema.FromAPIVersionAndKind(b.spec.Resource.APIVersion, b.spec.Resource.Kind)
}

// targets are the clusters the binding places its template on.
func (b binding) targets() []string {
	out := make([]string, 0, len(b.spec.Clusters))
	for _, t := range b.spec.Clusters {
		out = append(out, t.Name)
	}
	slices.Sort(out)
	return out
}

// workKey is the Work that carries the binding's template to cluster, by
// Karmada's naming.
func (b binding) workKey(cluster string) client.ObjectKey {
	r := b.spec.Resource
	return client.ObjectKey{Namespace: names.GenerateExecutionSpaceName(cluster), Name: names.GenerateWorkName(r.Kind, r.Name, r.Namespace)}
}

// listBindings lists the ResourceBindings in namespace, or with all every
// ResourceBinding and ClusterResourceBinding.
func listBindings(ctx context.Context, c client.Reader, namespace string, all bool) ([]binding, error) {
	rbs := &workv1alpha2.ResourceBindingList{}
	var opts []client.ListOption
	if !all {
		opts = append(opts, client.InNamespace(namespace))
	}
	if err := c.List(ctx, rbs, opts...); err != nil {
		return nil, err
	}
	var out []binding
	for i := range rbs.Items {
		out = append(out, bindingOf(&rbs.Items[i]))
	}
	if !all {
		return out, nil
	}
	crbs := &workv1alpha2.ClusterResourceBindingList{}
	if err := c.List(ctx, crbs); err != nil {
		return nil, err
	}
	for i := range crbs.Items {
		out = append(out, clusterBindingOf(&crbs.Items[i]))
	}
	return out, nil
}

// templateBinding is the binding of one template, by Karmada's naming;
// found false when the template is not (yet) propagated.
func templateBinding(ctx context.Context, c client.Reader, k kind, namespace, name string) (binding, bool, error) {
	key := client.ObjectKey{Name: names.GenerateBindingName(k.gvk.Kind, name)}
	var b binding
	if k.namespaced {
		key.Namespace = namespace
		b = bindingOf(&workv1alpha2.ResourceBinding{})
	} else {
		b = clusterBindingOf(&workv1alpha2.ClusterResourceBinding{})
	}
	err := c.Get(ctx, key, b.obj)
	if apierrors.IsNotFound(err) {
		return binding{}, false, nil
	}
	return b, err == nil, err
}

// policyBindings are the bindings of everything the policy p claims.
func policyBindings(ctx context.Context, c client.Reader, p ref) ([]binding, error) {
	all, err := listBindings(ctx, c, p.namespace, p.kind == kindClusterPropagationPolicy)
	if err != nil {
		return nil, err
	}
	var out []binding
	for _, b := range all {
		if claimer := b.policy(); claimer.kind == p.kind && claimer.namespace == p.namespace && claimer.name == p.name {
			out = append(out, b)
		}
	}
	return out, nil
}

// getObject reads any object of kind k.
func getObject(ctx context.Context, c client.Reader, gvk schema.GroupVersionKind, namespace, name string) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	return u, c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, u)
}
