package binding

import (
	"testing"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	"k8s.io/utils/ptr"
)

func TestSuspendDispatching(t *testing.T) {
	onClusters := func(names ...string) *workv1alpha2.Suspension {
		return &workv1alpha2.Suspension{Suspension: policyv1alpha1.Suspension{
			DispatchingOnClusters: &policyv1alpha1.SuspendClusters{ClusterNames: names}}}
	}
	all := func(v bool) *workv1alpha2.Suspension {
		return &workv1alpha2.Suspension{Suspension: policyv1alpha1.Suspension{Dispatching: ptr.To(v)}}
	}
	for _, tc := range []struct {
		name       string
		suspension *workv1alpha2.Suspension
		cluster    string
		want       bool
	}{
		{"no suspension", nil, "member1", false},
		{"empty suspension", &workv1alpha2.Suspension{}, "member1", false},
		{"dispatching true suspends every cluster", all(true), "member3", true},
		{"dispatching false suspends nothing", all(false), "member1", false},
		{"listed cluster is suspended", onClusters("member2", "member3"), "member2", true},
		{"unlisted cluster is not", onClusters("member2", "member3"), "member1", false},
		{"empty list suspends nothing", onClusters(), "member1", false},
		{"names match exactly", onClusters("member1"), "member10", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := SuspendDispatching(tc.suspension, tc.cluster); got != tc.want {
				t.Errorf("SuspendDispatching(%s) = %v, want %v", tc.cluster, got, tc.want)
			}
		})
	}
}
