package hubinstall

import (
	"context"
	"strings"
	"testing"
	"time"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/federator-dev/federator/apis/policy"
	"github.com/federator-dev/federator/internal/fleettest"
	"github.com/federator-dev/federator/pkg/fleet"
)

const ppCRD = "propagationpolicies.policy.karmada.io"

// karmadaHub starts a hub that already serves Karmada v1.16's own CRDs, as
// a Karmada user moving over has, and returns an administrator's client.
func karmadaHub(t *testing.T) (*fleet.Fleet, client.Client) {
	t.Helper()
	karmada, err := fleettest.KarmadaCRDs()
	if err != nil {
		t.Fatal(err)
	}
	f := fleettest.Start(t, fleet.Options{CRDs: karmada})
	return f, newClient(t, f.Hub.Config)
}

func newClient(t *testing.T, cfg *rest.Config) client.Client {
	t.Helper()
	c, err := client.New(cfg, client.Options{Scheme: policy.NewScheme()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func hasStatusSubresource(t *testing.T, c client.Client, name string) bool {
	t.Helper()
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := c.Get(context.Background(), client.ObjectKey{Name: name}, crd); err != nil {
		t.Fatal(err)
	}
	for _, v := range crd.Spec.Versions {
		if v.Name == "v1alpha1" {
			return v.Subresources != nil && v.Subresources.Status != nil
		}
	}
	return false
}

func change(report InstallReport, name string) *CRDChange {
	for _, c := range report.Changes {
		if c.Name == name {
			return &c
		}
	}
	return nil
}

// TestInstallOnKarmadaHubAddsPolicyStatus: on a hub with Karmada's own
// CRDs, Install adds what federator needs (the policies' status
// subresource, the fields Karmada's schemas lack), keeps what Karmada's
// CRDs have (the bindings' second version), and says what it added.
func TestInstallOnKarmadaHubAddsPolicyStatus(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	_, c := karmadaHub(t)
	if hasStatusSubresource(t, c, ppCRD) {
		t.Fatalf("Karmada's own %s already serves status: the test's premise is gone", ppCRD)
	}

	report, err := Install(ctx, c)
	if err != nil {
		t.Fatalf("Install: %v", err)
	}
	if !report.PolicyStatus() {
		t.Errorf("report says the hub serves no policy status: %+v", report.Changes)
	}
	for _, name := range []string{ppCRD, "clusterpropagationpolicies.policy.karmada.io"} {
		ch := change(report, name)
		if ch == nil || ch.Err != nil {
			t.Fatalf("report has no successful change of %s: %+v", name, report.Changes)
		}
		if msg := ch.Message(); !strings.HasPrefix(msg, "status subresource and schema fields ") ||
			!strings.Contains(msg, ".status") || !strings.Contains(msg, ".spec.suspension.suspendDispatching") ||
			!strings.HasSuffix(msg, " added to "+name) {
			t.Errorf("message = %q, want it to name the status subresource, .status and the suspension aliases added to %s", msg, name)
		}
		t.Log(ch.Message())
		if !hasStatusSubresource(t, c, name) {
			t.Errorf("%s serves no status subresource after Install", name)
		}
	}
	rb := &apiextensionsv1.CustomResourceDefinition{}
	if err := c.Get(ctx, client.ObjectKey{Name: "resourcebindings.work.karmada.io"}, rb); err != nil {
		t.Fatal(err)
	}
	if len(rb.Spec.Versions) != 2 {
		t.Errorf("resourcebindings.work.karmada.io serves %d versions after Install, want Karmada's 2 kept", len(rb.Spec.Versions))
	}

	// A policy's status is now written through the status subresource.
	pp := &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceDefault, Name: "web"},
		Spec: policyv1alpha1.PropagationSpec{ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment"}}}}
	if err := c.Create(ctx, pp); err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(policyv1alpha1.SchemeGroupVersion.WithKind("PropagationPolicy"))
	u.SetNamespace(pp.Namespace)
	u.SetName(pp.Name)
	status := client.RawPatch("application/merge-patch+json", []byte(`{"status":{"conditions":[{"type":"ClustersKnown","status":"True",`+
		`"reason":"ClustersKnown","message":"m","lastTransitionTime":"2026-01-01T00:00:00Z"}]}}`))
	if err := c.Status().Patch(ctx, u, status); err != nil {
		t.Fatalf("writing a policy's status after Install: %v", err)
	}
	if conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions"); len(conds) != 1 {
		t.Errorf("policy status after the write = %v, want the condition kept", u.Object["status"])
	}

	// A second start changes nothing more.
	again, err := Install(ctx, c)
	if err != nil {
		t.Fatalf("second Install: %v", err)
	}
	if len(again.Changes) != 0 {
		t.Errorf("second Install changed %+v, want nothing", again.Changes)
	}
}

// TestInstallWithoutRightsToUpdateCRDs: a controller whose RBAC forbids
// updating CRDs still starts; the report says the policies get no status
// and why, and the hub's CRDs are left as they were.
func TestInstallWithoutRightsToUpdateCRDs(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	f, admin := karmadaHub(t)
	limitedCfg, err := fleettest.GrantAllButCRDUpdates(ctx, admin, f.Hub.Config)
	if err != nil {
		t.Fatal(err)
	}

	report, err := Install(ctx, newClient(t, limitedCfg))
	if err != nil {
		t.Fatalf("Install without rights to update CRDs: %v", err)
	}
	if report.PolicyStatus() {
		t.Errorf("report says the hub serves policy status, but the update was forbidden: %+v", report.Changes)
	}
	ch := change(report, ppCRD)
	if ch == nil || !apierrors.IsForbidden(ch.Err) {
		t.Fatalf("report of %s = %+v, want a forbidden update", ppCRD, ch)
	}
	for _, want := range []string{"cannot add status subresource", "policies get no status conditions",
		"Grant the controller update and patch on customresourcedefinitions"} {
		if !strings.Contains(ch.Message(), want) {
			t.Errorf("message %q does not say %q", ch.Message(), want)
		}
	}
	t.Log(ch.Message())
	if hasStatusSubresource(t, admin, ppCRD) {
		t.Errorf("%s got a status subresource although the update was forbidden", ppCRD)
	}
	// What Karmada's CRDs lack entirely is still created.
	if err := admin.Get(ctx, client.ObjectKey{Name: "clusters.cluster.karmada.io"}, &apiextensionsv1.CustomResourceDefinition{}); err != nil {
		t.Errorf("clusters.cluster.karmada.io: %v", err)
	}
}
