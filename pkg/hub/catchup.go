package hub

import (
	"context"
	"fmt"

	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/federator-dev/federator/internal/hubwatch"
	"github.com/federator-dev/federator/internal/redecide"
)

// hubCurrent is what the dispatchers ask before they write to a member:
// the caches a Work's decision read watch the hub, and no break of theirs
// waits for the controllers to catch up with it.
type hubCurrent struct {
	caches *hubwatch.Tracker
	round  *redecide.Round
}

func (h hubCurrent) Current(binding string, templates ...schema.GroupKind) error {
	if err := h.caches.Current(templates...); err != nil {
		return err
	}
	return h.round.Current(binding)
}

// listBindings lists, from the API server, the bindings a round of
// catching up waits for.
func listBindings(reader client.Reader) func(context.Context) ([]redecide.Binding, error) {
	return func(ctx context.Context) ([]redecide.Binding, error) {
		var out []redecide.Binding
		add := func(ns, name string, r workv1alpha2.ObjectReference) {
			out = append(out, redecide.Binding{Namespace: ns, Name: name, Template: redecide.Template{
				APIVersion: r.APIVersion, Kind: r.Kind, Namespace: r.Namespace, Name: r.Name}})
		}
		rbs := &workv1alpha2.ResourceBindingList{}
		if err := reader.List(ctx, rbs); err != nil {
			return nil, fmt.Errorf("listing ResourceBindings to decide again: %w", err)
		}
		for _, b := range rbs.Items {
			add(b.Namespace, b.Name, b.Spec.Resource)
		}
		crbs := &workv1alpha2.ClusterResourceBindingList{}
		if err := reader.List(ctx, crbs); err != nil {
			return nil, fmt.Errorf("listing ClusterResourceBindings to decide again: %w", err)
		}
		for _, b := range crbs.Items {
			add("", b.Name, b.Spec.Resource)
		}
		return out, nil
	}
}
