package cli

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rolloutsv1alpha1 "github.com/federator-dev/federator/apis/rollouts/v1alpha1"
)

// analysingStatus: revision 3's canary passed its analysis; member2's
// is running.
func analysingStatus() rolloutsv1alpha1.RolloutStatus {
	s := progressingStatus()
	at := metav1.NewTime(created(time.Minute).Time)
	s.Clusters[0].Analysis = &rolloutsv1alpha1.ClusterAnalysis{Phase: rolloutsv1alpha1.AnalysisSuccessful, Count: 3, Successful: 2, Error: 1,
		Measurements: []rolloutsv1alpha1.Measurement{{Phase: rolloutsv1alpha1.AnalysisSuccessful, Value: "[0.01]", FinishedAt: at}}}
	s.Clusters[1].State, s.Clusters[1].Reason, s.Clusters[1].Revision, s.Clusters[1].Message =
		rolloutsv1alpha1.StateProgressing, rolloutsv1alpha1.ReasonAnalysisRunning, 3, "healthy; analysis running: 0 of 2 measurement(s) taken"
	s.Clusters[1].Analysis = &rolloutsv1alpha1.ClusterAnalysis{Phase: rolloutsv1alpha1.AnalysisRunning}
	return s
}

func TestRolloutStatusAndGetRolloutsShowEachClustersAnalysis(t *testing.T) {
	h := rolloutsHub(t, testRollout(nil, analysingStatus()))
	stdout, _, err := run(t, h, "rollout", "status", "web", "-n", "demo", "--watch=false")
	if err != nil {
		t.Fatal(err)
	}
	want := `Rollout demo/web: revision 3, current stage 'prod'
CLUSTER   STAGE    STATE         REVISION   SINCE   ANALYSIS                                                          MESSAGE
member1   canary   Healthy       3          5m      Successful 2 ok 0 failed 1 inconclusive, last Successful [0.01]   -
member2   prod     Progressing   3          5m      Running 0 ok 0 failed 0 inconclusive                              healthy; analysis running: 0 of 2 measurement(s) taken
Progressing (WaitingForPromotion): revision 3 waits before stage 'prod'
Paused (WaitingForPromotion): stage 'prod' pauses until promoted: ` + "`federator rollout promote`" + ` starts it
`
	if stdout != want {
		t.Errorf("rollout status printed\n%s\nwant\n%s", stdout, want)
	}
	stdout, _, err = run(t, h, "get", "rollouts", "-n", "demo")
	want = `NAME   REVISION   STAGE   HEALTHY/TOTAL   AGE   ANALYSIS
web    3          prod    1/2             60m   member1 Successful, member2 Running
`
	if err != nil || stdout != want {
		t.Errorf("get rollouts: %v, printed\n%s\nwant\n%s", err, stdout, want)
	}
}
