package hub

import (
	"context"
	"strings"
	"testing"
	"time"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/federator-dev/federator/apis/policy"
	"github.com/federator-dev/federator/internal/fleettest"
	"github.com/federator-dev/federator/pkg/fleet"
)

// TestInstallEnforcesAdmissionOnReturn: once Install returns, the hub
// refuses conflicting suspension fields at once. The API server loads an
// admission policy a moment after it is created; a hub reported ready
// before that would accept the first bad policy.
func TestInstallEnforcesAdmissionOnReturn(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	f := fleettest.Start(t, fleet.Options{})
	c, err := client.New(f.Hub.Config, client.Options{Scheme: policy.NewScheme()})
	if err != nil {
		t.Fatal(err)
	}

	if _, err := Install(ctx, c); err != nil {
		t.Fatalf("Install: %v", err)
	}
	bad := &policyv1alpha1.PropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceDefault, Name: "web"},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}},
			Suspension: &policyv1alpha1.Suspension{
				Dispatching:           ptr.To(true),
				DispatchingOnClusters: &policyv1alpha1.SuspendClusters{ClusterNames: []string{"member2"}},
			},
		},
	}
	err = c.Create(ctx, bad)
	if err == nil || !strings.Contains(err.Error(), "suspension dispatching cannot co-exist with dispatchingOnClusters.clusterNames") {
		t.Fatalf("creating a policy with both suspension fields right after Install: got %v, want Karmada's refusal", err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(bad), &policyv1alpha1.PropagationPolicy{}); !apierrors.IsNotFound(err) {
		t.Errorf("the refused policy was stored (get: %v)", err)
	}
	// The readiness probe is a dry run: it leaves nothing behind.
	probes := &policyv1alpha1.PropagationPolicyList{}
	if err := c.List(ctx, probes); err != nil {
		t.Fatal(err)
	}
	if len(probes.Items) != 0 {
		t.Errorf("Install left %d PropagationPolicies on the hub", len(probes.Items))
	}

	// A second Install on a ready hub changes nothing and returns.
	if _, err := Install(ctx, c); err != nil {
		t.Fatalf("second Install: %v", err)
	}
}
