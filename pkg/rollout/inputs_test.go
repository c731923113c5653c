package rollout

import (
	"encoding/json"
	"testing"

	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	workkeys "github.com/federator-dev/federator/apis/work"
)

// A Job counts healthy in a rollout once it completed, not once applied
// (Karmada's interpreter has no health rule for Jobs and says Healthy);
// the other kinds keep Karmada's verdict.
func TestManifestHealth(t *testing.T) {
	job := func(status *batchv1.JobStatus) workv1alpha1.ManifestStatus {
		ms := workv1alpha1.ManifestStatus{Identifier: workv1alpha1.ResourceIdentifier{Group: "batch", Version: "v1", Kind: "Job",
			Namespace: "shop", Name: "migrate"}, Health: workv1alpha1.ResourceHealthy}
		if status != nil {
			raw, err := json.Marshal(status)
			if err != nil {
				t.Fatal(err)
			}
			ms.Status = &runtime.RawExtension{Raw: raw}
		}
		return ms
	}
	condition := func(typ batchv1.JobConditionType, status corev1.ConditionStatus) batchv1.JobCondition {
		return batchv1.JobCondition{Type: typ, Status: status}
	}
	other := func(kind string, health workv1alpha1.ResourceHealth) workv1alpha1.ManifestStatus {
		group := "apps"
		if kind == "ConfigMap" {
			group = ""
		}
		return workv1alpha1.ManifestStatus{Identifier: workv1alpha1.ResourceIdentifier{Group: group, Version: "v1", Kind: kind,
			Namespace: "shop", Name: "web"}, Health: health}
	}
	for _, tc := range []struct {
		name string
		ms   workv1alpha1.ManifestStatus
		want workv1alpha1.ResourceHealth
	}{
		{"a Job applied with no status yet is Unknown", job(nil), workv1alpha1.ResourceUnknown},
		{"a running Job is Unknown", job(&batchv1.JobStatus{Active: 1}), workv1alpha1.ResourceUnknown},
		{"a Job whose success criteria are met but not yet Complete is Unknown",
			job(&batchv1.JobStatus{Succeeded: 1, Conditions: []batchv1.JobCondition{condition(batchv1.JobSuccessCriteriaMet, corev1.ConditionTrue)}}),
			workv1alpha1.ResourceUnknown},
		{"a Job whose Complete condition is False is Unknown",
			job(&batchv1.JobStatus{Conditions: []batchv1.JobCondition{condition(batchv1.JobComplete, corev1.ConditionFalse)}}),
			workv1alpha1.ResourceUnknown},
		{"a complete Job is Healthy",
			job(&batchv1.JobStatus{Succeeded: 1, Conditions: []batchv1.JobCondition{
				condition(batchv1.JobSuccessCriteriaMet, corev1.ConditionTrue), condition(batchv1.JobComplete, corev1.ConditionTrue)}}),
			workv1alpha1.ResourceHealthy},
		{"a failed Job is Unhealthy, though Karmada says Healthy",
			job(&batchv1.JobStatus{Failed: 6, Conditions: []batchv1.JobCondition{
				condition(batchv1.JobFailureTarget, corev1.ConditionTrue), condition(batchv1.JobFailed, corev1.ConditionTrue)}}),
			workv1alpha1.ResourceUnhealthy},
		{"a Job status that cannot be read is Unknown",
			workv1alpha1.ManifestStatus{Identifier: job(nil).Identifier, Health: workv1alpha1.ResourceHealthy,
				Status: &runtime.RawExtension{Raw: []byte(`{"conditions": "complete"}`)}},
			workv1alpha1.ResourceUnknown},
		{"a Deployment keeps Karmada's Healthy", other("Deployment", workv1alpha1.ResourceHealthy), workv1alpha1.ResourceHealthy},
		{"a StatefulSet keeps Karmada's Unhealthy", other("StatefulSet", workv1alpha1.ResourceUnhealthy), workv1alpha1.ResourceUnhealthy},
		{"a ConfigMap keeps Karmada's Healthy (once applied)", other("ConfigMap", workv1alpha1.ResourceHealthy), workv1alpha1.ResourceHealthy},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := manifestHealth(tc.ms); got != tc.want {
				t.Errorf("manifestHealth = %s, want %s", got, tc.want)
			}
			// The cluster counts healthy in the rollout only when the
			// object is Healthy.
			w := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Generation: 1,
				Annotations: map[string]string{workkeys.TemplateHashAnnotation: "h1"}},
				Status: workv1alpha1.WorkStatus{Conditions: []metav1.Condition{{Type: workkeys.ConditionApplied,
					Status: metav1.ConditionTrue, ObservedGeneration: 1}}, ManifestStatuses: []workv1alpha1.ManifestStatus{tc.ms}}}
			if got, want := workHealthy(w, "h1"), tc.want == workv1alpha1.ResourceHealthy; got != want {
				t.Errorf("workHealthy = %v, want %v", got, want)
			}
		})
	}
}

// A Work applied by Karmada's karmada-agent (a Pull cluster) has an Applied
// condition without a generation: the cluster counts healthy only when its
// reflected status says the member copy carries the template generation the
// manifest carries now, never on an Applied condition of an earlier
// manifest.
func TestWorkHealthyWithoutAppliedGeneration(t *testing.T) {
	manifest := func(generation string) workv1alpha1.Manifest {
		annotations := ""
		if generation != "" {
			annotations = `,"annotations":{"resourcetemplate.karmada.io/generation":"` + generation + `"}`
		}
		return workv1alpha1.Manifest{RawExtension: runtime.RawExtension{Raw: []byte(
			`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"namespace":"shop","name":"web"` + annotations + `}}`)}}
	}
	reflected := func(status string) workv1alpha1.ManifestStatus {
		ms := workv1alpha1.ManifestStatus{Identifier: workv1alpha1.ResourceIdentifier{Group: "apps", Version: "v1", Kind: "Deployment",
			Namespace: "shop", Name: "web"}, Health: workv1alpha1.ResourceHealthy}
		if status != "" {
			ms.Status = &runtime.RawExtension{Raw: []byte(status)}
		}
		return ms
	}
	for _, tc := range []struct {
		name              string
		manifest          workv1alpha1.Manifest
		appliedGeneration int64
		status            workv1alpha1.ManifestStatus
		want              bool
	}{
		{"reflected at the manifest's template generation", manifest("7"), 0,
			reflected(`{"generation":3,"resourceTemplateGeneration":7,"observedGeneration":3}`), true},
		{"reflected at an earlier template generation: the agent has not applied this manifest yet", manifest("7"), 0,
			reflected(`{"generation":2,"resourceTemplateGeneration":6,"observedGeneration":2}`), false},
		{"no reflected status", manifest("7"), 0, reflected(""), false},
		{"a manifest without the stamp cannot tell", manifest(""), 0,
			reflected(`{"generation":3,"resourceTemplateGeneration":7}`), false},
		{"an Applied condition of another generation, written by federator's dispatcher", manifest("7"), 1,
			reflected(`{"generation":3,"resourceTemplateGeneration":7}`), false},
		{"an Applied condition of this generation", manifest(""), 2, reflected(`{}`), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Generation: 2,
				Annotations: map[string]string{workkeys.TemplateHashAnnotation: "h1"}},
				Spec: workv1alpha1.WorkSpec{Workload: workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{tc.manifest}}},
				Status: workv1alpha1.WorkStatus{Conditions: []metav1.Condition{{Type: workkeys.ConditionApplied,
					Status: metav1.ConditionTrue, ObservedGeneration: tc.appliedGeneration}},
					ManifestStatuses: []workv1alpha1.ManifestStatus{tc.status}}}
			if got := workHealthy(w, "h1"); got != tc.want {
				t.Errorf("workHealthy = %v, want %v", got, tc.want)
			}
		})
	}
}
