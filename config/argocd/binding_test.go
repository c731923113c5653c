package argocd

import (
	"strings"
	"testing"

	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestABindingHeldOnPurposeIsSuspended: Argo CD's health of Karmada
// bindings on a federator hub. A cluster federator holds makes the binding
// Suspended with what holds it, whatever the held cluster reports; without
// a hold, what Karmada's aggregated status says.
func TestABindingHeldOnPurposeIsSuspended(t *testing.T) {
	applied := func(cluster, health string) workv1alpha2.AggregatedStatusItem {
		return workv1alpha2.AggregatedStatusItem{ClusterName: cluster, Applied: true, Health: workv1alpha2.ResourceHealth(health)}
	}
	unapplied := workv1alpha2.AggregatedStatusItem{ClusterName: "member2", Applied: false, AppliedMessage: "quota exceeded",
		Health: workv1alpha2.ResourceUnknown}
	heldOn := metav1.Condition{Type: "Dispatching", Status: metav1.ConditionFalse, Reason: "GateClosed",
		Message: "member2: waiting approval, gate 'shop/ok' is closed"}
	free := metav1.Condition{Type: "Dispatching", Status: metav1.ConditionTrue, Reason: "Dispatching"}
	for _, tc := range []struct {
		name     string
		clusters []string
		items    []workv1alpha2.AggregatedStatusItem
		conds    []metav1.Condition
		want     string
		message  string
	}{
		{"held and never applied there", []string{"member1", "member2"},
			[]workv1alpha2.AggregatedStatusItem{applied("member1", "Healthy"), unapplied}, []metav1.Condition{heldOn},
			"Suspended", heldOn.Message},
		{"held where it runs the version before", []string{"member1", "member2"},
			[]workv1alpha2.AggregatedStatusItem{applied("member1", "Healthy"), applied("member2", "Healthy")}, []metav1.Condition{heldOn},
			"Suspended", heldOn.Message},
		{"held before any cluster reported", []string{"member1", "member2"}, nil, []metav1.Condition{heldOn},
			"Suspended", heldOn.Message},
		{"nothing holds, every cluster applied and healthy", []string{"member1", "member2"},
			[]workv1alpha2.AggregatedStatusItem{applied("member1", "Healthy"), applied("member2", "Healthy")}, []metav1.Condition{free},
			"Healthy", "Applied and healthy in 2 clusters"},
		{"a health the interpreter cannot judge, applied, is healthy as in Argo CD's check", []string{"member1"},
			[]workv1alpha2.AggregatedStatusItem{applied("member1", "Unknown")}, []metav1.Condition{free},
			"Healthy", "Applied and healthy in 1 clusters"},
		{"nothing holds and a cluster failed to apply", []string{"member1", "member2"},
			[]workv1alpha2.AggregatedStatusItem{applied("member1", "Healthy"), unapplied}, []metav1.Condition{free},
			"Degraded", "Cluster member2 is not applied: quota exceeded"},
		{"nothing holds and a cluster is unhealthy", []string{"member1", "member2"},
			[]workv1alpha2.AggregatedStatusItem{applied("member1", "Unhealthy"), applied("member2", "Healthy")}, nil,
			"Degraded", "Cluster member1 reports health Unhealthy"},
		{"a cluster has not reported yet", []string{"member1", "member2"},
			[]workv1alpha2.AggregatedStatusItem{applied("member1", "Healthy")}, []metav1.Condition{free},
			"Progressing", "Waiting for 2 clusters to report, 1 did"},
		{"not scheduled yet", nil, nil, nil, "Progressing", "Waiting for the binding to be scheduled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var targets []workv1alpha2.TargetCluster
			for _, c := range tc.clusters {
				targets = append(targets, workv1alpha2.TargetCluster{Name: c})
			}
			for _, kind := range []string{"ResourceBinding", "ClusterResourceBinding"} {
				rb := &workv1alpha2.ResourceBinding{
					Spec:   workv1alpha2.ResourceBindingSpec{Clusters: targets},
					Status: workv1alpha2.ResourceBindingStatus{AggregatedStatus: tc.items, Conditions: tc.conds},
				}
				got := health(t, rb, kind)
				if got.Status != tc.want || got.Message != tc.message {
					t.Errorf("%s: %+v, want %s %q", kind, got, tc.want, tc.message)
				}
			}
		})
	}
}

// health is Argo CD's health of obj as a kind of work.karmada.io, which
// kstatus must read as Current (bindings carry none of its conditions).
func health(t *testing.T, obj runtime.Object, kind string) Status {
	t.Helper()
	reads, msg, err := Reads(obj, workv1alpha2.SchemeGroupVersion.WithKind(kind))
	if err != nil {
		t.Fatal(err)
	}
	ks, st, _ := strings.Cut(reads, "/")
	if ks != "Current" {
		t.Errorf("kstatus %s, want Current", ks)
	}
	return Status{Status: st, Message: msg}
}
