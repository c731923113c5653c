package detector

import (
	"context"
	"strings"
	"testing"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/federator-dev/federator/apis/policy"
	"github.com/federator-dev/federator/internal/fixture"
)

// The policy controller on a hub whose policy CRDs serve no status (a
// Karmada hub's own CRDs the controller may not update). Where they serve
// it, the fake client cannot show it (Karmada's Go type has no status); the
// e2e spec "a hub with Karmada's own CRDs" does.
func TestPolicyStatus(t *testing.T) {
	newPolicy := func() *policyv1alpha1.PropagationPolicy {
		return &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", Generation: 1},
			Spec: policyv1alpha1.PropagationSpec{
				ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}},
				Placement:         policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1", "member9"}}}}}
	}
	const unknown = `Warning UnknownCluster spec.placement.clusterAffinity.clusterNames: "member9"`
	run := func(t *testing.T, passes int) (statusWrites int, events []string) {
		t.Helper()
		pp := newPolicy()
		b := fake.NewClientBuilder().WithScheme(policy.NewScheme()).
			WithObjects(pp, &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member1"}}).
			WithInterceptorFuncs(interceptor.Funcs{SubResourcePatch: func(ctx context.Context, c client.Client, sub string, o client.Object,
				p client.Patch, opts ...client.SubResourcePatchOption) error {
				statusWrites++
				return c.SubResource(sub).Patch(ctx, o, p, opts...)
			}})
		c := b.Build()
		recorder := record.NewFakeRecorder(10)
		d := &Reconciler{client: c, recorder: recorder, noPolicyStatus: true,
			// Watched already: this test has no manager to add watches to.
			watched: map[schema.GroupVersionKind]bool{appsv1.SchemeGroupVersion.WithKind("Deployment"): true}}
		r := (&policyReconciler{d: d}).forKind(pp)
		for range passes {
			if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(pp)}); err != nil {
				t.Fatalf("reconcile: %v", err)
			}
		}
		return statusWrites, fixture.Events(recorder)
	}

	t.Run("without policy status, nothing is written and each check tells of the problem", func(t *testing.T) {
		writes, events := run(t, 2)
		if writes != 0 {
			t.Errorf("%d status writes, want none: the hub serves no policy status", writes)
		}
		if len(events) != 2 || !strings.HasPrefix(events[0], unknown) || !strings.HasPrefix(events[1], unknown) {
			t.Errorf("events = %q, want %q on each of the two checks", events, unknown)
		}
	})
}
