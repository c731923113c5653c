package hubinstall

import (
	"context"
	"strings"
	"testing"
	"time"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
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
	ctx, c := bareHub(t)

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
	err := c.Create(ctx, bad)
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

// TestInstallRefusesSuspensionAnnotationsThatReadAsFalse: once Install
// returns, "false", "0" and "no" are refused as a suspension annotation's
// value on any object, with a message that says to remove the annotation;
// a value stored before is not refused again when something else changes.
func TestInstallRefusesSuspensionAnnotationsThatReadAsFalse(t *testing.T) {
	ctx, c := bareHub(t)
	configMap := func(name, key, value string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceDefault, Name: name,
			Annotations: map[string]string{key: value}}}
	}
	old := configMap("stored-before", "propagation.federator.dev/suspended", "false")
	if err := c.Create(ctx, old); err != nil {
		t.Fatal(err)
	}
	if _, err := Install(ctx, c); err != nil {
		t.Fatalf("Install: %v", err)
	}

	for _, tc := range []struct {
		key, value string
		refused    bool
	}{
		{"propagation.federator.dev/suspended", "false", true},
		{"propagation.federator.dev/suspended", "FALSE", true},
		{"suspended.propagation.federator.dev/member2", "0", true},
		{"suspended.propagation.federator.dev/member2", " no ", true},
		{"propagation.federator.dev/suspended", "true", false},
		{"suspended.propagation.federator.dev/member2", "incident 42: not false", false},
		{"example.com/suspended", "false", false},
	} {
		err := c.Create(ctx, configMap("probe", tc.key, tc.value), client.DryRunAll)
		switch {
		case tc.refused && (err == nil || !strings.Contains(err.Error(),
			`metadata.annotations[`+tc.key+`]: Invalid value: "`+tc.value+`"`) ||
			!strings.Contains(err.Error(), "to resume, remove the annotation instead")):
			t.Errorf("%s=%q: got %v, want a refusal that says to remove the annotation", tc.key, tc.value, err)
		case !tc.refused && err != nil:
			t.Errorf("%s=%q refused: %v", tc.key, tc.value, err)
		}
	}

	old.Data = map[string]string{"changed": "yes"}
	if err := c.Update(ctx, old); err != nil {
		t.Errorf("updating an object whose value was stored before: %v", err)
	}
	old.Annotations["propagation.federator.dev/suspended"] = "no"
	if err := c.Update(ctx, old); err == nil {
		t.Error("changing a stored value to \"no\" is accepted")
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: metav1.NamespaceDefault, Name: "federator-admission-probe"}, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
		t.Errorf("Install's readiness probe left a ConfigMap behind (get: %v)", err)
	}
}

// bareHub starts a hub API server without federator's CRDs and admission
// policies, for Install to install them.
func bareHub(t *testing.T) (context.Context, client.Client) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	f := fleettest.Start(t, fleet.Options{})
	c, err := client.New(f.Hub.Config, client.Options{Scheme: policy.NewScheme()})
	if err != nil {
		t.Fatal(err)
	}
	return ctx, c
}

// With --install-crds=false the controller installs nothing: a hub without
// the CRDs is refused with what to do; once they are there (as federator
// install applies them), Verify passes and reports nothing lacking.
func TestVerifyInstallsNothing(t *testing.T) {
	ctx, c := bareHub(t)
	_, err := Verify(ctx, c)
	if err == nil || !strings.Contains(err.Error(), "federator install") {
		t.Fatalf("Verify on a hub without CRDs: %v, want an error that says to run federator install", err)
	}
	crdList := &apiextensionsv1.CustomResourceDefinitionList{}
	if err := c.List(ctx, crdList); err != nil {
		t.Fatal(err)
	}
	if len(crdList.Items) != 0 {
		t.Fatalf("Verify created %d CRDs", len(crdList.Items))
	}
	if _, err := Install(ctx, c); err != nil {
		t.Fatal(err)
	}
	report, err := Verify(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if len(report.Changes) != 0 || !report.PolicyStatus() {
		t.Errorf("Verify after Install: %+v, want nothing lacking", report.Changes)
	}

	// A policy CRD without its status subresource (an older install): the
	// controller works without policy status, and says how to update.
	pp := &apiextensionsv1.CustomResourceDefinition{}
	if err := c.Get(ctx, client.ObjectKey{Name: "propagationpolicies.policy.karmada.io"}, pp); err != nil {
		t.Fatal(err)
	}
	pp.Spec.Versions[0].Subresources = nil
	if err := c.Update(ctx, pp); err != nil {
		t.Fatal(err)
	}
	report, err = Verify(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if report.PolicyStatus() || len(report.Changes) != 1 || !strings.Contains(report.Changes[0].Message(), "Update the CRDs with `federator install`") {
		t.Errorf("Verify of a policy CRD without status: %+v", report.Changes)
	}
	if err := c.Get(ctx, client.ObjectKey{Name: "propagationpolicies.policy.karmada.io"}, pp); err != nil {
		t.Fatal(err)
	}
	if pp.Spec.Versions[0].Subresources != nil {
		t.Error("Verify changed the CRD")
	}
}
