package cli

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	rolloutsv1alpha1 "github.com/federator-dev/federator/apis/rollouts/v1alpha1"
)

func rolloutCondition(condType string, status metav1.ConditionStatus, reason, message string) metav1.Condition {
	return metav1.Condition{Type: condType, Status: status, Reason: reason, Message: message}
}

// testStages: canary names member1, prod selects env=prod and pauses
// until promoted.
var testStages = []rolloutsv1alpha1.Stage{
	{Name: "canary", Clusters: []string{"member1"}},
	{Name: "prod", ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}, Pause: true},
}

// progressingStatus: revision 3 is healthy on canary; prod waits for
// promotion.
func progressingStatus() rolloutsv1alpha1.RolloutStatus {
	return rolloutsv1alpha1.RolloutStatus{ObservedGeneration: 2, Revision: 3, CurrentStage: "prod",
		Clusters: []rolloutsv1alpha1.ClusterStatus{
			{Name: "member1", Stage: "canary", State: rolloutsv1alpha1.StateHealthy, Revision: 3, Reason: rolloutsv1alpha1.ReasonHealthy, Since: created(5 * time.Minute)},
			{Name: "member2", Stage: "prod", State: rolloutsv1alpha1.StatePending, Revision: 2, Reason: rolloutsv1alpha1.ReasonWaitingForStage,
				Message: "stage 'prod': stage 'prod' pauses until promoted", Since: created(5 * time.Minute)},
		},
		Conditions: []metav1.Condition{
			rolloutCondition(rolloutsv1alpha1.ConditionProgressing, metav1.ConditionTrue, rolloutsv1alpha1.ReasonWaitingForPromotion, "revision 3 waits before stage 'prod'"),
			rolloutCondition(rolloutsv1alpha1.ConditionPaused, metav1.ConditionTrue, rolloutsv1alpha1.ReasonWaitingForPromotion,
				"stage 'prod' pauses until promoted: `federator rollout promote` starts it"),
			rolloutCondition(rolloutsv1alpha1.ConditionCompleted, metav1.ConditionFalse, rolloutsv1alpha1.ReasonStageProgressing, ""),
			rolloutCondition(rolloutsv1alpha1.ConditionFailed, metav1.ConditionFalse, rolloutsv1alpha1.ReasonNoFailure, ""),
		}}
}

func completedStatus() rolloutsv1alpha1.RolloutStatus {
	s := progressingStatus()
	s.CurrentStage = ""
	s.Clusters[1].State, s.Clusters[1].Revision, s.Clusters[1].Message = rolloutsv1alpha1.StateHealthy, 3, ""
	s.Conditions = []metav1.Condition{
		rolloutCondition(rolloutsv1alpha1.ConditionProgressing, metav1.ConditionFalse, rolloutsv1alpha1.ReasonRolloutCompleted, ""),
		rolloutCondition(rolloutsv1alpha1.ConditionCompleted, metav1.ConditionTrue, rolloutsv1alpha1.ReasonRolloutCompleted, "revision 3 reached every stage"),
		rolloutCondition(rolloutsv1alpha1.ConditionFailed, metav1.ConditionFalse, rolloutsv1alpha1.ReasonNoFailure, ""),
	}
	return s
}

func failedStatus() rolloutsv1alpha1.RolloutStatus {
	s := progressingStatus()
	s.CurrentStage = "canary"
	s.Clusters[0].State, s.Clusters[0].Message = rolloutsv1alpha1.StateFailed, "not healthy within the progress deadline (10m0s) of revision 3"
	s.Conditions = []metav1.Condition{
		rolloutCondition(rolloutsv1alpha1.ConditionFailed, metav1.ConditionTrue, rolloutsv1alpha1.ReasonStageFailed,
			"stage 'canary' failed: 1 of 1 clusters failed (member1), more than maxFailures 0"),
	}
	return s
}

// testRollout is Rollout demo/web at generation 2 for PropagationPolicy
// demo/web.
func testRollout(annotations map[string]string, status rolloutsv1alpha1.RolloutStatus) *rolloutsv1alpha1.Rollout {
	return &rolloutsv1alpha1.Rollout{
		ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "web", Generation: 2, Annotations: annotations,
			CreationTimestamp: created(time.Hour)},
		Spec:   rolloutsv1alpha1.RolloutSpec{PolicyRef: rolloutsv1alpha1.PolicyReference{Name: "web"}, Stages: testStages},
		Status: status,
	}
}

// rolloutsHub holds Clusters member1..4 (member2 and member4 labelled
// env=prod), PropagationPolicy demo/web and Rollout demo/web.
func rolloutsHub(t *testing.T, ro client.Object) *hub {
	t.Helper()
	return rolloutsHubWithPolicy(t, ro, propagationPolicy("web", nil, nil))
}

func rolloutsHubWithPolicy(t *testing.T, ro client.Object, pp *policyv1alpha1.PropagationPolicy) *hub {
	t.Helper()
	objs := []client.Object{pp, ro}
	for _, name := range []string{"member1", "member2", "member3", "member4"} {
		c := cluster(name)
		if name == "member2" || name == "member4" {
			c.Labels = map[string]string{"env": "prod"}
		}
		objs = append(objs, c)
	}
	return newTestHub(t, objs...)
}

// statusSequence makes each read of a Rollout see the next of statuses
// (the last one stays), as a controller writing between polls would.
func statusSequence(t *testing.T, h *hub, statuses ...rolloutsv1alpha1.RolloutStatus) *int {
	t.Helper()
	reads := 0
	h.client = interceptor.NewClient(h.client.(client.WithWatch), interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if err := c.Get(ctx, key, obj, opts...); err != nil {
				return err
			}
			if ro, ok := obj.(*rolloutsv1alpha1.Rollout); ok {
				ro.Status = statuses[min(reads, len(statuses)-1)]
				reads++
			}
			return nil
		},
	})
	return &reads
}

// rolloutAnnotations are Rollout demo/web's annotations on h now.
func rolloutAnnotations(t *testing.T, h *hub) map[string]string {
	t.Helper()
	return annotationsOf(t, h, &rolloutsv1alpha1.Rollout{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "web"}})
}

func TestParseRolloutArg(t *testing.T) {
	cases := []struct {
		arg, kind, name, err string
	}{
		{arg: "web", kind: "Rollout", name: "web"},
		{arg: "rollout/web", kind: "Rollout", name: "web"},
		{arg: "ClusterRollout/platform", kind: "ClusterRollout", name: "platform"},
		{arg: "clusterrollouts/platform", kind: "ClusterRollout", name: "platform"},
		{arg: "deployment/web", err: "deployment is not a kind of rollout"},
		{arg: "rollout/", err: "name a Rollout as NAME or rollout/NAME"},
		{arg: "a/b/c", err: "name a Rollout as NAME or rollout/NAME"},
	}
	for _, tc := range cases {
		k, name, err := parseRolloutArg(tc.arg)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: error %v, want %q", tc.arg, err, tc.err)
		case tc.err == "" && (err != nil || k.kind != tc.kind || name != tc.name):
			t.Errorf("%s: %s %q (%v), want %s %q", tc.arg, k.kind, name, err, tc.kind, tc.name)
		}
	}
}

func TestRolloutStatusPrintsOnce(t *testing.T) {
	stdout, _, err := run(t, rolloutsHub(t, testRollout(nil, progressingStatus())), "rollout", "status", "web", "-n", "demo", "--watch=false")
	if err != nil {
		t.Fatal(err)
	}
	want := `Rollout demo/web: revision 3, current stage 'prod'
CLUSTER   STAGE    STATE     REVISION   SINCE   MESSAGE
member1   canary   Healthy   3          5m      -
member2   prod     Pending   2          5m      stage 'prod': stage 'prod' pauses until promoted
Progressing (WaitingForPromotion): revision 3 waits before stage 'prod'
Paused (WaitingForPromotion): stage 'prod' pauses until promoted: ` + "`federator rollout promote`" + ` starts it
`
	if stdout != want {
		t.Errorf("printed\n%s\nwant\n%s", stdout, want)
	}
}

func TestRolloutStatusExitCodes(t *testing.T) {
	stale := completedStatus()
	stale.ObservedGeneration = 1
	cases := []struct {
		name     string
		statuses []rolloutsv1alpha1.RolloutStatus
		args     []string
		code     int
		err      string
		printed  []string
	}{
		{name: "waits until the rollout completes, then exits 0",
			statuses: []rolloutsv1alpha1.RolloutStatus{progressingStatus(), progressingStatus(), completedStatus()},
			printed:  []string{"current stage 'prod'", "\n\nRollout demo/web: revision 3, current stage none (every stage reached)", "Completed (RolloutCompleted): revision 3 reached every stage"}},
		{name: "a rollout that fails while waited for exits 1 with the Failed message",
			statuses: []rolloutsv1alpha1.RolloutStatus{progressingStatus(), failedStatus()}, code: 1,
			err: "Rollout demo/web failed at revision 3: stage 'canary' failed: 1 of 1 clusters failed (member1), more than maxFailures 0"},
		{name: "a rollout still paused at --timeout exits 2 saying what it waited for",
			statuses: []rolloutsv1alpha1.RolloutStatus{progressingStatus()}, args: []string{"--timeout", "50ms"}, code: exitNotFinished,
			err: "timed out after 50ms waiting for Rollout demo/web to complete (condition Completed=True) or fail (Failed=True); " +
				"last seen: stage 'prod' pauses until promoted"},
		{name: "a completed status for an older generation is not trusted",
			statuses: []rolloutsv1alpha1.RolloutStatus{stale}, args: []string{"--timeout", "50ms"}, code: exitNotFinished,
			err:     "last seen: waiting for the rollout controller to observe generation 2 of the spec (the status is for generation 1)",
			printed: []string{"Rollout demo/web: waiting for the rollout controller to observe generation 2"}},
		{name: "the controller catching up ends the wait",
			statuses: []rolloutsv1alpha1.RolloutStatus{stale, completedStatus()},
			printed:  []string{"waiting for the rollout controller", "Completed (RolloutCompleted)"}},
		{name: "--watch=false exits 0 while the rollout progresses",
			statuses: []rolloutsv1alpha1.RolloutStatus{progressingStatus(), completedStatus()}, args: []string{"--watch=false"},
			printed: []string{"current stage 'prod'"}},
		{name: "--watch=false exits 1 on a failed rollout",
			statuses: []rolloutsv1alpha1.RolloutStatus{failedStatus()}, args: []string{"--watch=false"}, code: 1,
			err: "Rollout demo/web failed at revision 3"},
		{name: "--watch=false does not trust a failed status for an older generation",
			statuses: []rolloutsv1alpha1.RolloutStatus{func() rolloutsv1alpha1.RolloutStatus { s := failedStatus(); s.ObservedGeneration = 1; return s }()},
			args:     []string{"--watch=false"}, printed: []string{"waiting for the rollout controller"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := rolloutsHub(t, testRollout(nil, rolloutsv1alpha1.RolloutStatus{}))
			statusSequence(t, h, tc.statuses...)
			// --timeout 5s: a broken wait fails the case, not the whole run; a case's own --timeout comes later and wins.
			args := append([]string{"rollout", "status", "web", "-n", "demo", "--interval", "5ms", "--timeout", "5s"}, tc.args...)
			stdout, _, err := run(t, h, args...)
			if ExitCode(err) != tc.code {
				t.Fatalf("exit code %d (%v), want %d", ExitCode(err), err, tc.code)
			}
			if tc.err != "" && !strings.Contains(err.Error(), tc.err) {
				t.Errorf("error %q, want it to say %q", err, tc.err)
			}
			for _, p := range tc.printed {
				if !strings.Contains(stdout, p) {
					t.Errorf("printed\n%s\nwant it to hold %q", stdout, p)
				}
			}
		})
	}
}

func TestRolloutStatusPrintsEachChangeOnce(t *testing.T) {
	h := rolloutsHub(t, testRollout(nil, rolloutsv1alpha1.RolloutStatus{}))
	reads := statusSequence(t, h, progressingStatus(), progressingStatus(), progressingStatus(), completedStatus())
	stdout, _, err := run(t, h, "rollout", "status", "web", "-n", "demo", "--interval", "1ms", "--timeout", "5s")
	if err != nil {
		t.Fatal(err)
	}
	if *reads != 4 || strings.Count(stdout, "Rollout demo/web: revision 3") != 2 {
		t.Errorf("%d reads, printed\n%s\nwant 4 reads and two blocks", *reads, stdout)
	}
}

func TestRolloutStatusOfAMissingRollout(t *testing.T) {
	_, _, err := run(t, rolloutsHub(t, testRollout(nil, progressingStatus())), "rollout", "status", "api", "-n", "demo")
	want := "Rollout demo/api not found on the hub at https://hub.test:6443: check the name, and the namespace (-n); a ClusterRollout is named clusterrollout/api"
	if ExitCode(err) != 1 || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
}

func TestRolloutPauseResume(t *testing.T) {
	cases := []struct {
		name        string
		annotations map[string]string
		args        []string
		want        map[string]string
		said        string
	}{
		{"pause sets the suspended annotation to the reason", nil, []string{"pause", "web", "-m", "incident 42"},
			map[string]string{suspended: "incident 42"}, `Rollout demo/web paused: "incident 42"`},
		{"pause without a reason sets true", nil, []string{"pause", "web"},
			map[string]string{suspended: "true"}, "Rollout demo/web paused"},
		{"pausing again with another reason updates it", map[string]string{suspended: "a"}, []string{"pause", "web", "-m", "b"},
			map[string]string{suspended: "b"}, `Rollout demo/web already paused; reason updated from "a" to "b"`},
		{"pausing again with the same reason changes nothing", map[string]string{suspended: "a"}, []string{"pause", "web", "-m", "a"},
			map[string]string{suspended: "a"}, `Rollout demo/web already paused: "a"; nothing changed`},
		{"resume removes the annotation and keeps the others", map[string]string{suspended: "a", "team": "x"}, []string{"resume", "web"},
			map[string]string{"team": "x"}, `Rollout demo/web resumed: annotation propagation.federator.dev/suspended removed (reason was "a")`},
		{"resuming what waits for promotion points at promote", nil, []string{"resume", "web"}, nil,
			"Rollout demo/web is not paused by annotation propagation.federator.dev/suspended; nothing to resume; " +
				"it waits for promotion: `federator rollout promote web` starts the stage"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := rolloutsHub(t, testRollout(tc.annotations, progressingStatus()))
			stdout, _, err := run(t, h, append([]string{"rollout"}, append(tc.args, "-n", "demo")...)...)
			if err != nil {
				t.Fatal(err)
			}
			if stdout != tc.said+"\n" {
				t.Errorf("said %q, want %q", stdout, tc.said)
			}
			got := rolloutAnnotations(t, h)
			if len(got) != len(tc.want) {
				t.Errorf("annotations %v, want %v", got, tc.want)
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("annotations %v, want %v", got, tc.want)
				}
			}
		})
	}
}

func TestRolloutPromote(t *testing.T) {
	suspendedStatus := progressingStatus()
	suspendedStatus.Conditions[1].Reason = rolloutsv1alpha1.ReasonSuspended
	stale := progressingStatus()
	stale.ObservedGeneration = 1
	cases := []struct {
		name    string
		status  rolloutsv1alpha1.RolloutStatus
		args    []string
		promote string // the annotation afterwards; "" when absent
		said    string
		err     string
	}{
		{name: "promotes the stage the rollout waits at", status: progressingStatus(), promote: "3/prod",
			said: "Rollout demo/web: stage 'prod' of revision 3 promoted (annotation rollouts.federator.dev/promote=3/prod); `federator rollout status web` follows it"},
		{name: "--stage promotes a later stage ahead", status: completedStatus(), args: []string{"--stage", "prod"}, promote: "3/prod",
			said: "stage 'prod' of revision 3 promoted"},
		{name: "nothing waits for promotion", status: completedStatus(),
			err: "Rollout demo/web: no stage waits for promotion (revision 3); to promote a later stage ahead, name it with --stage (stages: canary, prod)"},
		{name: "--stage names no stage", status: progressingStatus(), args: []string{"--stage", "prdo"},
			err: `Rollout demo/web has no stage "prdo" in spec.stages (stages: canary, prod); name one of those with --stage`},
		{name: "--stage names a stage that does not pause", status: progressingStatus(), args: []string{"--stage", "canary"},
			err: "stage 'canary' does not pause until promoted"},
		{name: "a rollout paused by its annotation is resumed, not promoted", status: suspendedStatus,
			err: "Rollout demo/web is paused by its annotation propagation.federator.dev/suspended, not waiting for promotion: `federator rollout resume web` resumes it"},
		{name: "a status the controller has not brought up to date promotes nothing", status: stale,
			err: "Rollout demo/web: nothing promoted: waiting for the rollout controller to observe generation 2"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := rolloutsHub(t, testRollout(nil, tc.status))
			stdout, _, err := run(t, h, append([]string{"rollout", "promote", "web", "-n", "demo"}, tc.args...)...)
			switch {
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Errorf("error %v, want %q", err, tc.err)
			case tc.err == "" && err != nil:
				t.Fatal(err)
			case tc.err == "" && !strings.Contains(stdout, tc.said):
				t.Errorf("said %q, want %q", stdout, tc.said)
			}
			if got := rolloutAnnotations(t, h)[rolloutsv1alpha1.PromoteAnnotation]; got != tc.promote {
				t.Errorf("promote annotation %q, want %q", got, tc.promote)
			}
		})
	}
}

func TestRolloutPlan(t *testing.T) {
	ro := testRollout(nil, progressingStatus())
	ro.Spec.Stages = append([]rolloutsv1alpha1.Stage{{Name: "canary", Clusters: []string{"member1", "member9", "member3"}}}, testStages[1],
		rolloutsv1alpha1.Stage{Name: "eu", ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"region": "eu"}}})
	pp := propagationPolicy("web", nil, nil)
	pp.Spec.Placement.ClusterAffinity.ClusterNames = []string{"member1", "member2", "member4", "member5"}
	h := rolloutsHubWithPolicy(t, ro, pp)
	stdout, _, err := run(t, h, "rollout", "plan", "web", "-n", "demo")
	if err != nil {
		t.Fatal(err)
	}
	want := `Rollout demo/web rolls out what PropagationPolicy demo/web places on 3 cluster(s), in this order; the placed clusters no stage has go to the last stage, "remaining":
PropagationPolicy demo/web: placement names member5: no such Cluster
STAGE       BY                    CLUSTERS          NOTES
canary      names                 member1           member9: no such Cluster; member3: not placed by the policy
prod        selector env=prod     member2,member4   -
eu          selector region=eu    -                 reaches no cluster; the stage is skipped
remaining   placed, in no stage   -                 -
`
	if stdout != want {
		t.Errorf("printed\n%s\nwant\n%s", stdout, want)
	}
}

func TestRolloutPlanPutsUnstagedClustersInRemaining(t *testing.T) {
	pp := propagationPolicy("web", nil, nil)
	pp.Spec.Placement = policyv1alpha1.Placement{} // every cluster
	h := rolloutsHubWithPolicy(t, testRollout(nil, progressingStatus()), pp)
	stdout, _, err := run(t, h, "rollout", "plan", "web", "-n", "demo")
	if err != nil {
		t.Fatal(err)
	}
	want := `STAGE       BY                    CLUSTERS          NOTES
canary      names                 member1           -
prod        selector env=prod     member2,member4   -
remaining   placed, in no stage   member3           -
`
	if !strings.HasSuffix(stdout, want) || !strings.Contains(stdout, "places on 4 cluster(s)") {
		t.Errorf("printed\n%s\nwant it to end in\n%s", stdout, want)
	}
}

func TestGetRolloutObjects(t *testing.T) {
	h := rolloutsHub(t, testRollout(nil, progressingStatus()))
	other := testRollout(nil, completedStatus())
	other.Namespace, other.Name = "shop", "cart"
	cr := &rolloutsv1alpha1.ClusterRollout{ObjectMeta: metav1.ObjectMeta{Name: "platform", CreationTimestamp: created(24 * time.Hour)},
		Spec: rolloutsv1alpha1.RolloutSpec{PolicyRef: rolloutsv1alpha1.PolicyReference{Name: "platform"}}}
	for _, obj := range []client.Object{other, cr} {
		if err := h.client.Create(t.Context(), obj); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"get", "rollouts", "-n", "demo"}, `NAME   REVISION   STAGE   HEALTHY/TOTAL   AGE
web    3          prod    1/2             60m
`},
		{[]string{"get", "rollouts", "-A", "-o", "wide"}, `NAMESPACE   NAME   REVISION   STAGE   HEALTHY/TOTAL   AGE   POLICY
demo        web    3          prod    1/2             60m   web
shop        cart   3          -       2/2             60m   web
`},
		{[]string{"get", "clusterrollouts"}, `NAME       REVISION   STAGE   HEALTHY/TOTAL   AGE
platform   -          -       0/0             24h
`},
	}
	for _, tc := range cases {
		stdout, _, err := run(t, h, tc.args...)
		if err != nil || stdout != tc.want {
			t.Errorf("%v: %v, printed\n%s\nwant\n%s", tc.args, err, stdout, tc.want)
		}
	}
	stdout, _, err := run(t, h, "get", "rollouts", "web", "-n", "demo", "-o", "yaml")
	if err != nil || !strings.Contains(stdout, "apiVersion: rollouts.federator.dev/v1alpha1\nkind: Rollout\n") ||
		!strings.Contains(stdout, "currentStage: prod") {
		t.Errorf("-o yaml: %v, printed\n%s", err, stdout)
	}

	// -o json: a List of every Rollout, or the one named, for scripts.
	type rollout struct {
		APIVersion, Kind string
		Metadata         struct{ Namespace, Name string }
		Status           struct{ Revision int64 }
	}
	stdout, _, err = run(t, h, "get", "rollouts", "-A", "-o", "json")
	var list struct {
		APIVersion, Kind string
		Items            []rollout
	}
	if err != nil || json.Unmarshal([]byte(stdout), &list) != nil || list.APIVersion != "v1" || list.Kind != "List" || len(list.Items) != 2 {
		t.Fatalf("-A -o json: %v, printed\n%s", err, stdout)
	}
	for _, item := range list.Items {
		if item.APIVersion != "rollouts.federator.dev/v1alpha1" || item.Kind != "Rollout" || item.Status.Revision != 3 {
			t.Errorf("-A -o json: item %+v, want a Rollout at revision 3", item)
		}
	}
	if got := []string{list.Items[0].Metadata.Namespace + "/" + list.Items[0].Metadata.Name,
		list.Items[1].Metadata.Namespace + "/" + list.Items[1].Metadata.Name}; !slices.Equal(got, []string{"demo/web", "shop/cart"}) {
		t.Errorf("-A -o json lists %v, want demo/web and shop/cart", got)
	}
	stdout, _, err = run(t, h, "get", "rollouts", "web", "-n", "demo", "-o", "json")
	var one rollout
	if err != nil || json.Unmarshal([]byte(stdout), &one) != nil || one.Kind != "Rollout" || one.Metadata.Name != "web" ||
		!strings.Contains(stdout, `"currentStage": "prod"`) {
		t.Errorf("web -o json: %v, printed\n%s", err, stdout)
	}
	stdout, _, err = run(t, h, "get", "clusterrollouts", "-o", "json")
	if err != nil || json.Unmarshal([]byte(stdout), &list) != nil || len(list.Items) != 1 || list.Items[0].Kind != "ClusterRollout" {
		t.Errorf("clusterrollouts -o json: %v, printed\n%s", err, stdout)
	}
}

func TestGetClusterRolloutsNoneFoundNamesNoNamespace(t *testing.T) {
	h := newTestHub(t, propagationPolicy("web", nil, nil))
	_, stderr, err := run(t, h, "get", "clusterrollouts")
	if err != nil || stderr != "No clusterrollouts found.\n" {
		t.Errorf("%v, stderr %q", err, stderr)
	}
}

func TestRolloutStatusOutlivesAHubHiccupButNotADeletion(t *testing.T) {
	cases := []struct {
		name   string
		second error
		code   int
		err    string
		stderr string
	}{
		{name: "an unreachable hub is reported and read again", second: errors.New("connection refused"),
			stderr: "federator: cannot reach the hub at https://hub.test:6443 (kubeconfig hub.kubeconfig (--kubeconfig)): connection refused"},
		{name: "a deleted rollout ends the wait", second: apierrors.NewNotFound(schema.GroupResource{Group: "rollouts.federator.dev", Resource: "rollouts"}, "web"),
			code: 1, err: "Rollout demo/web was deleted while waiting for it to complete"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := rolloutsHub(t, testRollout(nil, progressingStatus()))
			reads := 0
			h.client = interceptor.NewClient(h.client.(client.WithWatch), interceptor.Funcs{
				Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
					if _, ok := obj.(*rolloutsv1alpha1.Rollout); !ok {
						return c.Get(ctx, key, obj, opts...)
					}
					reads++
					switch reads {
					case 2:
						return tc.second
					case 3:
						if err := c.Get(ctx, key, obj, opts...); err != nil {
							return err
						}
						obj.(*rolloutsv1alpha1.Rollout).Status = completedStatus()
						return nil
					}
					return c.Get(ctx, key, obj, opts...)
				},
			})
			_, stderr, err := run(t, h, "rollout", "status", "web", "-n", "demo", "--interval", "1ms", "--timeout", "5s")
			if ExitCode(err) != tc.code || (tc.err != "" && !strings.Contains(err.Error(), tc.err)) {
				t.Errorf("error %v (exit %d), want exit %d and %q", err, ExitCode(err), tc.code, tc.err)
			}
			if !strings.Contains(stderr, tc.stderr) {
				t.Errorf("stderr %q, want %q", stderr, tc.stderr)
			}
		})
	}
}

func TestClusterRolloutCommands(t *testing.T) {
	cr := &rolloutsv1alpha1.ClusterRollout{ObjectMeta: metav1.ObjectMeta{Name: "platform", Generation: 2},
		Spec:   rolloutsv1alpha1.RolloutSpec{PolicyRef: rolloutsv1alpha1.PolicyReference{Name: "platform"}, Stages: testStages},
		Status: progressingStatus()}
	h := newTestHub(t, cr)
	stdout, _, err := run(t, h, "rollout", "promote", "clusterrollout/platform")
	if err != nil || !strings.Contains(stdout, "ClusterRollout platform: stage 'prod' of revision 3 promoted") ||
		!strings.Contains(stdout, "`federator rollout status clusterrollout/platform` follows it") {
		t.Fatalf("%v, printed %q", err, stdout)
	}
	if stdout, _, err = run(t, h, "rollout", "pause", "ClusterRollout/platform", "-m", "freeze"); err != nil ||
		stdout != "ClusterRollout platform paused: \"freeze\"\n" {
		t.Fatalf("%v, printed %q", err, stdout)
	}
	got := annotationsOf(t, h, &rolloutsv1alpha1.ClusterRollout{ObjectMeta: metav1.ObjectMeta{Name: "platform"}})
	if got[suspended] != "freeze" || got[rolloutsv1alpha1.PromoteAnnotation] != "3/prod" {
		t.Errorf("annotations %v", got)
	}
	if stdout, _, err = run(t, h, "rollout", "status", "clusterrollout/platform", "--watch=false"); err != nil ||
		!strings.HasPrefix(stdout, "ClusterRollout platform: revision 3, current stage 'prod'\n") {
		t.Errorf("%v, printed %q", err, stdout)
	}
}

// `federator suspend rollout` writes the same annotation as `rollout
// pause` and says so in the same words (issue 29: one suspended annotation
// for policies, templates and Rollouts); `resume rollout` removes it; a
// rollout pauses as a whole, so --clusters is refused, changing nothing.
func TestSuspendAndResumeARollout(t *testing.T) {
	h := rolloutsHub(t, testRollout(map[string]string{"team": "x"}, progressingStatus()))
	if _, _, err := run(t, h, "suspend", "rollout", "web", "-n", "demo", "--clusters", "member1", "-m", "x"); err == nil ||
		!strings.Contains(err.Error(), "a rollout pauses as a whole") {
		t.Errorf("--clusters on a rollout: %v, want it refused", err)
	}
	if got := rolloutAnnotations(t, h); got[suspended] != "" {
		t.Errorf("a refused suspension wrote %v", got)
	}
	for _, step := range []struct {
		args []string
		want map[string]string
		said string
	}{
		{[]string{"suspend", "rollout", "web", "-m", "incident 42"}, map[string]string{suspended: "incident 42", "team": "x"},
			`Rollout demo/web paused: "incident 42"`},
		{[]string{"resume", "rollout", "web"}, map[string]string{"team": "x"},
			`Rollout demo/web resumed: annotation propagation.federator.dev/suspended removed (reason was "incident 42")`},
	} {
		stdout, _, err := run(t, h, append(step.args, "-n", "demo")...)
		if err != nil {
			t.Fatal(err)
		}
		if stdout != step.said+"\n" {
			t.Errorf("%v said %q, want %q", step.args, stdout, step.said)
		}
		if got := rolloutAnnotations(t, h); !maps.Equal(got, step.want) {
			t.Errorf("%v left annotations %v, want %v", step.args, got, step.want)
		}
	}
}
