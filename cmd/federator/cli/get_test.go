package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	gatingv1alpha1 "github.com/federator-dev/federator/apis/gating/v1alpha1"
	workkeys "github.com/federator-dev/federator/apis/work"
)

// objectsHub is rolloutHub plus what `get policies|bindings` lists beside
// it: a suspended ClusterPropagationPolicy and its ClusterResourceBinding.
func objectsHub(t *testing.T) *hub {
	t.Helper()
	h := rolloutHub(t)
	cpp := &policyv1alpha1.ClusterPropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "roles", CreationTimestamp: created(48 * time.Hour),
			Annotations: map[string]string{onMember2: "true", "suspended.propagation.federator.dev/member1": "audit"}},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors:  []policyv1alpha1.ResourceSelector{{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"}},
			ConflictResolution: policyv1alpha1.ConflictOverwrite, Priority: ptr.To[int32](5),
			Suspension: &policyv1alpha1.Suspension{DispatchingOnClusters: &policyv1alpha1.SuspendClusters{ClusterNames: []string{"member3", "member4"}}},
		},
	}
	crb := &workv1alpha2.ClusterResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "reader-clusterrole", CreationTimestamp: created(48 * time.Hour),
			Annotations: map[string]string{policyv1alpha1.ClusterPropagationPolicyAnnotation: "roles"}},
		Spec: workv1alpha2.ResourceBindingSpec{
			Resource: workv1alpha2.ObjectReference{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: "reader"},
			Clusters: []workv1alpha2.TargetCluster{{Name: "member1"}}},
	}
	if err := h.client.Create(context.Background(), cpp); err != nil {
		t.Fatal(err)
	}
	if err := h.client.Create(context.Background(), crb); err != nil {
		t.Fatal(err)
	}
	// member2 frozen; a freeze of member1 that ended (by the hub's clock)
	// holds nothing.
	for _, f := range []*gatingv1alpha1.Freeze{
		{ObjectMeta: metav1.ObjectMeta{Name: "freeze-inc42", CreationTimestamp: created(time.Hour)},
			Spec: gatingv1alpha1.FreezeSpec{Clusters: []string{"member2"}, Message: "incident 42"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "freeze-over", CreationTimestamp: created(2 * time.Hour)},
			Spec: gatingv1alpha1.FreezeSpec{Clusters: []string{"member1"}, Duration: &metav1.Duration{Duration: time.Hour}}},
	} {
		if err := h.client.Create(context.Background(), f); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

func TestGetObjectsGolden(t *testing.T) {
	runGolden(t, objectsHub, []goldenCase{
		{"policies-all-namespaces.golden", []string{"get", "policies", "-A"}},
		{"pp-wide.golden", []string{"get", "pp", "-n", "demo", "-o", "wide"}},
		{"cpp.yaml.golden", []string{"get", "cpp", "roles", "-o", "yaml"}},
		{"bindings-wide.golden", []string{"get", "bindings", "-A", "-o", "wide"}},
		{"rb.golden", []string{"get", "rb", "-n", "demo"}},
		{"works-wide.golden", []string{"get", "works", "-n", "demo", "-o", "wide"}},
		{"clusters-wide.golden", []string{"get", "clusters", "-o", "wide"}},
	})
}

func TestGetArguments(t *testing.T) {
	cases := []struct {
		name string
		args []string
		err  string
	}{
		{"nothing to list", []string{"get"}, "get takes what to list and an optional NAME"},
		{"an unknown kind of object", []string{"get", "deployments"},
			"get deployments: unknown kind of object; list one of: rollout, policies, pp, cpp, bindings, rb, crb, works, clusters"},
		{"an unknown output format", []string{"get", "rollout", "-o", "xml"}, "-o xml: unknown output format; use wide, yaml or json"},
		{"a named policy that is not there", []string{"get", "policies", "nope", "-n", "demo"},
			`no PropagationPolicy or ClusterPropagationPolicy named "nope" in namespace demo`},
		{"a named cluster that is not there", []string{"get", "cluster", "member9"}, `no Cluster named "member9" on the hub`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := run(t, objectsHub(t), tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("error %v, want %q", err, tc.err)
			}
		})
	}
}

func TestWatchPrintsOnlyChanges(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	states := []string{"a", "a", "b", "b", "b"}
	calls := 0
	render := func(context.Context) ([]byte, []byte, error) {
		s := states[min(calls, len(states)-1)]
		calls++
		if calls == len(states) {
			cancel()
		}
		return []byte("shown " + s + "\n"), []byte(s), nil
	}
	var out, errOut strings.Builder
	if err := watchLoop(ctx, time.Millisecond, render, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	if out.String() != "shown a\n\nshown b\n" {
		t.Errorf("printed %q, want each state once", out.String())
	}
}

// APPLIED speaks of the Work's current generation, as DISPATCHING does: an
// Applied condition of an older generation says the member runs an older
// spec, not this one.
func TestGetWorksShowsAppliedOnlyForTheWorksGeneration(t *testing.T) {
	const failed = "Failed to apply all manifests (0/1): denied"
	cases := []struct {
		name          string
		generation    int64
		applied       []metav1.Condition
		want, message string
	}{
		{"no Applied condition yet", 2, nil, "", ""},
		{"applied at this generation", 2, []metav1.Condition{condition(workkeys.ConditionApplied, metav1.ConditionTrue, workkeys.ReasonAppliedSuccessful, "", 2)}, "True", ""},
		{"failed at this generation", 2, []metav1.Condition{condition(workkeys.ConditionApplied, metav1.ConditionFalse, workkeys.ReasonAppliedFailed, failed, 2)}, "False", failed},
		{"applied at an older generation", 2, []metav1.Condition{condition(workkeys.ConditionApplied, metav1.ConditionTrue, workkeys.ReasonAppliedSuccessful, "", 1)}, StatePending, ""},
		{"failed at an older generation", 2, []metav1.Condition{condition(workkeys.ConditionApplied, metav1.ConditionFalse, workkeys.ReasonAppliedFailed, failed, 1)}, StatePending, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Generation: tc.generation}, Status: workv1alpha1.WorkStatus{Conditions: tc.applied}}
			got, message := appliedStatus(w)
			if got != tc.want || message != tc.message {
				t.Errorf("APPLIED %q, message %q; want %q, %q", got, message, tc.want, tc.message)
			}
		})
	}
}
