package binding

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// benchContainerCounts are the template sizes: a single-container service
// and one with three sidecars (proxy, log shipper, metrics exporter).
var benchContainerCounts = []int{1, 4}

// benchDeployment is a Deployment template as the hub stores it after
// `kubectl apply` and a status update from federator: managedFields,
// last-applied-configuration, uid, resourceVersion, generation and status,
// which Manifest must prune, and a pod spec with containers containers
// (env, ports, resources, probes, volume mounts), volumes, affinity,
// tolerations and topology spread constraints.
func benchDeployment(tb testing.TB, containers int) *unstructured.Unstructured {
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
	d.Annotations["deployment.kubernetes.io/revision"] = "3"
	d.UID = "0b4f5e3a-1111-2222-3333-444455556666"
	d.ResourceVersion = "812345"
	d.Generation = 7
	d.CreationTimestamp = metav1.NewTime(time.Date(2026, 1, 12, 10, 0, 0, 0, time.UTC))
	d.ManagedFields = []metav1.ManagedFieldsEntry{
		{Manager: "kubectl-client-side-apply", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "apps/v1",
			Time: ptr.To(d.CreationTimestamp), FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: benchFieldsV1(containers)}},
		{Manager: "federator", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "apps/v1", Subresource: "status",
			Time: ptr.To(d.CreationTimestamp), FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(
				`{"f:status":{"f:availableReplicas":{},"f:observedGeneration":{},"f:readyReplicas":{},"f:replicas":{},"f:updatedReplicas":{}}}`)}},
	}
	d.Status = appsv1.DeploymentStatus{ObservedGeneration: 7, Replicas: 6, UpdatedReplicas: 6, ReadyReplicas: 6, AvailableReplicas: 6}

	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(d)
	if err != nil {
		tb.Fatal(err)
	}
	return &unstructured.Unstructured{Object: obj}
}

// benchFieldsV1 is a managedFields entry of the size kubectl writes for the
// template: one field set per container plus the rest of the spec.
func benchFieldsV1(containers int) []byte {
	fields := map[string]any{}
	for i := range containers {
		fields[fmt.Sprintf(`k:{"name":"c%d"}`, i)] = map[string]any{
			".": map[string]any{}, "f:args": map[string]any{}, "f:env": map[string]any{}, "f:image": map[string]any{},
			"f:imagePullPolicy": map[string]any{}, "f:livenessProbe": map[string]any{}, "f:name": map[string]any{},
			"f:ports": map[string]any{}, "f:readinessProbe": map[string]any{}, "f:resources": map[string]any{},
			"f:securityContext": map[string]any{}, "f:volumeMounts": map[string]any{},
		}
	}
	raw, _ := json.Marshal(map[string]any{"f:metadata": map[string]any{"f:annotations": map[string]any{}, "f:labels": map[string]any{}},
		"f:spec": map[string]any{"f:replicas": map[string]any{}, "f:selector": map[string]any{}, "f:strategy": map[string]any{},
			"f:template": map[string]any{"f:spec": map[string]any{"f:containers": fields, "f:volumes": map[string]any{}}}}})
	return raw
}

var benchOrigin = Origin{BindingNamespace: "shop", BindingName: "checkout-deployment",
	BindingID: "7c1f0e0a-9d7e-4c43-8a44-6f0f8b2c1d55", WorkNamespace: "karmada-es-member1",
	WorkName: "checkout-6d5f7b8c9", ConflictResolution: policyv1alpha1.ConflictAbort}

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
			template := benchDeployment(b, containers)
			target := workv1alpha2.TargetCluster{Name: "member1", Replicas: 2}
			if _, err := Manifest(template, target, true, benchOrigin); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				_, _ = Manifest(template, target, true, benchOrigin)
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
			manifest, err := Manifest(benchDeployment(b, containers), workv1alpha2.TargetCluster{Name: "member1", Replicas: 2}, true, benchOrigin)
			if err != nil {
				b.Fatal(err)
			}
			desired := benchWork(b, manifest)
			stored := benchWork(b, manifest)
			stored.ResourceVersion = "90210"
			stored.Labels[workv1alpha2.WorkPermanentIDLabel] = "3e0b9c8a-2f4d-4b6e-9a1c-5d7e8f9a0b1c"
			if !workUpToDate(stored, desired.Spec, desired.Annotations) {
				b.Fatal("stored Work is not up to date with the desired one")
			}
			for b.Loop() {
				_ = workUpToDate(stored, desired.Spec, desired.Annotations)
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
