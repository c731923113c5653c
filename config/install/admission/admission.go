// Package admission owns the admission policies the hub enforces on
// federator's and Karmada's kinds (ValidatingAdmissionPolicies, so no
// webhook server is needed).
//
// The files are also part of config/install's kustomization: this
// directory's kustomization.yaml lists every one (config/install's test
// checks it; `make kustomizations` rewrites it) and is not embedded here.
package admission

import (
	"embed"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/federator-dev/federator/pkg/yamldocs"
)

// SuspensionPolicyName names the ValidatingAdmissionPolicy in
// suspension.yaml; the API server names it in every refusal.
const SuspensionPolicyName = "federator-propagation-suspension"

// SuspensionAnnotationsPolicyName names the ValidatingAdmissionPolicy in
// suspension-annotations.yaml.
const SuspensionAnnotationsPolicyName = "federator-suspension-annotations"

// DeletionProtectionPolicyName names the ValidatingAdmissionPolicy in
// deletion-protection.yaml.
const DeletionProtectionPolicyName = "federator-deletion-protection"

// AgentClusterPolicyName names the ValidatingAdmissionPolicy in
// cluster-agent.yaml: what a Pull cluster's agent may write of its Cluster.
const AgentClusterPolicyName = "federator-agent-cluster"

// GateRequestsPolicyName names the ValidatingAdmissionPolicy in
// gate-requests.yaml: a Gate request written by hand is an RFC 3339 time,
// and not one the request it follows would leave ignored.
const GateRequestsPolicyName = "federator-gate-requests"

//go:embed *.yaml
var manifests embed.FS

// Objects returns the admission objects to apply on the hub: those of
// every YAML file here but the kustomization, so a policy added to the
// directory is applied by the hub's setup as by `kubectl apply -k`.
func Objects() ([]*unstructured.Unstructured, error) {
	entries, err := manifests.ReadDir(".")
	if err != nil {
		return nil, err
	}
	var all []*unstructured.Unstructured
	for _, entry := range entries {
		file := entry.Name()
		if file == "kustomization.yaml" {
			continue
		}
		raw, err := manifests.ReadFile(file)
		if err != nil {
			return nil, err
		}
		objs, err := yamldocs.Decode(raw)
		if err != nil {
			return nil, fmt.Errorf("config/install/admission/%s: %w", file, err)
		}
		all = append(all, objs...)
	}
	return all, nil
}
