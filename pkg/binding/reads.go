package binding

import (
	"context"

	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workkeys "github.com/federator-dev/federator/apis/work"
	"github.com/federator-dev/federator/internal/bindingview"
	"github.com/federator-dev/federator/internal/retry"
)

// templateAtLeast reads the binding's template from the cache, or from the
// API server when the cache holds a version older than the one the binding
// records (spec.resource.resourceVersion) or one of its Works was built from
// (TemplateVersionAnnotation): after a change of leader or a restart of the
// hub's API server, the template informer may still be catching up while
// the binding and Work informers have, and a manifest built from it would
// send a version the user has already replaced.
func templateAtLeast(ctx context.Context, cache, api client.Reader, b bindingview.View, works []workv1alpha1.Work) (*unstructured.Unstructured, error) {
	floors := []string{b.Spec.Resource.ResourceVersion}
	for i := range works {
		floors = append(floors, works[i].Annotations[workkeys.TemplateVersionAnnotation])
	}
	t := bindingview.TemplateObject(b)
	fresh, err := retry.ReadAtLeast(ctx, cache, api, client.ObjectKeyFromObject(t), t, floors...)
	if fresh && err == nil {
		ctrl.LoggerFrom(ctx).V(1).Info("the template cache is behind this binding or its Works: template read from the API server",
			"resourceVersion", t.GetResourceVersion())
	}
	return t, err
}

// storedWorksOf lists the binding's Works as the API server stores them,
// by its permanent-id label: what deleting a binding's Works must see. A
// cache may not yet hold a Work written moments ago (a new leader's cache
// catching up after a hub restart), and a Work missed then outlives its
// binding.
func storedWorksOf(ctx context.Context, api client.Reader, b bindingview.View) ([]workv1alpha1.Work, error) {
	id := b.Obj.GetLabels()[b.IDLabel()]
	if id == "" {
		return nil, nil
	}
	works := &workv1alpha1.WorkList{}
	err := api.List(ctx, works, client.MatchingLabels{b.IDLabel(): id})
	return works.Items, err
}

// ownerGone says, through api (the API server), whether no binding of b's
// kind carries the permanent id owner any more: a Work labelled with it
// was left behind by a deleted binding and may be taken over
// (works.AdoptOrphans).
func ownerGone(api client.Reader, b bindingview.View) func(context.Context, string) (bool, error) {
	return func(ctx context.Context, owner string) (bool, error) {
		var list client.ObjectList = &workv1alpha2.ResourceBindingList{}
		if b.ClusterScoped {
			list = &workv1alpha2.ClusterResourceBindingList{}
		}
		if err := api.List(ctx, list, client.MatchingLabels{b.IDLabel(): owner}); err != nil {
			return false, err
		}
		return meta.LenList(list) == 0, nil
	}
}
