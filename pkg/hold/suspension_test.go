package hold

import (
	"slices"
	"testing"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	"k8s.io/utils/ptr"
)

func TestUnknownSuspendedClusters(t *testing.T) {
	known := []string{"member1", "member2", "member3"}
	on := func(names ...string) *policyv1alpha1.Suspension {
		return &policyv1alpha1.Suspension{DispatchingOnClusters: &policyv1alpha1.SuspendClusters{ClusterNames: names}}
	}
	cases := []struct {
		name       string
		suspension *policyv1alpha1.Suspension
		known      []string
		want       []string
	}{
		{"no suspension", nil, known, nil},
		{"no cluster list", &policyv1alpha1.Suspension{Dispatching: ptr.To(true)}, known, nil},
		{"known clusters only", on("member2", "member1"), known, nil},
		{"a typo, in the list's order", on("membr3", "member1", "member9"), known, []string{"membr3", "member9"}},
		{"no cluster registered: every name is unknown", on("member1", "member2"), []string{}, []string{"member1", "member2"}},
		{"names are compared exactly", on("Member1", "member1 "), known, []string{"Member1", "member1 "}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := UnknownSuspendedClusters(tc.suspension, tc.known); !slices.Equal(got, tc.want) {
				t.Errorf("UnknownSuspendedClusters = %q, want %q", got, tc.want)
			}
		})
	}
}
