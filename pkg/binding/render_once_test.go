package binding

import (
	"context"
	"sync/atomic"
	"testing"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	rolloutsv1alpha1 "github.com/federator-dev/federator/apis/rollouts/v1alpha1"
	workkeys "github.com/federator-dev/federator/apis/work"
	"github.com/federator-dev/federator/internal/revision"
)

// An OverridePolicy written while a pass runs must not reach a cluster the
// Rollout released without it: the release is decided from one render of
// the template with its overrides, and the Work carries that same render.
// The interceptor lets the first listing of OverridePolicies (the one the
// release is decided from) see none, and every later one see a policy that
// labels the Deployment: an edit landing between two reads of the cache.
func TestAReleaseSendsTheRenderItWasDecidedFrom(t *testing.T) {
	ctx := context.Background()
	var listings atomic.Int32
	edited := policyv1alpha1.OverridePolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "edited-mid-pass"},
		Spec: policyv1alpha1.OverrideSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}},
			OverrideRules: []policyv1alpha1.RuleWithCluster{{Overriders: policyv1alpha1.Overriders{
				LabelsOverrider: []policyv1alpha1.LabelAnnotationOverrider{{Operator: policyv1alpha1.OverriderOpAdd,
					Value: map[string]string{"edited": "mid-pass"}}},
			}}},
		},
	}
	b := newBindingTest(t, nil, interceptor.Funcs{
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if err := c.List(ctx, list, opts...); err != nil {
				return err
			}
			if ops, ok := list.(*policyv1alpha1.OverridePolicyList); ok && listings.Add(1) > 1 {
				ops.Items = append(ops.Items, edited)
			}
			return nil
		},
	})
	b.healthyRollout(t)
	_, hash := b.template(t)
	// The Rollout took in and released the template without overrides.
	rb := &workv1alpha2.ResourceBinding{}
	if err := b.hub.Get(ctx, bindingKey, rb); err != nil {
		t.Fatal(err)
	}
	rb.Annotations[rolloutsv1alpha1.RevisionAnnotation] = revision.Stamp{RolloutUID: "ro-uid", Revision: 1, Hash: hash}.String()
	if err := b.hub.Update(ctx, rb); err != nil {
		t.Fatal(err)
	}

	b.reconcile(t)
	for _, cluster := range []string{"member1", "member2"} {
		w := b.work(t, cluster)
		if held(w) {
			t.Errorf("%s held: %v; the Rollout released its content", cluster, w.Annotations)
			continue
		}
		m := &unstructured.Unstructured{}
		if err := m.UnmarshalJSON(w.Spec.Workload.Manifests[0].Raw); err != nil {
			t.Fatal(err)
		}
		if got := m.GetLabels()["edited"]; got != "" || w.Annotations[workkeys.TemplateHashAnnotation] != hash {
			t.Errorf("%s's Work, released at content %s (the template without overrides), carries label edited=%q "+
				"from an OverridePolicy the Rollout never took in", cluster, w.Annotations[workkeys.TemplateHashAnnotation], got)
		}
	}
}
