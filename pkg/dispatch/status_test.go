package dispatch

import (
	"encoding/json"
	"reflect"
	"testing"

	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

func unstructuredOf(t *testing.T, obj runtime.Object) *unstructured.Unstructured {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: m}
}

// TestReflectStatus: what a Work carries of a member object's status is
// Karmada's selection, with the member's generation where the hub needs it
// to tell whether the member has observed its spec.
func TestReflectStatus(t *testing.T) {
	typeMeta := func(apiVersion, kind string) metav1.TypeMeta {
		return metav1.TypeMeta{APIVersion: apiVersion, Kind: kind}
	}
	for _, tc := range []struct {
		name   string
		member runtime.Object
		want   map[string]any // nil: no status collected
	}{
		{"a Deployment's replica counts and both generations, not its conditions",
			&appsv1.Deployment{TypeMeta: typeMeta("apps/v1", "Deployment"), ObjectMeta: metav1.ObjectMeta{Generation: 4},
				Status: appsv1.DeploymentStatus{ObservedGeneration: 4, Replicas: 3, UpdatedReplicas: 1, ReadyReplicas: 2,
					AvailableReplicas: 2, UnavailableReplicas: 1,
					Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue}}}},
			map[string]any{"generation": 4.0, "observedGeneration": 4.0, "replicas": 3.0, "updatedReplicas": 1.0,
				"readyReplicas": 2.0, "availableReplicas": 2.0, "unavailableReplicas": 1.0}},
		{"a StatefulSet's counts with its observedGeneration, which Karmada's selection drops",
			&appsv1.StatefulSet{TypeMeta: typeMeta("apps/v1", "StatefulSet"), ObjectMeta: metav1.ObjectMeta{Generation: 2},
				Status: appsv1.StatefulSetStatus{ObservedGeneration: 2, Replicas: 2, ReadyReplicas: 2, CurrentReplicas: 2,
					UpdatedReplicas: 2, AvailableReplicas: 2, CurrentRevision: "web-1"}},
			map[string]any{"generation": 2.0, "observedGeneration": 2.0, "replicas": 2.0, "readyReplicas": 2.0,
				"currentReplicas": 2.0, "updatedReplicas": 2.0, "availableReplicas": 2.0}},
		{"a DaemonSet's counts",
			&appsv1.DaemonSet{TypeMeta: typeMeta("apps/v1", "DaemonSet"), ObjectMeta: metav1.ObjectMeta{Generation: 1},
				Status: appsv1.DaemonSetStatus{ObservedGeneration: 1, DesiredNumberScheduled: 2, CurrentNumberScheduled: 2,
					NumberReady: 2, NumberAvailable: 2, UpdatedNumberScheduled: 2}},
			map[string]any{"generation": 1.0, "observedGeneration": 1.0, "desiredNumberScheduled": 2.0, "currentNumberScheduled": 2.0,
				"numberReady": 2.0, "numberAvailable": 2.0, "updatedNumberScheduled": 2.0, "numberMisscheduled": 0.0}},
		{"a Job's counts and conditions, not its uncounted pods",
			&batchv1.Job{TypeMeta: typeMeta("batch/v1", "Job"),
				Status: batchv1.JobStatus{Succeeded: 1, Ready: ptr.To[int32](0),
					Conditions:              []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}},
					UncountedTerminatedPods: &batchv1.UncountedTerminatedPods{}}},
			map[string]any{"succeeded": 1.0, "conditions": []any{map[string]any{"type": "Complete", "status": "True",
				"lastProbeTime": nil, "lastTransitionTime": nil}}}},
		{"a ClusterIP Service: nothing (Karmada collects a LoadBalancer's ingress only)",
			&corev1.Service{TypeMeta: typeMeta("v1", "Service"), Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP}},
			nil},
		{"a kind without a rule: its whole status",
			&corev1.Namespace{TypeMeta: typeMeta("v1", "Namespace"), Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive}},
			map[string]any{"phase": "Active"}},
		{"an object without status: nothing",
			&corev1.ConfigMap{TypeMeta: typeMeta("v1", "ConfigMap")},
			nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := unstructuredOf(t, tc.member)
			if tc.want == nil {
				delete(obj.Object, "status")
				if _, ok := tc.member.(*corev1.Service); ok {
					obj = unstructuredOf(t, tc.member)
				}
			}
			before := obj.DeepCopy()
			raw, err := reflectStatus(obj)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(obj, before) {
				t.Errorf("the member object was changed: it may be the cache's")
			}
			var got map[string]any
			if raw != nil {
				if err := json.Unmarshal(raw.Raw, &got); err != nil {
					t.Fatal(err)
				}
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %v\nwant %v", got, tc.want)
			}
		})
	}
}

func TestHealth(t *testing.T) {
	deployment := func(updated, available int32) *unstructured.Unstructured {
		return unstructuredOf(t, &appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
			ObjectMeta: metav1.ObjectMeta{Generation: 2}, Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](2)},
			Status: appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 3, UpdatedReplicas: updated, AvailableReplicas: available}})
	}
	statefulSet := func(observed, updated, available int32) *unstructured.Unstructured {
		return unstructuredOf(t, &appsv1.StatefulSet{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSet"},
			ObjectMeta: metav1.ObjectMeta{Generation: 2}, Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](2)},
			Status: appsv1.StatefulSetStatus{ObservedGeneration: int64(observed), Replicas: 2, UpdatedReplicas: updated, AvailableReplicas: available}})
	}
	daemonSet := func(observed, updated, available int32) *unstructured.Unstructured {
		return unstructuredOf(t, &appsv1.DaemonSet{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "DaemonSet"},
			ObjectMeta: metav1.ObjectMeta{Generation: 2},
			Status: appsv1.DaemonSetStatus{ObservedGeneration: int64(observed), DesiredNumberScheduled: 3,
				UpdatedNumberScheduled: updated, NumberAvailable: available}})
	}
	for _, tc := range []struct {
		name string
		obj  *unstructured.Unstructured
		want workv1alpha1.ResourceHealth
	}{
		{"a Deployment whose rollout completed is Healthy", deployment(2, 2), workv1alpha1.ResourceHealthy},
		{"a Deployment stuck with one new replica of two is Unhealthy", deployment(1, 2), workv1alpha1.ResourceUnhealthy},
		{"a StatefulSet updated and available at its generation is Healthy", statefulSet(2, 2, 2), workv1alpha1.ResourceHealthy},
		{"a StatefulSet that has not observed its generation is Unhealthy", statefulSet(1, 2, 2), workv1alpha1.ResourceUnhealthy},
		{"a StatefulSet with one updated replica of two is Unhealthy", statefulSet(2, 1, 1), workv1alpha1.ResourceUnhealthy},
		{"a StatefulSet with an updated replica not available is Unhealthy", statefulSet(2, 2, 1), workv1alpha1.ResourceUnhealthy},
		{"a DaemonSet updated and available on every node at its generation is Healthy", daemonSet(2, 3, 3), workv1alpha1.ResourceHealthy},
		{"a DaemonSet that has not observed its generation is Unhealthy", daemonSet(1, 3, 3), workv1alpha1.ResourceUnhealthy},
		{"a DaemonSet updated on two nodes of three is Unhealthy", daemonSet(2, 2, 2), workv1alpha1.ResourceUnhealthy},
		{"a DaemonSet with an updated pod not available is Unhealthy", daemonSet(2, 3, 2), workv1alpha1.ResourceUnhealthy},
		// Karmada has no rule for Jobs; a rollout judges them itself
		// (pkg/rollout's manifestHealth).
		{"a running Job is Healthy, as in Karmada",
			unstructuredOf(t, &batchv1.Job{TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"}, Status: batchv1.JobStatus{Active: 1}}),
			workv1alpha1.ResourceHealthy},
		{"a kind without a rule is Healthy, as in Karmada",
			unstructuredOf(t, &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}}), workv1alpha1.ResourceHealthy},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := health(tc.obj); got != tc.want {
				t.Errorf("health = %s, want %s", got, tc.want)
			}
		})
	}
}
