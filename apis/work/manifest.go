package work

import (
	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// FirstManifest is the first object a Work carries (federator's Works carry
// one), nil when it carries none or it does not decode.
func FirstManifest(w *workv1alpha1.Work) *unstructured.Unstructured {
	if len(w.Spec.Workload.Manifests) == 0 {
		return nil
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(w.Spec.Workload.Manifests[0].Raw); err != nil {
		return nil
	}
	return u
}
