package works

import (
	"context"
	"errors"
	"strings"
	"testing"

	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/federator-dev/federator/apis/policy"
	workkeys "github.com/federator-dev/federator/apis/work"
)

// A Work left behind by a deleted binding (its deletion listed the Works
// from a cache that had not seen this one) is taken over by the binding of
// the template created again, and only then: a Work of an owner that still
// exists, or of no owner, is refused, as is every Work without
// AdoptOrphans.
func TestEnsureWorkAdoptsOnlyAWorkWhoseOwnerIsGone(t *testing.T) {
	manifest := func(image string) []workv1alpha1.Manifest {
		return []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: []byte(`{"kind":"Deployment","image":"` + image + `"}`)}}}
	}
	// The orphan: held by the old binding at its generation 15.
	orphan := func(owner string) *workv1alpha1.Work {
		return &workv1alpha1.Work{
			ObjectMeta: metav1.ObjectMeta{Namespace: "karmada-es-member1", Name: "web", Labels: map[string]string{"owner": owner},
				Annotations: map[string]string{workkeys.HoldReasonAnnotation: "RolloutStage", workkeys.HoldMessageAnnotation: "held by Rollout chaos/chaos",
					workkeys.BindingGenerationAnnotation: "15"}},
			Spec: workv1alpha1.WorkSpec{SuspendDispatching: ptr.To(true), Workload: workv1alpha1.WorkloadTemplate{Manifests: manifest("v1")}},
		}
	}
	desired := &workv1alpha1.Work{
		ObjectMeta: metav1.ObjectMeta{Namespace: "karmada-es-member1", Name: "web", Labels: map[string]string{"owner": "new"},
			Annotations: map[string]string{workkeys.BindingGenerationAnnotation: "2"}},
		Spec: workv1alpha1.WorkSpec{SuspendDispatching: ptr.To(false), Workload: workv1alpha1.WorkloadTemplate{Manifests: manifest("v2")}},
	}
	gone := func(owners ...string) func(context.Context, string) (bool, error) {
		return func(_ context.Context, owner string) (bool, error) {
			for _, o := range owners {
				if o == owner {
					return true, nil
				}
			}
			return false, nil
		}
	}
	for _, tc := range []struct {
		name    string
		owner   string
		opts    []Option
		changed bool // the Work is written between the read and the write
		wantErr string
		adopted bool
	}{
		{name: "owner gone", owner: "old", opts: []Option{AdoptOrphans(gone("old"))}},
		{name: "owner exists", owner: "old", opts: []Option{AdoptOrphans(gone())}, wantErr: "belongs to another owner"},
		{name: "no owner", owner: "", opts: []Option{AdoptOrphans(gone(""))}, wantErr: "belongs to another owner"},
		{name: "without AdoptOrphans", owner: "old", wantErr: "belongs to another owner"},
		{name: "owner gone, the Work written since the read", owner: "old", opts: []Option{AdoptOrphans(gone("old"))}, changed: true, wantErr: "conflict"},
		{name: "cannot tell", owner: "old", opts: []Option{AdoptOrphans(func(context.Context, string) (bool, error) { return false, errors.New("hub down") })},
			wantErr: "hub down"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			c := fake.NewClientBuilder().WithScheme(policy.NewScheme()).WithObjects(orphan(tc.owner)).
				WithInterceptorFuncs(interceptor.Funcs{Patch: func(ctx context.Context, cl client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
					if tc.changed {
						w := &workv1alpha1.Work{}
						if err := cl.Get(ctx, client.ObjectKeyFromObject(obj), w); err != nil {
							return err
						}
						w.Annotations["someone"] = "else"
						if err := cl.Update(ctx, w); err != nil {
							return err
						}
					}
					return cl.Patch(ctx, obj, patch, opts...)
				}}).Build()
			res, err := EnsureWork(ctx, c, desired, "owner", tc.opts...)
			stored := &workv1alpha1.Work{}
			if gerr := c.Get(ctx, client.ObjectKeyFromObject(desired), stored); gerr != nil {
				t.Fatal(gerr)
			}
			if tc.wantErr != "" {
				if err == nil || (tc.wantErr != "conflict" && !strings.Contains(err.Error(), tc.wantErr)) {
					t.Fatalf("EnsureWork: %v (%s), want an error saying %q", err, res, tc.wantErr)
				}
				if tc.wantErr == "conflict" && !apierrors.IsConflict(err) {
					t.Fatalf("EnsureWork: %v, want a conflict", err)
				}
				if stored.Labels["owner"] != tc.owner || !*stored.Spec.SuspendDispatching {
					t.Fatalf("refused, yet the Work changed: owner %q, suspendDispatching %t", stored.Labels["owner"], *stored.Spec.SuspendDispatching)
				}
				return
			}
			if err != nil || res != Adopted {
				t.Fatalf("EnsureWork: %s, %v; want adopted", res, err)
			}
			if stored.Labels["owner"] != "new" || *stored.Spec.SuspendDispatching || !manifestsUpToDate(stored.Spec, desired.Spec) {
				t.Fatalf("adopted Work: owner %q, suspendDispatching %t, manifests %s; want new, false, v2",
					stored.Labels["owner"], *stored.Spec.SuspendDispatching, stored.Spec.Workload.Manifests[0].Raw)
			}
			for _, k := range []string{workkeys.HoldReasonAnnotation, workkeys.HoldMessageAnnotation} {
				if v, ok := stored.Annotations[k]; ok {
					t.Fatalf("adopted Work keeps the old owner's %s=%q", k, v)
				}
			}
			if g := stored.Annotations[workkeys.BindingGenerationAnnotation]; g != "2" {
				t.Fatalf("adopted Work has binding generation %s, want 2 (the new binding's)", g)
			}
		})
	}
}
