package binding

import (
	"context"
	"slices"
	"testing"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllertest"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// A Cluster relabelled re-places the bindings that select by labels and,
// where an override selects clusters by labels, renders again those that
// target it; one that lists other gates, only the bindings that target it;
// an annotation of someone else's, none; a spec change, every binding.
func TestClusterChangesBringBackOnlyTheBindingsTheyCanChange(t *testing.T) {
	binding := func(name string, placement policyv1alpha1.Placement, targets ...string) *workv1alpha2.ResourceBinding {
		b := &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name},
			Spec: workv1alpha2.ResourceBindingSpec{Placement: &placement}}
		for _, t := range targets {
			b.Spec.Clusters = append(b.Spec.Clusters, workv1alpha2.TargetCluster{Name: t})
		}
		return b
	}
	byName := policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}}}
	byLabel := policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}}}
	bindings := []client.Object{
		binding("named", byName, "member1"),
		binding("labelled", byLabel, "member2"),
		binding("other", byName, "member3"),
	}
	// An OverridePolicy in shop selects clusters by label: a relabel can
	// change what a binding there sends the Cluster it targets.
	byLabels := &policyv1alpha1.OverridePolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "by-env"},
		Spec: policyv1alpha1.OverrideSpec{OverrideRules: []policyv1alpha1.RuleWithCluster{{
			TargetCluster: &policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}}}}}}
	hub := fakeHub().WithObjects(append(bindings, byLabels)...).Build()
	h := bindingsAffectedByCluster(hub, false)
	plain := bindingsAffectedByCluster(fakeHub().WithObjects(bindings...).Build(), false)
	old := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member1", Generation: 1,
		Labels: map[string]string{"env": "dev"}, Annotations: map[string]string{"team": "a"}}}
	changed := func(f func(c *clusterv1alpha1.Cluster)) *clusterv1alpha1.Cluster {
		c := old.DeepCopy()
		f(c)
		return c
	}
	relabelled := changed(func(c *clusterv1alpha1.Cluster) { c.Labels["env"] = "prod" })
	q := &controllertest.Queue{TypedInterface: workqueue.NewTyped[reconcile.Request]()}
	plain.Update(context.Background(), event.UpdateEvent{ObjectOld: old, ObjectNew: relabelled}, q)
	if r, _ := q.Get(); q.Len() != 0 || r.Name != "labelled" {
		t.Errorf("relabelled, no override selecting by labels: re-reconciled %s and %d more, want only labelled", r.Name, q.Len())
	}
	for name, tc := range map[string]struct {
		new  *clusterv1alpha1.Cluster
		want []string
	}{
		"relabelled": {relabelled, []string{"labelled", "named"}},
		"lists gates": {changed(func(c *clusterv1alpha1.Cluster) {
			c.Annotations["gating.federator.dev/gates"] = "ops/approval"
		}), []string{"named"}},
		"annotated by someone else": {changed(func(c *clusterv1alpha1.Cluster) { c.Annotations["team"] = "b" }), nil},
		"spec changed":              {changed(func(c *clusterv1alpha1.Cluster) { c.Generation = 2 }), []string{"labelled", "named", "other"}},
	} {
		q := &controllertest.Queue{TypedInterface: workqueue.NewTyped[reconcile.Request]()}
		h.Update(context.Background(), event.UpdateEvent{ObjectOld: old, ObjectNew: tc.new}, q)
		var got []string
		for q.Len() > 0 {
			r, _ := q.Get()
			got = append(got, r.Name)
			q.Done(r)
		}
		slices.Sort(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: re-reconciled %v, want %v", name, got, tc.want)
		}
	}
}
