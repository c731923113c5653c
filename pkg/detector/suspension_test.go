package detector

import (
	"testing"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
)

func TestSuspensionSummary(t *testing.T) {
	for _, tc := range []struct {
		s    *workv1alpha2.Suspension
		want string
	}{
		{nil, ""},
		{&workv1alpha2.Suspension{}, ""},
		{&workv1alpha2.Suspension{Suspension: policyv1alpha1.Suspension{Dispatching: ptr.To(true)}}, "every cluster"},
		{&workv1alpha2.Suspension{Suspension: policyv1alpha1.Suspension{Dispatching: ptr.To(false)}}, ""},
		{&workv1alpha2.Suspension{Suspension: policyv1alpha1.Suspension{DispatchingOnClusters: &policyv1alpha1.SuspendClusters{
			ClusterNames: []string{"member2", "member3"}}}}, "clusters member2, member3"},
	} {
		if got := SuspensionSummary(tc.s); got != tc.want {
			t.Errorf("SuspensionSummary(%+v) = %q, want %q", tc.s, got, tc.want)
		}
	}
}

func TestSuspendedReason(t *testing.T) {
	annotated := func(v *string) map[string]string {
		if v == nil {
			return nil
		}
		return map[string]string{"propagation.federator.dev/suspended": *v}
	}
	for _, tc := range []struct {
		name             string
		onTemplate, onPP *string
		want             string
	}{
		{"none", nil, nil, ""},
		{"policy reason", nil, ptr.To("freeze for release 7"), "freeze for release 7"},
		{"template reason wins", ptr.To("incident 4711"), ptr.To("freeze"), "incident 4711"},
		{"true is no reason", ptr.To("true"), nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmpl := &unstructured.Unstructured{}
			tmpl.SetAnnotations(annotated(tc.onTemplate))
			claim := Claim{PropagationPolicy: &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Annotations: annotated(tc.onPP)}}}
			if got := suspendedReason(tmpl, claim); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
