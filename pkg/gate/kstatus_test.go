package gate

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	gatingv1alpha1 "github.com/federator-dev/federator/apis/gating/v1alpha1"
	"github.com/federator-dev/federator/config/argocd"
)

// TestAGitOpsToolReadsWhereTheGateStands: open or closed, a gate the
// controller evaluated is done for kstatus (Current) and, for Argo CD's
// health check, Healthy while open and Suspended while closed (it holds
// on purpose); a schedule or request that cannot be read needs a person
// (Failed, Degraded).
func TestAGitOpsToolReadsWhereTheGateStands(t *testing.T) {
	hour := &metav1.Duration{Duration: time.Hour}
	cases := []struct {
		name        string
		annotations map[string]string
		spec        gatingv1alpha1.GateSpec
		want        string // kstatus/Argo CD health
	}{
		{"closed by default", nil, gatingv1alpha1.GateSpec{Default: "closed"}, "Current/Suspended"},
		{"opened on request", map[string]string{gatingv1alpha1.OpenRequestAnnotation: "2026-11-23T11:59:30Z"},
			gatingv1alpha1.GateSpec{Default: "closed", Window: hour}, "Current/Healthy"},
		{"open by default", nil, gatingv1alpha1.GateSpec{Default: "opened"}, "Current/Healthy"},
		{"a schedule that cannot be read", nil, gatingv1alpha1.GateSpec{Default: "opened",
			Schedules: []gatingv1alpha1.GateSchedule{{Name: "friday", Cron: "not a cron", Duration: *hour, Action: "close"}}},
			"Failed/Degraded"},
		{"a request that cannot be read", map[string]string{gatingv1alpha1.OpenRequestAnnotation: "soon"},
			gatingv1alpha1.GateSpec{Default: "closed"}, "Failed/Degraded"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := newGateTest(t, &gatingv1alpha1.Gate{ObjectMeta: metav1.ObjectMeta{Namespace: "ops", Name: "approval",
				Generation: 2, Annotations: c.annotations}, Spec: c.spec})
			_, got := g.reconcile(t)
			read, why, err := argocd.Reads(got, gatingv1alpha1.GroupVersion.WithKind("Gate"))
			if err != nil {
				t.Fatal(err)
			}
			if read != c.want || why == "" {
				t.Errorf("read as %s (%q), want %s with a message\nconditions: %+v", read, why, c.want, got.Status.Conditions)
			}
		})
	}
}
