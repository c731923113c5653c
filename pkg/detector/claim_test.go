package detector

import (
	"testing"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/event"
)

func TestResolve(t *testing.T) {
	template := func(annotations map[string]string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("apps/v1")
		u.SetKind("Deployment")
		u.SetNamespace("shop")
		u.SetName("web")
		u.SetLabels(map[string]string{"app": "web"})
		u.SetAnnotations(annotations)
		return u
	}
	byKind := []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment"}}
	byName := []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}}
	other := []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: "api"}}
	pp := func(name string, selectors []policyv1alpha1.ResourceSelector, deleting bool) policyv1alpha1.PropagationPolicy {
		p := policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name},
			Spec: policyv1alpha1.PropagationSpec{ResourceSelectors: selectors, Priority: ptr.To[int32](0)}}
		if deleting {
			now := metav1.Now()
			p.DeletionTimestamp = &now
		}
		return p
	}
	cpp := func(name string, selectors []policyv1alpha1.ResourceSelector) policyv1alpha1.ClusterPropagationPolicy {
		return policyv1alpha1.ClusterPropagationPolicy{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: policyv1alpha1.PropagationSpec{ResourceSelectors: selectors}}
	}
	// preempting is a policy with priority and preemption Always.
	preempting := func(p policyv1alpha1.PropagationPolicy, priority int32) policyv1alpha1.PropagationPolicy {
		p.Spec.Priority, p.Spec.Preemption = ptr.To(priority), policyv1alpha1.PreemptAlways
		return p
	}
	prioritized := func(p policyv1alpha1.PropagationPolicy, priority int32) policyv1alpha1.PropagationPolicy {
		p.Spec.Priority = ptr.To(priority)
		return p
	}
	preemptingCPP := func(p policyv1alpha1.ClusterPropagationPolicy, priority int32) policyv1alpha1.ClusterPropagationPolicy {
		p.Spec.Priority, p.Spec.Preemption = ptr.To(priority), policyv1alpha1.PreemptAlways
		return p
	}
	byCPP := func(name string) map[string]string {
		return map[string]string{"clusterpropagationpolicy.karmada.io/name": name}
	}
	byNameInShop := []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: "web"}}
	claimedByPP := func(name string) map[string]string {
		return map[string]string{"propagationpolicy.karmada.io/namespace": "shop", "propagationpolicy.karmada.io/name": name}
	}
	for _, tc := range []struct {
		name     string
		recorded map[string]string
		pps      []policyv1alpha1.PropagationPolicy
		cpps     []policyv1alpha1.ClusterPropagationPolicy
		want     string
	}{
		{"unclaimed: precedence decides", nil,
			[]policyv1alpha1.PropagationPolicy{pp("broad", byKind, false), pp("exact", byName, false)}, nil, "shop/exact"},
		{"claimed: stays with its policy though a better one appears", claimedByPP("broad"),
			[]policyv1alpha1.PropagationPolicy{pp("broad", byKind, false), pp("exact", byName, false)}, nil, "shop/broad"},
		{"claimed by a policy that is gone: precedence decides", claimedByPP("gone"),
			[]policyv1alpha1.PropagationPolicy{pp("broad", byKind, false), pp("exact", byName, false)}, nil, "shop/exact"},
		{"claimed by a policy being deleted: moves", claimedByPP("exact"),
			[]policyv1alpha1.PropagationPolicy{pp("broad", byKind, false), pp("exact", byName, true)}, nil, "shop/broad"},
		{"claimed by a policy that no longer selects it: moves", claimedByPP("exact"),
			[]policyv1alpha1.PropagationPolicy{pp("broad", byKind, false), pp("exact", other, false)}, nil, "shop/broad"},
		{"claimed by a ClusterPropagationPolicy: a PropagationPolicy does not take over",
			map[string]string{"clusterpropagationpolicy.karmada.io/name": "everything"},
			[]policyv1alpha1.PropagationPolicy{pp("exact", byName, false)},
			[]policyv1alpha1.ClusterPropagationPolicy{cpp("everything", byKind)}, "everything"},
		{"nothing selects it", claimedByPP("gone"), nil, nil, ""},

		// Preemption (Karmada's PolicyPreemption).
		{"preemption Always with a higher priority takes the claim", claimedByPP("low"),
			[]policyv1alpha1.PropagationPolicy{prioritized(pp("low", byName, false), 1), preempting(pp("high", byName, false), 5)}, nil, "shop/high"},
		{"preemption Never (the default) with a higher priority does not", claimedByPP("low"),
			[]policyv1alpha1.PropagationPolicy{prioritized(pp("low", byName, false), 1), prioritized(pp("high", byName, false), 5)}, nil, "shop/low"},
		{"preemption Always with the same priority does not", claimedByPP("low"),
			[]policyv1alpha1.PropagationPolicy{prioritized(pp("low", byName, false), 5), preempting(pp("high", byName, false), 5)}, nil, "shop/low"},
		{"preemption Always with a lower priority does not", claimedByPP("low"),
			[]policyv1alpha1.PropagationPolicy{prioritized(pp("low", byName, false), 5), preempting(pp("high", byName, false), 1)}, nil, "shop/low"},
		{"only a selector that names the template preempts, as Karmada fetches by name", claimedByPP("low"),
			[]policyv1alpha1.PropagationPolicy{prioritized(pp("low", byName, false), 1), preempting(pp("high", byKind, false), 5)}, nil, "shop/low"},
		{"the preemptor must select the template", claimedByPP("low"),
			[]policyv1alpha1.PropagationPolicy{prioritized(pp("low", byName, false), 1), preempting(pp("high", other, false), 5)}, nil, "shop/low"},
		{"a preemptor being deleted does not preempt", claimedByPP("low"),
			[]policyv1alpha1.PropagationPolicy{prioritized(pp("low", byName, false), 1), preempting(pp("high", byName, true), 5)}, nil, "shop/low"},
		{"among preemptors the highest priority wins", claimedByPP("low"),
			[]policyv1alpha1.PropagationPolicy{prioritized(pp("low", byName, false), 1), preempting(pp("mid", byName, false), 3),
				preempting(pp("top", byName, false), 9)}, nil, "shop/top"},
		{"a PropagationPolicy with preemption Always takes a ClusterPropagationPolicy's claim, whatever the priorities", byCPP("everything"),
			[]policyv1alpha1.PropagationPolicy{preempting(pp("exact", byNameInShop, false), -10)},
			[]policyv1alpha1.ClusterPropagationPolicy{preemptingCPP(cpp("everything", byName), 100)}, "shop/exact"},
		{"a ClusterPropagationPolicy with a higher priority takes another's claim", byCPP("low"),
			nil, []policyv1alpha1.ClusterPropagationPolicy{cpp("low", byName), preemptingCPP(cpp("high", byName), 5)}, "high"},
		{"a ClusterPropagationPolicy never takes a PropagationPolicy's claim", claimedByPP("low"),
			[]policyv1alpha1.PropagationPolicy{prioritized(pp("low", byName, false), 1)},
			[]policyv1alpha1.ClusterPropagationPolicy{preemptingCPP(cpp("high", byName), 100)}, "shop/low"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			claim, ok := Resolve(template(tc.recorded), tc.pps, tc.cpps)
			if got := claim.Key(); got != tc.want || ok != (tc.want != "") {
				t.Errorf("Resolve = %q (ok=%v), want %q", got, ok, tc.want)
			}
		})
	}
}

func TestClaimMetadata(t *testing.T) {
	tmpl := &unstructured.Unstructured{}
	tmpl.SetLabels(map[string]string{"app": "web", "clusterpropagationpolicy.karmada.io/permanent-id": "old"})
	tmpl.SetAnnotations(map[string]string{"clusterpropagationpolicy.karmada.io/name": "old", "note": "kept"})
	p := &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", UID: "uid-1"}}

	labels, annotations, changed := ClaimMetadata(tmpl, Claim{PropagationPolicy: p}, true)
	if !changed {
		t.Error("moving the claim must change the metadata")
	}
	wantLabels := map[string]string{"app": "web", "propagationpolicy.karmada.io/permanent-id": "uid-1"}
	wantAnnotations := map[string]string{"note": "kept", "propagationpolicy.karmada.io/namespace": "shop",
		"propagationpolicy.karmada.io/name": "web"}
	if !equalMaps(labels, wantLabels) || !equalMaps(annotations, wantAnnotations) {
		t.Errorf("got %v %v", labels, annotations)
	}

	tmpl.SetLabels(labels)
	tmpl.SetAnnotations(annotations)
	if _, _, changed := ClaimMetadata(tmpl, Claim{PropagationPolicy: p}, true); changed {
		t.Error("an unchanged claim must not be rewritten")
	}
	if l, a, changed := ClaimMetadata(tmpl, Claim{}, false); !changed || len(l) != 1 || len(a) != 1 {
		t.Errorf("releasing the claim: changed=%v labels=%v annotations=%v", changed, l, a)
	}
}

func TestTemplateChanged(t *testing.T) {
	base := func() *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": "web", "namespace": "shop", "resourceVersion": "1", "generation": int64(1),
				"labels": map[string]any{"app": "web"}},
			"spec":   map[string]any{"replicas": int64(2)},
			"status": map[string]any{"replicas": int64(0)}}}
		return u
	}
	for _, tc := range []struct {
		name   string
		change func(*unstructured.Unstructured)
		want   bool
	}{
		{"spec", func(u *unstructured.Unstructured) { u.Object["spec"] = map[string]any{"replicas": int64(3)} }, true},
		{"a label", func(u *unstructured.Unstructured) { u.SetLabels(map[string]string{"app": "web", "tier": "front"}) }, true},
		{"the suspended annotation", func(u *unstructured.Unstructured) {
			u.SetAnnotations(map[string]string{"propagation.federator.dev/suspended": "true"})
		}, true},
		{"status only", func(u *unstructured.Unstructured) { u.Object["status"] = map[string]any{"replicas": int64(2)} }, false},
		{"resourceVersion only", func(u *unstructured.Unstructured) { u.SetResourceVersion("2") }, false},
		{"the detector's own claim", func(u *unstructured.Unstructured) {
			u.SetLabels(map[string]string{"app": "web", "propagationpolicy.karmada.io/permanent-id": "id"})
			u.SetAnnotations(map[string]string{"propagationpolicy.karmada.io/name": "web",
				"propagationpolicy.karmada.io/namespace": "shop"})
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, n := base(), base()
			tc.change(n)
			if got := (templateChanged{}).Update(event.UpdateEvent{ObjectOld: o, ObjectNew: n}); got != tc.want {
				t.Errorf("templateChanged = %v, want %v", got, tc.want)
			}
		})
	}
}
