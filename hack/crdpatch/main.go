// Command crdpatch adds to the PropagationPolicy and ClusterPropagationPolicy
// CRDs, which hack/gen-crds.sh generates from Karmada's Go types, what the
// hub serves beyond those types:
//
//   - the suspension proposal's spellings of spec.suspension's fields
//     (suspendDispatching, suspendDispatchingOnClusters), as aliases of the
//     released ones, so a policy written from the proposal is stored as
//     written instead of being pruned into "no suspension";
//   - status.conditions with the status subresource, where the hub says what
//     a person must fix in a policy (a cluster name that is not registered),
//     since Karmada's policy types have no status.
//
// Usage: go run ./hack/crdpatch FILE...   (run by hack/gen-crds.sh)
package main

import (
	"fmt"
	"os"

	"sigs.k8s.io/yaml"

	policykeys "github.com/federator-dev/federator/apis/policy"
)

func main() {
	for _, file := range os.Args[1:] {
		if err := patchFile(file); err != nil {
			fmt.Fprintf(os.Stderr, "crdpatch: %s: %v\n", file, err)
			os.Exit(1)
		}
	}
}

func patchFile(file string) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	crd := map[string]any{}
	if err := yaml.Unmarshal(data, &crd); err != nil {
		return err
	}
	versions, _ := dig(crd, "spec", "versions").([]any)
	if len(versions) != 1 {
		return fmt.Errorf("want one version, found %d", len(versions))
	}
	version, _ := versions[0].(map[string]any)
	schema, _ := dig(version, "schema", "openAPIV3Schema").(map[string]any)
	suspension, _ := dig(schema, "properties", "spec", "properties", "suspension", "properties").(map[string]any)
	if suspension == nil || suspension["dispatching"] == nil || suspension["dispatchingOnClusters"] == nil {
		return fmt.Errorf("no spec.suspension.dispatching / dispatchingOnClusters in the schema: did Karmada rename them?")
	}
	suspension[policykeys.AliasSuspendDispatching] = map[string]any{
		"type": "boolean",
		"description": "SuspendDispatching is an alias of Dispatching: the spelling of Karmada's suspension\n" +
			"proposal (docs/proposals/dispatch-suspension). federator treats the two as one setting;\n" +
			"a policy whose two spellings disagree, or that suspends all clusters in one spelling\n" +
			"and lists clusters in the other, is refused.",
	}
	suspension[policykeys.AliasSuspendDispatchingOnClusters] = map[string]any{
		"type": "object",
		"description": "SuspendDispatchingOnClusters is an alias of DispatchingOnClusters: the spelling of\n" +
			"Karmada's suspension proposal (docs/proposals/dispatch-suspension). federator treats\n" +
			"the two as one setting; a policy whose two lists differ is refused.",
		"properties": map[string]any{
			"clusterNames": map[string]any{
				"description": "ClusterNames is the list of clusters to be selected.",
				"type":        "array",
				"items":       map[string]any{"type": "string"},
			},
		},
	}
	properties, _ := schema["properties"].(map[string]any)
	properties["status"] = map[string]any{
		"description": "Status is federator's, not Karmada's (Karmada's policies have no status): what the hub\n" +
			"found in this policy that a person must act on, as conditions.",
		"type": "object",
		"properties": map[string]any{
			"conditions": map[string]any{
				"description":                "Conditions: ClustersKnown says whether every cluster the policy names is registered.",
				"type":                       "array",
				"items":                      conditionSchema(),
				"x-kubernetes-list-map-keys": []any{"type"},
				"x-kubernetes-list-type":     "map",
			},
		},
	}
	version["subresources"] = map[string]any{"status": map[string]any{}}
	out, err := yaml.Marshal(crd)
	if err != nil {
		return err
	}
	return os.WriteFile(file, append([]byte("---\n"), out...), 0o644)
}

// conditionSchema is metav1.Condition's schema, as controller-gen writes it.
func conditionSchema() map[string]any {
	str := func(description string) map[string]any {
		return map[string]any{"type": "string", "description": description}
	}
	return map[string]any{
		"description": "Condition contains details for one aspect of the current state of this API Resource.",
		"type":        "object",
		"required":    []any{"lastTransitionTime", "message", "reason", "status", "type"},
		"properties": map[string]any{
			"lastTransitionTime": map[string]any{"type": "string", "format": "date-time",
				"description": "lastTransitionTime is the last time the condition transitioned from one status to another."},
			"message": str("message is a human readable message indicating details about the transition."),
			"observedGeneration": map[string]any{"type": "integer", "format": "int64", "minimum": 0,
				"description": "observedGeneration represents the .metadata.generation that the condition was set based upon."},
			"reason": str("reason contains a programmatic identifier indicating the reason for the condition's last transition."),
			"status": map[string]any{"type": "string", "enum": []any{"True", "False", "Unknown"},
				"description": "status of the condition, one of True, False, Unknown."},
			"type": str("type of condition in CamelCase or in foo.example.com/CamelCase."),
		},
	}
}

// dig walks nested maps by key; nil when a key is missing.
func dig(m map[string]any, keys ...string) any {
	var cur any = m
	for _, k := range keys {
		next, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = next[k]
	}
	return cur
}
