package works

import (
	"testing"

	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

func TestUpToDate(t *testing.T) {
	spec := func(manifest string, suspend bool) workv1alpha1.WorkSpec {
		return workv1alpha1.WorkSpec{SuspendDispatching: ptr.To(suspend), Workload: workv1alpha1.WorkloadTemplate{
			Manifests: []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: []byte(manifest)}}}}}
	}
	held := map[string]string{"work.federator.dev/hold-reason": "SuspendDispatching", "work.federator.dev/hold-message": "m"}
	cases := []struct {
		name        string
		stored      map[string]string
		storedSpec  workv1alpha1.WorkSpec
		annotations map[string]string
		spec        workv1alpha1.WorkSpec
		want        bool
	}{
		{"same bytes", nil, spec(`{"a":1}`, false), nil, spec(`{"a":1}`, false), true},
		{"same content, re-encoded", nil, spec(`{"a": 1, "b": [1]}`, false), nil, spec(`{"b":[1],"a":1}`, false), true},
		{"other content", nil, spec(`{"a":1}`, false), nil, spec(`{"a":2}`, false), false},
		{"held now", nil, spec(`{"a":1}`, false), held, spec(`{"a":1}`, true), false},
		{"still held for the same reason", held, spec(`{"a":1}`, true), held, spec(`{"a":1}`, true), true},
		{"released: a stored hold annotation must go", held, spec(`{"a":1}`, false), nil, spec(`{"a":1}`, false), false},
		{"the last override policy deleted: the record of applied overrides must go",
			map[string]string{"policy.karmada.io/applied-overrides": `[{"policyName":"canary"}]`}, spec(`{"a":1}`, false), nil, spec(`{"a":1}`, false), false},
		{"a cluster override policy deleted: its record must go",
			map[string]string{"policy.karmada.io/applied-cluster-overrides": `[{"policyName":"canary"}]`}, spec(`{"a":1}`, false), nil, spec(`{"a":1}`, false), false},
		{"only the template's resourceVersion moved (its status changed): no write",
			map[string]string{"work.federator.dev/template-version": "37"}, spec(`{"a":1}`, false),
			map[string]string{"work.federator.dev/template-version": "41"}, spec(`{"a":1}`, false), true},
		{"only what the member runs moved (it applied the Work): no write",
			map[string]string{"work.federator.dev/member-runs": `{"images":["nginx:1.25"]}`}, spec(`{"a":1}`, false),
			map[string]string{"work.federator.dev/member-runs": `{"images":["nginx:1.26"]}`}, spec(`{"a":1}`, false), true},
		{"what the member runs, recorded first: no write",
			nil, spec(`{"a":1}`, false),
			map[string]string{"work.federator.dev/member-runs": `{"images":["nginx:1.26"]}`}, spec(`{"a":1}`, false), true},
		{"an annotation of someone else's is left alone", map[string]string{"note": "x"}, spec(`{"a":1}`, false), nil, spec(`{"a":1}`, false), true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Annotations: tc.stored}, Spec: tc.storedSpec}
			if got := UpToDate(w, tc.spec, tc.annotations); got != tc.want {
				t.Errorf("UpToDate = %v, want %v", got, tc.want)
			}
		})
	}
}
