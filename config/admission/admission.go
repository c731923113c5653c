// Package admission owns the admission policies the hub enforces on
// federator's and Karmada's kinds (ValidatingAdmissionPolicies, so no
// webhook server is needed).
package admission

import (
	_ "embed"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/federator-dev/federator/pkg/yamldocs"
)

// SuspensionPolicyName names the ValidatingAdmissionPolicy in
// suspension.yaml; the API server names it in every refusal.
const SuspensionPolicyName = "federator-propagation-suspension"

//go:embed suspension.yaml
var suspension []byte

// Objects returns the admission objects to apply on the hub.
func Objects() ([]*unstructured.Unstructured, error) {
	objs, err := yamldocs.Decode(suspension)
	if err != nil {
		return nil, fmt.Errorf("config/admission/suspension.yaml: %w", err)
	}
	return objs, nil
}
