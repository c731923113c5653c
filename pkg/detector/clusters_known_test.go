package detector

import (
	"strings"
	"testing"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policykeys "github.com/federator-dev/federator/apis/policy"
)

func TestClustersKnown(t *testing.T) {
	known := []string{"member1", "member2", "member3"}
	suspendOn := func(names ...string) policyv1alpha1.PropagationSpec {
		return policyv1alpha1.PropagationSpec{Suspension: &policyv1alpha1.Suspension{
			DispatchingOnClusters: &policyv1alpha1.SuspendClusters{ClusterNames: names}}}
	}
	cases := []struct {
		name          string
		spec          policyv1alpha1.PropagationSpec
		annotations   map[string]string
		unknownPlaced []string
		status        metav1.ConditionStatus
		reason        string
		mentions      []string
	}{
		{"no names at all", policyv1alpha1.PropagationSpec{}, nil, nil, metav1.ConditionTrue, policykeys.ReasonClustersKnown, nil},
		{"suspension list of known clusters", suspendOn("member2"), nil, nil, metav1.ConditionTrue, policykeys.ReasonClustersKnown, nil},
		{"a typo in the suspension list holds everything", suspendOn("member2", "membr3"), nil, nil,
			metav1.ConditionFalse, policykeys.ReasonUnknownSuspendedCluster,
			[]string{`spec.suspension.dispatchingOnClusters.clusterNames: "membr3"`, "every cluster of this policy's bindings is held"}},
		{"an unknown placement name", policyv1alpha1.PropagationSpec{}, nil, []string{"member9"},
			metav1.ConditionFalse, policykeys.ReasonUnknownPlacementCluster,
			[]string{`spec.placement.clusterAffinity.clusterNames: "member9"`, "get nothing until such a Cluster joins"}},
		{"both: the hold is the reason, both are said", suspendOn("membr3"), nil, []string{"member9"},
			metav1.ConditionFalse, policykeys.ReasonUnknownSuspendedCluster,
			[]string{`"membr3"`, `"member9"`}},
		{"a per-cluster annotation naming a known cluster", policyv1alpha1.PropagationSpec{},
			map[string]string{"suspended.propagation.federator.dev/member2": "canary"}, nil, metav1.ConditionTrue, policykeys.ReasonClustersKnown, nil},
		{"a typo in a per-cluster annotation holds everything", policyv1alpha1.PropagationSpec{},
			map[string]string{"suspended.propagation.federator.dev/membr2": "canary", "propagation.federator.dev/suspended": "true"}, nil,
			metav1.ConditionFalse, policykeys.ReasonUnknownSuspendedCluster,
			[]string{`metadata.annotations: "suspended.propagation.federator.dev/membr2" name no registered Cluster`,
				"every cluster of this policy's bindings is held"}},
		{"a typo in an annotation and an unknown placement name: the hold is the reason", policyv1alpha1.PropagationSpec{},
			map[string]string{"suspended.propagation.federator.dev/membr2": "x"}, []string{"member9"},
			metav1.ConditionFalse, policykeys.ReasonUnknownSuspendedCluster, []string{"membr2", `"member9"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := ClustersKnown(c.spec, c.annotations, known, c.unknownPlaced)
			if got.Type != policykeys.ConditionClustersKnown || got.Status != c.status || got.Reason != c.reason {
				t.Errorf("got %s=%s (%s), want %s=%s (%s)", got.Type, got.Status, got.Reason,
					policykeys.ConditionClustersKnown, c.status, c.reason)
			}
			for _, m := range c.mentions {
				if !strings.Contains(got.Message, m) {
					t.Errorf("message %q does not say %q", got.Message, m)
				}
			}
		})
	}
}
