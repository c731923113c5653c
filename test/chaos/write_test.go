package main

import (
	"encoding/json"
	"maps"
	"slices"
	"testing"

	batchv1 "k8s.io/api/batch/v1"

	policykeys "github.com/federator-dev/federator/apis/policy"
)

// A list is one merge patch of the policy's annotations, as `federator
// suspend|resume pp NAME --clusters a,b` writes: a per-cluster annotation
// set for each member a suspend names, removed (null) for each a resume
// names, and nothing else.
func TestAClusterListIsOneWriteOfEveryAnnotationItNames(t *testing.T) {
	s := initialState(map[string]string{"web": "v1"})
	s.PolicyClusters = map[string]bool{"member2": true}
	for _, o := range []op{
		{Kind: opPolicyClusterList, Clusters: []string{"member1", "member3"}},
		{Kind: opPolicyClusterList, Clusters: []string{"member1", "member2", "member3"}},
		{Kind: opPolicyClusterList, Clusters: []string{"member2", "member3"}, Resume: true},
	} {
		t.Run(o.String(), func(t *testing.T) {
			next := s.clone()
			next.PolicyClusters = setAll(next.PolicyClusters, o.Clusters, !o.Resume)
			var patch struct {
				Metadata struct{ Annotations map[string]*string }
			}
			raw := clusterListPatch(o, next)
			if err := json.Unmarshal(raw, &patch); err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, m := range o.Clusters {
				want = append(want, policykeys.ClusterSuspendedAnnotationPrefix+m)
			}
			if got := slices.Sorted(maps.Keys(patch.Metadata.Annotations)); !slices.Equal(got, want) {
				t.Fatalf("the patch %s writes %v, want %v", raw, got, want)
			}
			for k, v := range patch.Metadata.Annotations {
				switch {
				case o.Resume && v != nil:
					t.Errorf("a resume sets %s to %q; it removes it", k, *v)
				case !o.Resume && (v == nil || *v != holdReason):
					t.Errorf("a suspend writes %s as %v; want %q", k, v, holdReason)
				}
			}
		})
	}
}

// The Job template is suspended on bare members, where nothing would run
// it, and runs on members that run workloads: a Rollout's stage waits for
// a Job to complete, which a suspended one never does.
func TestTheJobRunsOnlyOnMembersThatRunWorkloads(t *testing.T) {
	for _, workloads := range []bool{false, true} {
		j, ok := newTemplate(job, "v1", workloads).(*batchv1.Job)
		if !ok || j.Spec.Suspend == nil || *j.Spec.Suspend == workloads {
			t.Errorf("with workloads %v, the Job's spec.suspend is %v", workloads, j.Spec.Suspend)
		}
		if j.Annotations["version"] != "v1" {
			t.Errorf("the Job's version annotation is %q", j.Annotations["version"])
		}
	}
}
