package detector

import (
	"errors"
	"testing"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestSchedulePriority(t *testing.T) {
	class := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "critical"}, Value: 1000}
	spec := func(source policyv1alpha1.PriorityClassSource) *policyv1alpha1.PropagationSpec {
		return &policyv1alpha1.PropagationSpec{SchedulePriority: &policyv1alpha1.SchedulePriority{
			PriorityClassSource: source, PriorityClassName: "critical"}}
	}
	for _, tc := range []struct {
		name       string
		spec       *policyv1alpha1.PropagationSpec
		class      *schedulingv1.PriorityClass
		want       int32
		wantErr    string
		wantReason string // of SchedulePriorityResolved; "" for no condition
	}{
		{name: "no schedulePriority: no priority, no condition", spec: &policyv1alpha1.PropagationSpec{}, class: class},
		{name: "KubePriorityClass: the class's value", spec: spec(policyv1alpha1.KubePriorityClass), class: class,
			want: 1000, wantReason: "PriorityClassFound"},
		{name: "KubePriorityClass that does not exist: no binding", spec: spec(policyv1alpha1.KubePriorityClass),
			wantErr: `priorityclasses.scheduling.k8s.io "critical" not found`, wantReason: "PriorityClassNotFound"},
		{name: "PodPriorityClass: unsupported, as in Karmada", spec: spec(policyv1alpha1.PodPriorityClass), class: class,
			wantErr: "priority class source is PodPriorityClass, but PodPriorityClass is not supported yet", wantReason: "UnsupportedPriorityClassSource"},
		{name: "FederatedPriorityClass: unsupported, as in Karmada", spec: spec(policyv1alpha1.FederatedPriorityClass), class: class,
			wantErr: "priority class source is FederatedPriorityClass, but FederatedPriorityClass is not supported yet", wantReason: "UnsupportedPriorityClassSource"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := SchedulePriority(tc.spec, tc.class)
			switch {
			case tc.wantErr != "":
				if err == nil || err.Error() != tc.wantErr {
					t.Errorf("err = %v, want %q", err, tc.wantErr)
				}
			case err != nil:
				t.Fatal(err)
			case tc.spec.SchedulePriority == nil && got != nil:
				t.Errorf("priority = %v, want none", got)
			case tc.spec.SchedulePriority != nil && (got == nil || got.Priority != tc.want):
				t.Errorf("priority = %v, want %d", got, tc.want)
			}
			cond, ok := SchedulePriorityResolved(tc.spec, tc.class)
			if ok != (tc.wantReason != "") || cond.Reason != tc.wantReason {
				t.Errorf("condition = %+v (ok=%v), want reason %q", cond, ok, tc.wantReason)
			}
			if ok && (cond.Status == metav1.ConditionTrue) != (tc.wantErr == "") {
				t.Errorf("condition status %s with error %q", cond.Status, tc.wantErr)
			}
		})
	}
}

// Karmada's PreemptPolicySucceed and PreemptPolicyFailed messages.
func TestPreemptedMessage(t *testing.T) {
	pp := func(name string) Claim {
		return Claim{PropagationPolicy: &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name}}}
	}
	cpp := func(name string) Claim {
		return Claim{ClusterPropagationPolicy: &policyv1alpha1.ClusterPropagationPolicy{ObjectMeta: metav1.ObjectMeta{Name: name}}}
	}
	for _, tc := range []struct {
		claim, held Claim
		err         error
		want        string
	}{
		{pp("high"), pp("low"), nil, "Propagation policy(shop/high) preempted propagation policy(shop/low) successfully"},
		{pp("exact"), cpp("everything"), nil, "Propagation policy(shop/exact) preempted cluster propagation policy(everything) successfully"},
		{cpp("high"), cpp("low"), nil, "Cluster propagation policy(high) preempted cluster propagation policy(low) successfully"},
		{pp("high"), pp("low"), errors.New("etcdserver: timeout"),
			"Propagation policy(shop/high) failed to preempt propagation policy(shop/low): etcdserver: timeout"},
		{pp("exact"), cpp("everything"), errors.New("etcdserver: timeout"),
			"Propagation policy(shop/exact) failed to preempt cluster propagation policy(everything): etcdserver: timeout"},
		{cpp("high"), cpp("low"), errors.New("etcdserver: timeout"),
			"Cluster propagation policy(high) failed to preempt cluster propagation policy(low): etcdserver: timeout"},
	} {
		if got := PreemptedMessage(tc.claim, tc.held, tc.err); got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
}
