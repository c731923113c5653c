package conditions

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// Of reads status.conditions of an object read unstructured (a kind whose
// Go type has no status, such as Karmada's policies, whose CRDs the hub
// extends); entries that are not conditions are skipped.
func Of(obj *unstructured.Unstructured) []metav1.Condition {
	raw, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	var conds []metav1.Condition
	for _, r := range raw {
		var c metav1.Condition
		if m, ok := r.(map[string]any); ok && runtime.DefaultUnstructuredConverter.FromUnstructured(m, &c) == nil {
			conds = append(conds, c)
		}
	}
	return conds
}

// SetOn writes conds into obj's status.conditions.
func SetOn(obj *unstructured.Unstructured, conds []metav1.Condition) error {
	raw := make([]any, 0, len(conds))
	for i := range conds {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&conds[i])
		if err != nil {
			return err
		}
		raw = append(raw, m)
	}
	return unstructured.SetNestedSlice(obj.Object, raw, "status", "conditions")
}
