package cli

import (
	"encoding/json"
	"testing"

	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/federator-dev/federator/internal/manifest"
	"github.com/federator-dev/federator/internal/overrides"
)

// A Work carries the template when its manifest is what the hub makes of
// the template now: for a Pull cluster too, whose manifest also carries the
// template's generation (get rollout read such a Work as never current, and
// its member Pending for good).
func TestCarriesTemplateOfAPullCluster(t *testing.T) {
	tpl := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"namespace": "demo", "name": "web", "uid": "u1", "generation": int64(2)},
		"spec":     map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "web", "image": "nginx:1.25"}}}}},
	}}
	rb := &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "web-deployment",
		Labels: map[string]string{workv1alpha2.ResourceBindingPermanentIDLabel: "id"}}}
	b := bindingOf(rb)
	target := workv1alpha2.TargetCluster{Name: "member2"}
	for _, pull := range []bool{false, true} {
		m, _, err := manifest.Render(tpl, target, false, manifest.Origin{BindingNamespace: "demo", BindingName: "web-deployment",
			BindingID: "id", WorkNamespace: "karmada-es-member2", WorkName: "w", Pull: pull}, overrides.None)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := json.Marshal(m.Object)
		if err != nil {
			t.Fatal(err)
		}
		work := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: "karmada-es-member2", Name: "w"},
			Spec: workv1alpha1.WorkSpec{Workload: workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}}}}}
		if !carriesTemplate(b, tpl, target, work, overrides.None) {
			t.Errorf("pull=%v: the Work made from the template now does not carry it", pull)
		}
		newer := tpl.DeepCopy()
		newer.SetGeneration(3)
		if err := unstructured.SetNestedSlice(newer.Object, []any{map[string]any{"name": "web", "image": "nginx:1.26"}},
			"spec", "template", "spec", "containers"); err != nil {
			t.Fatal(err)
		}
		if carriesTemplate(b, newer, target, work, overrides.None) {
			t.Errorf("pull=%v: the Work of generation 2 carries the template of generation 3", pull)
		}
	}
}
