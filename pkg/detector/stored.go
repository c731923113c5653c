package detector

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policykeys "github.com/federator-dev/federator/apis/policy"
)

// stored returns policy as the API server stores it, read from the cache
// (unstructured, so fields Karmada's Go types do not have are kept: the
// suspension proposal's spellings and the status the hub's CRDs add). When
// that cache is at another version of the policy than the typed one, or
// does not have it yet, it returns a conflict error, which the caller's retry treats as a cache
// behind (retry.Quietly): both caches follow the same watch and agree soon.
func (d *Reconciler) stored(ctx context.Context, policy client.Object) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(policyGVK(policy))
	err := d.client.Get(ctx, client.ObjectKeyFromObject(policy), u)
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, err
	}
	// Not found: the typed cache has the policy, this one not yet. The
	// caller's retry must come back: this cache's events do not.
	if err != nil || u.GetResourceVersion() != policy.GetResourceVersion() {
		gvk := u.GroupVersionKind()
		return nil, apierrors.NewConflict(gvk.GroupVersion().WithResource(gvk.Kind).GroupResource(), policy.GetName(),
			fmt.Errorf("the policy's caches are at versions %q and %q", u.GetResourceVersion(), policy.GetResourceVersion()))
	}
	return u, nil
}

// foldAliases folds the suspension proposal's spellings, which the typed
// cache drops, into the claiming policy's spec (policykeys.FoldAliases), so
// the binding carries what the policy says in Karmada's spelling.
func (d *Reconciler) foldAliases(ctx context.Context, claim Claim) error {
	var policy client.Object = claim.ClusterPropagationPolicy
	if claim.PropagationPolicy != nil {
		policy = claim.PropagationPolicy
	}
	u, err := d.stored(ctx, policy)
	if err != nil {
		return err
	}
	spec := claim.Spec()
	*spec = *policykeys.FoldAliases(spec, u)
	return nil
}
