package dispatch

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	policykeys "github.com/federator-dev/federator/apis/policy"
	workkeys "github.com/federator-dev/federator/apis/work"
	"github.com/federator-dev/federator/internal/fixture"
	"github.com/federator-dev/federator/internal/manifest"
	"github.com/federator-dev/federator/internal/overrides"
)

// benchContainerCounts are the template sizes: a single-container service
// and one with three sidecars (proxy, log shipper, metrics exporter).
var benchContainerCounts = []int{1, 4}

// benchManifest is a Deployment manifest as a Work carries it to a member:
// the binding package's Manifest output for a realistic template.
func benchManifest(tb testing.TB, containers int) *unstructured.Unstructured {
	tb.Helper()
	template, err := fixture.Deployment(containers)
	if err != nil {
		tb.Fatal(err)
	}
	m, _, err := manifest.Render(template, workv1alpha2.TargetCluster{Name: "member1", Replicas: 2}, true, manifest.Origin{
		BindingNamespace: "shop", BindingName: "checkout-deployment", BindingID: "7c1f0e0a-9d7e-4c43-8a44-6f0f8b2c1d55",
		WorkNamespace: "karmada-es-member1", WorkName: "checkout-6d5f7b8c9"}, overrides.None)
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

func benchMemberObject(tb testing.TB, desired *unstructured.Unstructured, hash string) *unstructured.Unstructured {
	tb.Helper()
	existing := desired.DeepCopy()
	annotations := existing.GetAnnotations()
	annotations[workkeys.AppliedHashAnnotation] = hash
	annotations["deployment.kubernetes.io/revision"] = "3"
	existing.SetAnnotations(annotations)
	existing.SetUID("5d2a7c4e-aaaa-bbbb-cccc-ddddeeeeffff")
	existing.SetResourceVersion("4412")
	existing.SetGeneration(3)
	existing.SetCreationTimestamp(metav1.NewTime(time.Date(2026, 1, 12, 10, 0, 5, 0, time.UTC)))
	now := metav1.NewTime(time.Date(2026, 1, 12, 10, 0, 5, 0, time.UTC))
	existing.SetManagedFields([]metav1.ManagedFieldsEntry{
		{Manager: policykeys.FieldManager, Operation: metav1.ManagedFieldsOperationApply, APIVersion: "apps/v1", Time: &now,
			FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:annotations":{},"f:labels":{}},"f:spec":{"f:replicas":{},"f:selector":{},"f:strategy":{},"f:template":{}}}`)}},
		{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "apps/v1", Time: &now,
			Subresource: "status", FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:status":{"f:availableReplicas":{},"f:conditions":{},"f:observedGeneration":{},"f:readyReplicas":{},"f:replicas":{},"f:updatedReplicas":{}}}`)}},
	})
	status, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&appsv1.DeploymentStatus{
		ObservedGeneration: 3, Replicas: 2, UpdatedReplicas: 2, ReadyReplicas: 2, AvailableReplicas: 2,
		Conditions: []appsv1.DeploymentCondition{
			{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable",
				Message: "Deployment has minimum availability.", LastUpdateTime: now, LastTransitionTime: now},
			{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetAvailable",
				Message: `ReplicaSet "checkout-6d5f7b8c9" has successfully progressed.`, LastUpdateTime: now, LastTransitionTime: now},
		},
	})
	if err != nil {
		tb.Fatal(err)
	}
	existing.Object["status"] = status
	return existing
}

// BenchmarkDesiredHash measures hashing a member manifest (done once per
// manifest per Work reconcile, before deciding whether to write).
// manifest-bytes is the manifest's JSON size.
func BenchmarkDesiredHash(b *testing.B) {
	for _, containers := range benchContainerCounts {
		b.Run(fmt.Sprintf("containers=%d", containers), func(b *testing.B) {
			manifest := benchManifest(b, containers)
			if _, err := desiredHash(manifest); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				_, _ = desiredHash(manifest)
			}
			raw, _ := json.Marshal(manifest.Object)
			b.ReportMetric(float64(len(raw)), "manifest-bytes")
		})
	}
}

// BenchmarkWriteDecision measures the decision made for one manifest against
// what the member holds, for a Deployment with 4 containers:
//   - member=unchanged: the steady state, the member object carries the same
//     hash, nothing is written;
//   - member=changed: the template changed, the member object is rewritten;
//   - member=absent: the object is created;
//   - member=foreign: an object the hub did not create, refused with an error.
func BenchmarkWriteDecision(b *testing.B) {
	desired := benchManifest(b, 4)
	hash, err := desiredHash(desired)
	if err != nil {
		b.Fatal(err)
	}
	foreign := benchMemberObject(b, desired, hash)
	foreignLabels := foreign.GetLabels()
	delete(foreignLabels, workkeys.ManagedLabel)
	foreign.SetLabels(foreignLabels)
	for _, tc := range []struct {
		member    string
		existing  *unstructured.Unstructured
		wantWrite bool
		wantErr   bool
	}{
		{"unchanged", benchMemberObject(b, desired, hash), false, false},
		{"changed", benchMemberObject(b, desired, "0123456789abcdef"), true, false},
		{"absent", nil, true, false},
		{"foreign", foreign, false, true},
	} {
		b.Run("member="+tc.member, func(b *testing.B) {
			write, err := writeDecision(desired, tc.existing, hash, "member1")
			if write != tc.wantWrite || (err != nil) != tc.wantErr {
				b.Fatalf("writeDecision = %v, %v; want write %v, error %v", write, err, tc.wantWrite, tc.wantErr)
			}
			for b.Loop() {
				_, _ = writeDecision(desired, tc.existing, hash, "member1")
			}
		})
	}
}
