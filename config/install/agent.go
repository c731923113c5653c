package install

import (
	"fmt"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
)

// A Pull member runs `federator agent` (docs/pull-mode.md) from these
// manifests, which `federator join NAME --mode pull` writes into it (or
// prints, --export). They follow karmadactl register's: the agent's
// Namespace, ServiceAccount, a ClusterRole over everything in the member
// and its binding, the Secret of the hub's kubeconfig, the Deployment.
const (
	// AgentName names, in the member, the agent's Deployment,
	// ServiceAccount, ClusterRole and ClusterRoleBinding; its container
	// is AgentContainerName. (karmadactl register: karmada-agent.)
	AgentName          = "federator-agent"
	AgentContainerName = "agent"
	// AgentHubKubeconfigSecret is the Secret, in Namespace in the member,
	// whose key AgentHubKubeconfigKey is the kubeconfig the agent reaches
	// the hub with: karmadactl register's names, mounted where it mounts
	// them.
	AgentHubKubeconfigSecret = "karmada-kubeconfig"
	AgentHubKubeconfigKey    = "karmada-kubeconfig"
	agentHubKubeconfigDir    = "/etc/kubeconfig"
	// AgentProbePort serves /healthz and /readyz (karmada-agent's port),
	// AgentMetricsPort the metrics, as the agent defaults in a cluster.
	AgentProbePort   = 10357
	AgentMetricsPort = 8080
	// DefaultAgentReplicas take turns by a Lease in the member, as the
	// controller's replicas do on the hub.
	DefaultAgentReplicas = 2
)

// AgentOptions say whom an agent serves and how it reaches the hub.
type AgentOptions struct {
	// ClusterName is the Cluster the agent serves (--cluster-name).
	ClusterName string
	// Image runs `federator agent`: the federator image.
	Image string
	// Replicas of the Deployment; DefaultAgentReplicas when 0.
	Replicas int32
	// HubKubeconfig is the kubeconfig the agent reaches the hub with, put
	// into the Secret.
	HubKubeconfig []byte
	// ClusterAPIEndpoint, when not empty, is the member's address the
	// agent registers (--cluster-api-endpoint); else the in-cluster one.
	ClusterAPIEndpoint string
}

// AgentLabels are on every object of the agent's manifests; the
// Deployment selects its pods by them.
func AgentLabels() map[string]string {
	return map[string]string{"app.kubernetes.io/name": "federator", "app.kubernetes.io/component": "agent"}
}

// AgentArgs are the arguments of `federator` in the agent's container.
func AgentArgs(o AgentOptions) []string {
	args := []string{"agent",
		"--cluster-name=" + o.ClusterName,
		"--karmada-kubeconfig=" + agentHubKubeconfigDir + "/" + AgentHubKubeconfigKey,
		"--leader-elect=true",
		"--leader-elect-resource-namespace=" + Namespace,
		"--metrics-bind-address=:" + strconv.Itoa(AgentMetricsPort),
		"--health-probe-bind-address=:" + strconv.Itoa(AgentProbePort),
	}
	if o.ClusterAPIEndpoint != "" {
		args = append(args, "--cluster-api-endpoint="+o.ClusterAPIEndpoint)
	}
	return args
}

// AgentObjects are the manifests of the agent of o.ClusterName, in the
// order they are applied: the namespace first, the Deployment last, once
// the rights and the Secret it runs with are there.
//
// The agent applies whatever its Works hold (any kind, RBAC and CRDs
// among them, and granting a role takes holding its rights), so it gets
// every right in the member, as karmada-agent's ClusterRole gives it. Its
// rights on the hub are what keeps it to its own cluster
// (membership.RegisterPull).
func AgentObjects(o AgentOptions) ([]*unstructured.Unstructured, error) {
	switch {
	case o.ClusterName == "":
		return nil, fmt.Errorf("the agent's manifests need the name of the cluster it serves")
	case o.Image == "":
		return nil, fmt.Errorf("the agent's manifests need an image")
	case o.Replicas < 0:
		return nil, fmt.Errorf("the agent's replicas: %d, want 1 or more", o.Replicas)
	}
	replicas := o.Replicas
	if replicas == 0 {
		replicas = DefaultAgentReplicas
	}
	meta := func(namespace, name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: AgentLabels()}
	}
	namespace := &corev1.Namespace{ObjectMeta: meta("", Namespace)}
	// The namespace may hold other things (federator's own controller, in
	// a cluster that is also its host): it carries only the name label.
	namespace.Labels = map[string]string{"app.kubernetes.io/name": "federator"}
	sa := &corev1.ServiceAccount{ObjectMeta: meta(Namespace, AgentName)}
	role := &rbacv1.ClusterRole{ObjectMeta: meta("", AgentName), Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}},
		{NonResourceURLs: []string{"*"}, Verbs: []string{"get"}},
	}}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: meta("", AgentName),
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: AgentName},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: Namespace, Name: AgentName}}}
	secret := &corev1.Secret{ObjectMeta: meta(Namespace, AgentHubKubeconfigSecret), Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{AgentHubKubeconfigKey: o.HubKubeconfig}}
	deployment := agentDeployment(o, replicas)
	var out []*unstructured.Unstructured
	for _, obj := range []runtime.Object{namespace, sa, role, binding, secret, deployment} {
		u, err := toUnstructured(obj)
		if err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, nil
}

func agentDeployment(o AgentOptions, replicas int32) *appsv1.Deployment {
	probe := func(path string) *corev1.Probe {
		return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromString("http-probes")}}}
	}
	// karmada-agent's liveness probe.
	liveness := probe("/healthz")
	liveness.InitialDelaySeconds, liveness.PeriodSeconds, liveness.TimeoutSeconds, liveness.FailureThreshold = 15, 15, 5, 3
	// Not ready while its hub caches do not watch the hub.
	readiness := probe("/readyz")
	readiness.PeriodSeconds = 5
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: AgentName, Labels: AgentLabels()},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: AgentLabels()},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: AgentLabels()},
				Spec: corev1.PodSpec{
					ServiceAccountName: AgentName,
					SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true),
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
					Containers: []corev1.Container{{
						Name:            AgentContainerName,
						Image:           o.Image,
						ImagePullPolicy: corev1.PullIfNotPresent,
						Args:            AgentArgs(o),
						Ports: []corev1.ContainerPort{
							{Name: "http-metrics", ContainerPort: AgentMetricsPort, Protocol: corev1.ProtocolTCP},
							{Name: "http-probes", ContainerPort: AgentProbePort, Protocol: corev1.ProtocolTCP},
						},
						LivenessProbe:  liveness,
						ReadinessProbe: readiness,
						Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
							corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")}},
						SecurityContext: &corev1.SecurityContext{RunAsNonRoot: ptr.To(true), ReadOnlyRootFilesystem: ptr.To(true),
							AllowPrivilegeEscalation: ptr.To(false), Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
							SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
						VolumeMounts: []corev1.VolumeMount{
							{Name: "hub-kubeconfig", MountPath: agentHubKubeconfigDir, ReadOnly: true},
							// The binary writes a cache directory under /tmp at start.
							{Name: "tmp", MountPath: "/tmp"},
						},
					}},
					Volumes: []corev1.Volume{
						{Name: "hub-kubeconfig", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: AgentHubKubeconfigSecret}}},
						{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
					},
				},
			},
		},
	}
}

// toUnstructured is obj with its kind, without the empty fields a typed
// object always has (creationTimestamp: null, status: {}) that a person
// would not write.
func toUnstructured(obj runtime.Object) (*unstructured.Unstructured, error) {
	gvks, _, err := clientgoscheme.Scheme.ObjectKinds(obj)
	if err != nil {
		return nil, err
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(gvks[0])
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	unstructured.RemoveNestedField(u.Object, "spec", "template", "metadata", "creationTimestamp")
	unstructured.RemoveNestedField(u.Object, "spec", "strategy")
	unstructured.RemoveNestedField(u.Object, "status")
	return u, nil
}
