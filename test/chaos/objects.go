package main

import (
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/federator-dev/federator/test/framework"
)

// The objects a run writes: its templates (two Deployments, a ConfigMap,
// a Job) and its Gates, and how each template is built and read.

const (
	namespace  = "chaos"
	policyName = "chaos"
	configMap  = "conf"
	// job is the Job template: its version is an annotation (a Job's pod
	// template cannot change), and every apply to a member must keep what
	// the member's API server generated (spec.selector and the pod
	// template's labels), as Karmada's retention does.
	job = "batch"
	// holdReason is the value of every suspension annotation written.
	holdReason = "chaos"
)

// templates are the templates a run may change: two Deployments, a
// ConfigMap and a Job, all claimed by one PropagationPolicy. A run's state
// holds the ones it uses (without --jobs, not the Job).
var templates = []string{"web-a", "web-b", configMap, job}

// gateNames are the Gates the run creates, lists on the policy, opens,
// closes and deletes; gateWindow gives the spec.window a Gate is created
// with, so a request written without --for lapses too; the scheduled gate
// opens by its spec.schedules for scheduleOpen every minute.
var (
	gateNames     = []string{"approval", "windowed", "scheduled"}
	gateWindow    = map[string]time.Duration{"windowed": 4 * time.Second}
	gateScheduled = map[string]bool{"scheduled": true}
)

func templateObject(template string) client.Object {
	meta := metav1.ObjectMeta{Namespace: namespace, Name: template}
	switch template {
	case configMap:
		return &corev1.ConfigMap{ObjectMeta: meta}
	case job:
		return &batchv1.Job{ObjectMeta: meta}
	}
	return &appsv1.Deployment{ObjectMeta: meta}
}

// versionOf reads the version a stored copy of template carries.
func versionOf(template string) framework.Field {
	switch template {
	case configMap:
		return framework.JSONPath("{.data.version}")
	case job:
		return framework.JSONPath("{.metadata.annotations.version}")
	}
	return framework.Image
}

// newTemplate is template at version as the run creates it on the hub.
// The Job is suspended on bare members (nothing would run it), and runs
// with workloads: its one pod completes at once on a simulated node
// (pkg/fleet's kwok stages), so the member's job controller marks it
// Complete, which a Rollout's stage waits for (pkg/rollout: a Job is
// healthy once complete); a suspended Job never completes.
func newTemplate(template, version string, workloads bool) client.Object {
	meta := metav1.ObjectMeta{Namespace: namespace, Name: template}
	switch template {
	case configMap:
		return &corev1.ConfigMap{ObjectMeta: meta, Data: map[string]string{"version": version}}
	case job:
		meta.Annotations = map[string]string{"version": version}
		return &batchv1.Job{ObjectMeta: meta, Spec: batchv1.JobSpec{Suspend: ptr.To(!workloads),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{Name: "batch", Image: "chaos.local/batch:1"}}}}}}
	}
	return framework.NewDeployment(namespace, template, version)
}

func gvkOf(template string) schema.GroupVersionKind {
	switch template {
	case configMap:
		return schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	case job:
		return schema.GroupVersionKind{Group: "batch", Version: "v1", Kind: "Job"}
	}
	return schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
}
