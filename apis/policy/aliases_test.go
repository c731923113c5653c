package policy

import (
	"testing"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

func TestFoldAliases(t *testing.T) {
	on := func(names ...string) *policyv1alpha1.SuspendClusters {
		return &policyv1alpha1.SuspendClusters{ClusterNames: names}
	}
	cases := []struct {
		name       string
		suspension string // spec.suspension as stored, YAML
		want       *policyv1alpha1.Suspension
	}{
		{"no suspension", ``, nil},
		{"released spelling alone is kept", `{dispatching: true}`, &policyv1alpha1.Suspension{Dispatching: ptr.To(true)}},
		{"proposal: suspend all", `{suspendDispatching: true}`, &policyv1alpha1.Suspension{Dispatching: ptr.To(true)}},
		{"proposal: suspend none", `{suspendDispatching: false}`, &policyv1alpha1.Suspension{Dispatching: ptr.To(false)}},
		{"proposal: a list", `{suspendDispatchingOnClusters: {clusterNames: [member2, member3]}}`,
			&policyv1alpha1.Suspension{DispatchingOnClusters: on("member2", "member3")}},
		{"proposal: an empty list", `{suspendDispatchingOnClusters: {}}`,
			&policyv1alpha1.Suspension{DispatchingOnClusters: on()}},
		{"both spellings agree", `{dispatching: true, suspendDispatching: true}`, &policyv1alpha1.Suspension{Dispatching: ptr.To(true)}},
		{"disagreement fails safe: released false, alias true", `{dispatching: false, suspendDispatching: true}`,
			&policyv1alpha1.Suspension{Dispatching: ptr.To(true)}},
		{"disagreement fails safe: released true, alias false", `{dispatching: true, suspendDispatching: false}`,
			&policyv1alpha1.Suspension{Dispatching: ptr.To(true)}},
		{"two lists: their union, released first", `{dispatchingOnClusters: {clusterNames: [member1, member2]}, suspendDispatchingOnClusters: {clusterNames: [member3, member1]}}`,
			&policyv1alpha1.Suspension{DispatchingOnClusters: on("member1", "member2", "member3")}},
		{"all in one spelling, a list in the other: both kept (the spec is then invalid, as Karmada's would be)",
			`{suspendDispatching: true, dispatchingOnClusters: {clusterNames: [member2]}}`,
			&policyv1alpha1.Suspension{Dispatching: ptr.To(true), DispatchingOnClusters: on("member2")}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			doc := "spec: {resourceSelectors: [{apiVersion: v1, kind: ConfigMap}]}"
			if c.suspension != "" {
				doc = "spec: {resourceSelectors: [{apiVersion: v1, kind: ConfigMap}], suspension: " + c.suspension + "}"
			}
			stored := &unstructured.Unstructured{}
			if err := yaml.Unmarshal([]byte(doc), &stored.Object); err != nil {
				t.Fatal(err)
			}
			// What a typed read of the same object gives: aliases dropped.
			typed := &policyv1alpha1.PropagationPolicy{}
			if err := yaml.Unmarshal([]byte(doc), typed); err != nil {
				t.Fatal(err)
			}
			before := typed.Spec.DeepCopy()
			got := FoldAliases(&typed.Spec, stored).Suspension
			if !equality.Semantic.DeepEqual(got, c.want) {
				t.Errorf("folded suspension = %+v, want %+v", got, c.want)
			}
			if !equality.Semantic.DeepEqual(before, &typed.Spec) {
				t.Errorf("FoldAliases changed the spec it was given")
			}
		})
	}
}
