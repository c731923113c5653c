package metrics

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/federator-dev/federator/apis/policy"
	rolloutsv1alpha1 "github.com/federator-dev/federator/apis/rollouts/v1alpha1"
)

func TestRolloutSeries(t *testing.T) {
	spec := rolloutsv1alpha1.RolloutSpec{PolicyRef: rolloutsv1alpha1.PolicyReference{Name: "web"},
		Stages: []rolloutsv1alpha1.Stage{{Name: "canary"}, {Name: "rest"}}}
	soaking := &rolloutsv1alpha1.Rollout{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "web"}, Spec: spec,
		Status: rolloutsv1alpha1.RolloutStatus{Revision: 4, CurrentStage: "rest", Clusters: []rolloutsv1alpha1.ClusterStatus{
			{Name: "member1", State: rolloutsv1alpha1.StateHealthy}, {Name: "member2", State: rolloutsv1alpha1.StateProgressing},
			{Name: "member3", State: rolloutsv1alpha1.StateProgressing}}}}
	done := &rolloutsv1alpha1.ClusterRollout{ObjectMeta: metav1.ObjectMeta{Name: "platform"}, Spec: spec,
		Status: rolloutsv1alpha1.RolloutStatus{Revision: 2, Clusters: []rolloutsv1alpha1.ClusterStatus{
			{Name: "member1", State: rolloutsv1alpha1.StateRolledBack}}}}
	remaining := &rolloutsv1alpha1.Rollout{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "api"}, Spec: spec,
		Status: rolloutsv1alpha1.RolloutStatus{CurrentStage: rolloutsv1alpha1.RemainingStage}}
	c := fake.NewClientBuilder().WithScheme(policy.NewScheme()).WithObjects(soaking, done, remaining).Build()
	got := series(t, rolloutCollector{reader: c})
	for key, want := range map[string]float64{
		`federator_rollout_stage{kind="Rollout",name="web",namespace="demo",stage="rest"}`:                  2,
		`federator_rollout_stage{kind="Rollout",name="api",namespace="demo",stage="remaining"}`:             3,
		`federator_rollout_stage{kind="ClusterRollout",name="platform",namespace="",stage=""}`:              0,
		`federator_rollout_clusters{kind="Rollout",name="web",namespace="demo",state="Progressing"}`:        2,
		`federator_rollout_clusters{kind="Rollout",name="web",namespace="demo",state="Healthy"}`:            1,
		`federator_rollout_clusters{kind="Rollout",name="web",namespace="demo",state="Failed"}`:             0,
		`federator_rollout_clusters{kind="ClusterRollout",name="platform",namespace="",state="RolledBack"}`: 1,
	} {
		if v, ok := got[key]; !ok || v != want {
			t.Errorf("%s = %v (present %v), want %v", key, v, ok, want)
		}
	}
}
