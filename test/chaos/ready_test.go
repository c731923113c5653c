package main

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/federator-dev/federator/internal/fleettest"
	"github.com/federator-dev/federator/pkg/fleet"
)

// The run stands in for a member's controllers on a real API server: its
// Deployments read as rolled out and its (suspended) Job as complete, which
// the API server's validation of Job status accepts, so a Rollout's stages
// over the run's templates, the Job among them, complete.
func TestMarkReadyRollsOutDeploymentsAndCompletesJobs(t *testing.T) {
	f := fleettest.Start(t, fleet.Options{})
	member, err := client.New(f.Hub.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := member.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}); err != nil {
		t.Fatal(err)
	}
	for _, o := range []client.Object{newTemplate("web-a", "v1", false), newTemplate(job, "v1", false)} {
		if err := member.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	markReady(ctx, member)

	d := &appsv1.Deployment{}
	if err := member.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "web-a"}, d); err != nil {
		t.Fatal(err)
	}
	if d.Status.ObservedGeneration != d.Generation || d.Status.AvailableReplicas != *d.Spec.Replicas {
		t.Errorf("the Deployment is not rolled out: %+v", d.Status)
	}
	j := &batchv1.Job{}
	if err := member.Get(ctx, client.ObjectKey{Namespace: namespace, Name: job}, j); err != nil {
		t.Fatal(err)
	}
	if !jobComplete(j) {
		t.Errorf("the Job is not complete (was its status refused?): %+v", j.Status)
	}
}
