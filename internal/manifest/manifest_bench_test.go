package manifest

import (
	"encoding/json"
	"fmt"
	"testing"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"

	"github.com/federator-dev/federator/internal/works"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/federator-dev/federator/internal/fixture"
	"github.com/federator-dev/federator/internal/overrides"
)

// benchContainerCounts are the template sizes: a single-container service
// and one with three sidecars (proxy, log shipper, metrics exporter).
var benchContainerCounts = []int{1, 4}

var benchOrigin = Origin{BindingNamespace: "shop", BindingName: "checkout-deployment",
	BindingID: "7c1f0e0a-9d7e-4c43-8a44-6f0f8b2c1d55", WorkNamespace: "karmada-es-member1",
	WorkName: "checkout-6d5f7b8c9", ConflictResolution: policyv1alpha1.ConflictAbort}

func deployment(tb testing.TB, containers int) *unstructured.Unstructured {
	tb.Helper()
	d, err := fixture.Deployment(containers)
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

func jsonSize(tb testing.TB, u *unstructured.Unstructured) float64 {
	raw, err := json.Marshal(u.Object)
	if err != nil {
		tb.Fatal(err)
	}
	return float64(len(raw))
}

// BenchmarkManifest measures building one member's manifest from the
// template (one call per target cluster per binding reconcile): deep copy,
// Karmada's prune, divided replicas and the identifying labels/annotations.
// template-bytes is the template's JSON size, before pruning.
func BenchmarkManifest(b *testing.B) {
	for _, containers := range benchContainerCounts {
		b.Run(fmt.Sprintf("containers=%d", containers), func(b *testing.B) {
			template := deployment(b, containers)
			target := workv1alpha2.TargetCluster{Name: "member1", Replicas: 2}
			if _, _, err := Render(template, target, true, benchOrigin, overrides.None); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				_, _, _ = Render(template, target, true, benchOrigin, overrides.None)
			}
			b.ReportMetric(jsonSize(b, template), "template-bytes")
		})
	}
}

// BenchmarkWorkUpToDate measures the steady-state comparison the binding
// controller makes before every Work write: the stored Work already carries
// the desired manifest (as the API server returns it, a separate byte slice
// with the same content), so the answer is "up to date" and nothing is
// written. manifest-bytes is the JSON size of the Work's manifest.
func BenchmarkWorkUpToDate(b *testing.B) {
	for _, containers := range benchContainerCounts {
		b.Run(fmt.Sprintf("containers=%d", containers), func(b *testing.B) {
			manifest, _, err := Render(deployment(b, containers), workv1alpha2.TargetCluster{Name: "member1", Replicas: 2}, true, benchOrigin, overrides.None)
			if err != nil {
				b.Fatal(err)
			}
			desired := benchWork(b, manifest)
			stored := benchWork(b, manifest)
			stored.ResourceVersion = "90210"
			stored.Labels[workv1alpha2.WorkPermanentIDLabel] = "3e0b9c8a-2f4d-4b6e-9a1c-5d7e8f9a0b1c"
			if !works.UpToDate(stored, desired.Spec, desired.Annotations) {
				b.Fatal("stored Work is not up to date with the desired one")
			}
			for b.Loop() {
				_ = works.UpToDate(stored, desired.Spec, desired.Annotations)
			}
			b.ReportMetric(float64(len(desired.Spec.Workload.Manifests[0].Raw)), "manifest-bytes")
		})
	}
}

// benchWork is the Work writeWork builds for manifest.
func benchWork(tb testing.TB, manifest *unstructured.Unstructured) *workv1alpha1.Work {
	raw, err := json.Marshal(manifest.Object)
	if err != nil {
		tb.Fatal(err)
	}
	return &workv1alpha1.Work{
		ObjectMeta: metav1.ObjectMeta{Namespace: benchOrigin.WorkNamespace, Name: benchOrigin.WorkName,
			Labels: map[string]string{workv1alpha2.ResourceBindingPermanentIDLabel: benchOrigin.BindingID},
			Annotations: map[string]string{
				workv1alpha2.ResourceBindingNamespaceAnnotationKey: benchOrigin.BindingNamespace,
				workv1alpha2.ResourceBindingNameAnnotationKey:      benchOrigin.BindingName,
				workv1alpha2.ResourceConflictResolutionAnnotation:  workv1alpha2.ResourceConflictResolutionAbort,
			}},
		Spec: workv1alpha1.WorkSpec{
			Workload:           workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}}},
			SuspendDispatching: ptr.To(false),
		},
	}
}
