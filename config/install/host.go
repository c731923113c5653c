package install

import (
	"encoding/base64"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// A hub that runs no workload controllers (Karmada's own API server,
// `federator up`'s hub, a kind fleet's hub) keeps Deployments as templates,
// so it cannot run the controller's Deployment. The controller then runs in
// another cluster, the host, and reaches the hub with a kubeconfig from a
// Secret, as Karmada's controllers run in a host cluster beside
// karmada-apiserver.
const (
	// HubKubeconfigSecret is the Secret, in Namespace on the host, whose
	// key HubKubeconfigKey is the kubeconfig the controller reaches the
	// hub with.
	HubKubeconfigSecret = "federator-hub-kubeconfig"
	HubKubeconfigKey    = "kubeconfig"
	// hubKubeconfigDir is where the Deployment mounts it.
	hubKubeconfigDir = "/etc/federator/hub"
	// ServiceAccountName is the controller's identity on the hub, whose
	// rights the manifests grant; on the host it needs none.
	ServiceAccountName = "federator-controller"
)

// HostSplit divides objs (from Objects) for a controller that runs in a
// host cluster apart from the hub. The hub keeps the API (CRDs, admission
// policies), its namespaces, and the ServiceAccount and RBAC the controller
// authenticates and is authorized as there; its Lease is taken there too.
// The host gets the namespace, the Deployment, which reads the hub's
// kubeconfig from HubKubeconfigSecret and mounts no token of the host, and
// the metrics Service. The Secret itself (a token minted on the hub) is
// the caller's to write: HubKubeconfigSecretObject.
func HostSplit(objs []*unstructured.Unstructured) (hub, host []*unstructured.Unstructured, err error) {
	deployments := 0
	for _, o := range objs {
		switch {
		case o.GetKind() == "Namespace" && o.GetName() == Namespace:
			hub = append(hub, o)
			host = append(host, o.DeepCopy())
		case o.GetKind() == "Deployment" && o.GetName() == DeploymentName:
			d := o.DeepCopy()
			if err := runAgainstHubKubeconfig(d); err != nil {
				return nil, nil, err
			}
			host = append(host, d)
			deployments++
		case o.GetKind() == "Service" && o.GetNamespace() == Namespace:
			host = append(host, o.DeepCopy())
		default:
			hub = append(hub, o)
		}
	}
	if deployments != 1 {
		return nil, nil, fmt.Errorf("config/install: %d Deployments named %s/%s, want 1", deployments, Namespace, DeploymentName)
	}
	return hub, host, nil
}

// runAgainstHubKubeconfig makes the controller Deployment d read the hub's
// kubeconfig from HubKubeconfigSecret. Its Lease stays in Namespace, on
// the hub ($POD_NAMESPACE names the same namespace there).
func runAgainstHubKubeconfig(d *unstructured.Unstructured) error {
	spec, _, err := unstructured.NestedMap(d.Object, "spec", "template", "spec")
	if err != nil {
		return fmt.Errorf("config/install: Deployment %s: %w", DeploymentName, err)
	}
	delete(spec, "serviceAccountName")
	spec["automountServiceAccountToken"] = false
	volumes, _ := spec["volumes"].([]any)
	spec["volumes"] = append(volumes, map[string]any{
		"name":   "hub-kubeconfig",
		"secret": map[string]any{"secretName": HubKubeconfigSecret},
	})
	containers, _ := spec["containers"].([]any)
	found := false
	for _, c := range containers {
		c, ok := c.(map[string]any)
		if !ok || c["name"] != ContainerName {
			continue
		}
		found = true
		args, _ := c["args"].([]any)
		c["args"] = append(args, "--kubeconfig="+hubKubeconfigDir+"/"+HubKubeconfigKey)
		mounts, _ := c["volumeMounts"].([]any)
		c["volumeMounts"] = append(mounts, map[string]any{
			"name": "hub-kubeconfig", "mountPath": hubKubeconfigDir, "readOnly": true,
		})
	}
	if !found {
		return fmt.Errorf("config/install: Deployment %s has no container %s", DeploymentName, ContainerName)
	}
	return unstructured.SetNestedMap(d.Object, spec, "spec", "template", "spec")
}

// HubKubeconfigSecretObject is the Secret the host's Deployment reads the
// hub's kubeconfig from.
func HubKubeconfigSecretObject(kubeconfig []byte) *unstructured.Unstructured {
	s := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1",
		"kind":       "Secret",
		"metadata": map[string]any{
			"name":      HubKubeconfigSecret,
			"namespace": Namespace,
			"labels":    map[string]any{"app.kubernetes.io/name": "federator"},
		},
		"type": "Opaque",
		"data": map[string]any{HubKubeconfigKey: base64.StdEncoding.EncodeToString(kubeconfig)},
	}}
	return s
}
