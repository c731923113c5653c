package main

import (
	"context"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// readyOwner is the field manager of the Deployment statuses the run
// writes on the members.
const readyOwner = "chaos-deployment-status"

// markDeploymentsReady stands in for the members' deployment and job
// controllers until ctx ends: every 300 ms it writes each Deployment of the
// run's namespace on each member as rolled out at its generation (observed,
// every replica updated and available), so Karmada's health rule finds it
// healthy, and each Job as complete, which a Rollout waits for; so a
// Rollout's stages complete. The bare members run no
// controller; without this no revision would pass a Rollout's first
// stage. A status write changes no version the recorders read, and a
// frozen member only times out. It never runs with --workloads
// (options.fakesStatus): those members' own controllers write these
// statuses, and two writers would fight over them.
func (r *chaosRun) markDeploymentsReady(ctx context.Context) {
	for {
		for _, m := range r.names {
			r.mu.Lock()
			frozen := r.paused == m
			r.mu.Unlock()
			if !frozen {
				markReady(ctx, r.members[m])
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(300 * time.Millisecond):
		}
	}
}

func markReady(ctx context.Context, member client.Client) {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	list := &appsv1.DeploymentList{}
	if err := member.List(ctx, list, client.InNamespace(namespace)); err != nil {
		return
	}
	for i := range list.Items {
		d := &list.Items[i]
		n := ptr.Deref(d.Spec.Replicas, 1)
		want := appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: n, UpdatedReplicas: n, ReadyReplicas: n, AvailableReplicas: n}
		if d.Status.ObservedGeneration == want.ObservedGeneration && d.Status.UpdatedReplicas == n && d.Status.AvailableReplicas == n &&
			d.Status.Replicas == n && d.Status.ReadyReplicas == n {
			continue
		}
		d.Status = want
		// A conflict or a member going away is retried on the next round.
		_ = member.Status().Update(ctx, d, client.FieldOwner(readyOwner))
	}
	markJobsComplete(ctx, member)
}

// markJobsComplete writes each Job of the run's namespace on member as
// succeeded, with the conditions and times the API server requires of a
// complete Job. Once complete, a Job stays so: its versions are
// annotations, which change no generation.
func markJobsComplete(ctx context.Context, member client.Client) {
	list := &batchv1.JobList{}
	if err := member.List(ctx, list, client.InNamespace(namespace)); err != nil {
		return
	}
	for i := range list.Items {
		j := &list.Items[i]
		if jobComplete(j) {
			continue
		}
		now := metav1.Now()
		j.Status = batchv1.JobStatus{StartTime: &now, CompletionTime: &now, Succeeded: ptr.Deref(j.Spec.Completions, 1),
			Conditions: []batchv1.JobCondition{
				{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastProbeTime: now, LastTransitionTime: now},
				{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastProbeTime: now, LastTransitionTime: now}}}
		_ = member.Status().Update(ctx, j, client.FieldOwner(readyOwner))
	}
}

func jobComplete(j *batchv1.Job) bool {
	for _, c := range j.Status.Conditions {
		if c.Type == batchv1.JobComplete && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}
