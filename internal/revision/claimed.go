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
	"github.com/federator-dev/federator/internal/overrides"
)

// Claimed is one template a policy claims: its binding, the template as
// it is now, its content hash, and what each cluster it is placed on gets
// of it.
type Claimed struct {
	Binding  client.Object
	Spec     *workv1alpha2.ResourceBindingSpec
	Template *unstructured.Unstructured
	Hash     string
	// Clusters is what each placed cluster gets, by cluster name.
	Clusters map[string]Render
}

// Render is what one cluster gets of a template: the template with the
// override policies that select the cluster applied (before the cluster's
// share of replicas and the labels every member copy carries), and its
// content hash. A change of either the template or an override that
// applies changes the hash: both are a new revision there.
type Render struct {
	Object *unstructured.Unstructured
	Hash   string
	// Applied are the Work annotations recording the overrides applied
	// (Karmada's applied-overrides and applied-cluster-overrides).
	Applied map[string]string
	// Err says why the overrides cannot be applied; Object is nil then.
	Err error
}

// RenderFor is what cluster gets of tpl, whose content hash is hash.
func RenderFor(tpl *unstructured.Unstructured, hash, cluster string, override overrides.Func) Render {
	m := tpl.DeepCopy()
	applied, err := override(m, cluster)
	if err != nil {
		return Render{Err: err}
	}
	if len(applied) == 0 {
		// Nothing applied: the template as it is.
		return Render{Object: m, Hash: hash}
	}
	h, err := Hash(m)
	if err != nil {
		return Render{Err: err}
	}
	return Render{Object: m, Hash: h, Applied: applied}
}

// ClaimedBy lists the templates the policy (kind "PropagationPolicy" in
// namespace, or "ClusterPropagationPolicy") claims, by their bindings, each
// rendered for its clusters with override; a binding being deleted, or
// whose template is gone, is left out.
func ClaimedBy(ctx context.Context, c client.Reader, override overrides.Func, policyKind, namespace, name string) ([]Claimed, error) {
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
		cl := Claimed{Binding: b, Spec: spec, Template: tpl, Hash: hash, Clusters: map[string]Render{}}
		for _, t := range spec.Clusters {
			cl.Clusters[t.Name] = RenderFor(tpl, hash, t.Name, override)
		}
		out = append(out, cl)
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

// Changed says whether what cur's clusters get differs from what kept
// (cur's binding in a kept revision; nil when the revision did not hold
// it) says they got; Diff says how.
func Changed(kept *Template, cur Claimed) bool {
	return len(Diff(kept, cur)) > 0
}

// Behind reports whether what the claimed templates send differs from what
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
	kept, err := Templates(cr)
	if err != nil {
		return false, err
	}
	return len(Changes(kept, claimed)) > 0, nil
}
