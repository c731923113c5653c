package revision

import (
	"context"

	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workkeys "github.com/federator-dev/federator/apis/work"
)

// Claimed is one template a policy claims: its binding, the template as
// it is now, and its content hash.
type Claimed struct {
	Binding  client.Object
	Spec     *workv1alpha2.ResourceBindingSpec
	Template *unstructured.Unstructured
	Hash     string
}

// ClaimedBy lists the templates the policy (kind "PropagationPolicy" in
// namespace, or "ClusterPropagationPolicy") claims, by their bindings; a
// binding being deleted, or whose template is gone, is left out.
func ClaimedBy(ctx context.Context, c client.Reader, policyKind, namespace, name string) ([]Claimed, error) {
	var out []Claimed
	add := func(b client.Object, spec *workv1alpha2.ResourceBindingSpec) error {
		if !b.GetDeletionTimestamp().IsZero() {
			return nil
		}
		res := spec.Resource
		tpl := &unstructured.Unstructured{}
		tpl.SetGroupVersionKind(schema.FromAPIVersionAndKind(res.APIVersion, res.Kind))
		if err := c.Get(ctx, client.ObjectKey{Namespace: res.Namespace, Name: res.Name}, tpl); err != nil {
			return client.IgnoreNotFound(err)
		}
		hash, err := Hash(tpl)
		if err != nil {
			return err
		}
		out = append(out, Claimed{Binding: b, Spec: spec, Template: tpl, Hash: hash})
		return nil
	}
	if policyKind == "PropagationPolicy" {
		list := &workv1alpha2.ResourceBindingList{}
		if err := c.List(ctx, list, client.InNamespace(namespace)); err != nil {
			return nil, err
		}
		for i := range list.Items {
			b := &list.Items[i]
			if claims(b, policyKind, namespace, name) {
				if err := add(b, &b.Spec); err != nil {
					return nil, err
				}
			}
		}
		return out, nil
	}
	rbs := &workv1alpha2.ResourceBindingList{}
	if err := c.List(ctx, rbs); err != nil {
		return nil, err
	}
	for i := range rbs.Items {
		if b := &rbs.Items[i]; claims(b, policyKind, "", name) {
			if err := add(b, &b.Spec); err != nil {
				return nil, err
			}
		}
	}
	crbs := &workv1alpha2.ClusterResourceBindingList{}
	if err := c.List(ctx, crbs); err != nil && !apierrors.IsNotFound(err) {
		return nil, err
	}
	for i := range crbs.Items {
		if b := &crbs.Items[i]; claims(b, policyKind, "", name) {
			if err := add(b, &b.Spec); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// claims says whether the policy is the one b's annotations name.
func claims(b client.Object, policyKind, namespace, name string) bool {
	kind, ns, n := workkeys.ClaimingPolicy(b.GetAnnotations())
	return kind == policyKind && ns == namespace && n == name
}

// Behind reports whether the claimed templates' content differs from what
// the Rollout's current revision kept: a change the rollout controller has
// not taken in yet, so the status is about the content before it. False
// when no revision is kept to compare with.
func Behind(ctx context.Context, c client.Reader, ro Rollout, claimed []Claimed) (bool, error) {
	if ro.Status.Revision == 0 {
		return false, nil
	}
	cr := &appsv1.ControllerRevision{}
	if err := c.Get(ctx, ro.HistoryKey(ro.Status.Revision), cr); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	kept, err := Hashes(cr)
	if err != nil {
		return false, err
	}
	if len(kept) != len(claimed) {
		return true, nil
	}
	for _, cl := range claimed {
		if kept[BindingKey(cl.Binding)] != cl.Hash {
			return true, nil
		}
	}
	return false, nil
}
