package dispatch

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	policykeys "github.com/federator-dev/federator/apis/policy"
	workkeys "github.com/federator-dev/federator/apis/work"
)

// benchContainerCounts are the template sizes: a single-container service
// and one with three sidecars (proxy, log shipper, metrics exporter).
var benchContainerCounts = []int{1, 4}

// benchManifest is a Deployment manifest as a Work carries it to a member
// (the binding package's Manifest output for a template applied with
// kubectl): Karmada's identifying labels and annotations, the
// last-applied-configuration annotation, and a pod spec with containers
// containers (env, ports, resources, probes, volume mounts), volumes,
// affinity, tolerations and topology spread constraints; no uid,
// resourceVersion, managedFields or status.
func benchManifest(tb testing.TB, containers int) *unstructured.Unstructured {
	tb.Helper()
	labels := map[string]string{
		"app.kubernetes.io/name": "checkout", "app.kubernetes.io/part-of": "shop",
		"app.kubernetes.io/version": "2.14.3", "team": "payments",
	}
	var cs []corev1.Container
	for i := range containers {
		name := "checkout"
		if i > 0 {
			name = fmt.Sprintf("sidecar-%d", i)
		}
		c := corev1.Container{
			Name:            name,
			Image:           fmt.Sprintf("registry.example.com/shop/%s:2.14.3@sha256:%064d", name, i),
			ImagePullPolicy: corev1.PullIfNotPresent,
			Args:            []string{"--config=/etc/checkout/config.yaml", "--log-level=info", "--metrics-addr=:9090"},
			Ports: []corev1.ContainerPort{
				{Name: "http", ContainerPort: int32(8080 + i), Protocol: corev1.ProtocolTCP},
				{Name: "metrics", ContainerPort: int32(9090 + i), Protocol: corev1.ProtocolTCP},
			},
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("256Mi")},
				Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("512Mi")},
			},
			LivenessProbe: &corev1.Probe{
				ProbeHandler:        corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString("http")}},
				InitialDelaySeconds: 10, PeriodSeconds: 10, TimeoutSeconds: 2, FailureThreshold: 3, SuccessThreshold: 1,
			},
			ReadinessProbe: &corev1.Probe{
				ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/readyz", Port: intstr.FromString("http")}},
				PeriodSeconds: 5, TimeoutSeconds: 2, FailureThreshold: 3, SuccessThreshold: 1,
			},
			VolumeMounts: []corev1.VolumeMount{
				{Name: "config", MountPath: "/etc/checkout", ReadOnly: true},
				{Name: "tls", MountPath: "/etc/tls", ReadOnly: true},
			},
			SecurityContext: &corev1.SecurityContext{
				RunAsNonRoot: ptr.To(true), AllowPrivilegeEscalation: ptr.To(false), ReadOnlyRootFilesystem: ptr.To(true),
				Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
			},
			TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: corev1.TerminationMessageReadFile,
		}
		for j := range 8 {
			c.Env = append(c.Env, corev1.EnvVar{Name: fmt.Sprintf("CHECKOUT_SETTING_%d", j), Value: fmt.Sprintf("value-%d", j)})
		}
		c.Env = append(c.Env,
			corev1.EnvVar{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.name"}}},
			corev1.EnvVar{Name: "DB_PASSWORD", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: "checkout-db"}, Key: "password"}}})
		cs = append(cs, c)
	}

	d := &appsv1.Deployment{
		TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "checkout", Namespace: "shop", Labels: labels,
			Annotations: map[string]string{"meta.helm.sh/release-name": "checkout", "meta.helm.sh/release-namespace": "shop"},
		},
		Spec: appsv1.DeploymentSpec{
			Replicas:                ptr.To(int32(6)),
			RevisionHistoryLimit:    ptr.To(int32(10)),
			ProgressDeadlineSeconds: ptr.To(int32(600)),
			Selector:                &metav1.LabelSelector{MatchLabels: map[string]string{"app.kubernetes.io/name": "checkout"}},
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType, RollingUpdate: &appsv1.RollingUpdateDeployment{
				MaxUnavailable: ptr.To(intstr.FromString("25%")), MaxSurge: ptr.To(intstr.FromString("25%"))}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{
					"prometheus.io/scrape": "true", "prometheus.io/port": "9090", "checksum/config": fmt.Sprintf("%064x", 42)}},
				Spec: corev1.PodSpec{
					ServiceAccountName:            "checkout",
					TerminationGracePeriodSeconds: ptr.To(int64(30)),
					DNSPolicy:                     corev1.DNSClusterFirst,
					RestartPolicy:                 corev1.RestartPolicyAlways,
					SchedulerName:                 corev1.DefaultSchedulerName,
					SecurityContext:               &corev1.PodSecurityContext{RunAsUser: ptr.To(int64(10001)), FSGroup: ptr.To(int64(10001))},
					Containers:                    cs,
					Volumes: []corev1.Volume{
						{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
							LocalObjectReference: corev1.LocalObjectReference{Name: "checkout-config"}, DefaultMode: ptr.To(int32(0o420))}}},
						{Name: "tls", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "checkout-tls", DefaultMode: ptr.To(int32(0o420))}}},
					},
					Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
						PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 100, PodAffinityTerm: corev1.PodAffinityTerm{
							LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app.kubernetes.io/name": "checkout"}},
							TopologyKey:   "kubernetes.io/hostname"}}}}},
					Tolerations: []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "shop", Effect: corev1.TaintEffectNoSchedule}},
					TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "topology.kubernetes.io/zone",
						WhenUnsatisfiable: corev1.ScheduleAnyway, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app.kubernetes.io/name": "checkout"}}}},
				},
			},
		},
	}
	lastApplied, err := json.Marshal(d)
	if err != nil {
		tb.Fatal(err)
	}
	d.Annotations["kubectl.kubernetes.io/last-applied-configuration"] = string(lastApplied)
	// What Manifest adds: divided replicas and Karmada's identifying
	// labels and annotations.
	d.Spec.Replicas = ptr.To(int32(2))
	d.Labels[workkeys.ManagedLabel] = workkeys.ManagedLabelValue
	d.Labels[workv1alpha2.ResourceBindingPermanentIDLabel] = "7c1f0e0a-9d7e-4c43-8a44-6f0f8b2c1d55"
	d.Annotations[workv1alpha2.ResourceBindingNamespaceAnnotationKey] = "shop"
	d.Annotations[workv1alpha2.ResourceBindingNameAnnotationKey] = "checkout-deployment"
	d.Annotations[workv1alpha2.ResourceTemplateUIDAnnotation] = "0b4f5e3a-1111-2222-3333-444455556666"
	d.Annotations[workv1alpha2.WorkNamespaceAnnotation] = "karmada-es-member1"
	d.Annotations[workv1alpha2.WorkNameAnnotation] = "checkout-6d5f7b8c9"
	d.Annotations[workv1alpha2.ResourceConflictResolutionAnnotation] = workv1alpha2.ResourceConflictResolutionAbort

	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(d)
	if err != nil {
		tb.Fatal(err)
	}
	return &unstructured.Unstructured{Object: obj}
}

// benchMemberObject is the member's copy of desired as a Get returns it after
// federator applied it: the applied-hash annotation, the fields the member's
// API server and Deployment controller add (uid, resourceVersion,
// generation, managedFields, the revision annotation, status).
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
