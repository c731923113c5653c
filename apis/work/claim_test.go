package work

import "testing"

func TestClaimingPolicy(t *testing.T) {
	cases := []struct {
		annotations           map[string]string
		kind, namespace, name string
	}{
		{nil, "", "", ""},
		{map[string]string{"propagationpolicy.karmada.io/name": "web", "propagationpolicy.karmada.io/namespace": "shop"},
			PropagationPolicyKind, "shop", "web"},
		{map[string]string{"clusterpropagationpolicy.karmada.io/name": "all"}, ClusterPropagationPolicyKind, "", "all"},
		// A template being moved from one policy to the other carries both
		// for a moment; the namespaced policy is the one that claims it.
		{map[string]string{"propagationpolicy.karmada.io/name": "web", "propagationpolicy.karmada.io/namespace": "shop",
			"clusterpropagationpolicy.karmada.io/name": "all"}, PropagationPolicyKind, "shop", "web"},
	}
	for _, tc := range cases {
		kind, namespace, name := ClaimingPolicy(tc.annotations)
		if kind != tc.kind || namespace != tc.namespace || name != tc.name {
			t.Errorf("ClaimingPolicy(%v) = %s %s %s, want %s %s %s", tc.annotations, kind, namespace, name, tc.kind, tc.namespace, tc.name)
		}
	}
}
