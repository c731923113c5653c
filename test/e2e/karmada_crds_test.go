package e2e

import (
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/karmada-io/karmada/pkg/util/names"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	"github.com/onsi/gomega/gexec"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/federator-dev/federator/apis/policy"
	"github.com/federator-dev/federator/internal/fleettest"
	"github.com/federator-dev/federator/pkg/fleet"
)

// A Karmada user moving over has a hub with Karmada's own CRDs, whose
// policies serve no status. `federator controller` against such a hub
// propagates, adding the policy status where its rights allow and working
// without it where they do not.
var _ = Describe("a hub with Karmada's own CRDs", func() {
	const ppCRD = "propagationpolicies.policy.karmada.io"

	// karmadaHub starts a hub holding Karmada v1.16's CRDs (read from the
	// Karmada module, charts/karmada/_crds) before any federator runs, and
	// one member.
	karmadaHub := func() (*fleet.Fleet, client.Client) {
		karmada, err := fleettest.KarmadaCRDs()
		Expect(err).NotTo(HaveOccurred())
		f, err := fleet.Start(ctx, fleet.Options{Dir: GinkgoT().TempDir(), Members: 1, BinDir: binDir, CRDs: karmada, Log: GinkgoWriter})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(f.Stop)
		hub, err := client.New(f.Hub.Config, client.Options{Scheme: policy.NewScheme()})
		Expect(err).NotTo(HaveOccurred())
		Expect(policyServesStatus(hub, ppCRD)).To(BeFalse(), "Karmada's own %s serves status: the spec's premise is gone", ppCRD)
		return f, hub
	}

	// propagate propagates shop/web and waits for its Work's Event.
	propagate := func(hub, member client.Client) {
		propagateShopWeb(hub, member)
		// As on any hub, Karmada's WorkDispatching Event on the Work.
		Eventually(func() []string {
			return eventsOn(hub, names.GenerateExecutionSpaceName("member1"), "Work", names.GenerateWorkName("Deployment", "web", "shop"))
		}).Should(ContainElement("Normal WorkDispatching: Work is being dispatched to member clusters."))
	}

	It("adds the status subresource to the policy CRDs, says so, and propagates", func() {
		f, hub := karmadaHub()
		session := runController(f)
		member := joinMembers(f, hub)["member1"]
		propagate(hub, member)

		for _, crd := range []string{ppCRD, "clusterpropagationpolicies.policy.karmada.io"} {
			Expect(policyServesStatus(hub, crd)).To(BeTrue(), crd)
			Expect(eventsOn(hub, metav1.NamespaceDefault, "CustomResourceDefinition", crd)).To(ContainElement(And(
				HavePrefix("Normal CustomResourceDefinitionUpdated: status subresource and schema fields "),
				ContainSubstring(".status"), HaveSuffix(" added to "+crd))), crd)
		}
		Expect(string(session.Err.Contents())).To(ContainSubstring("added to " + ppCRD))
		// The policy's status is served and written.
		Eventually(func() []any {
			u := &unstructured.Unstructured{}
			u.SetAPIVersion("policy.karmada.io/v1alpha1")
			u.SetKind("PropagationPolicy")
			if err := hub.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "web"}, u); err != nil {
				return nil
			}
			conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
			return conds
		}).Should(ContainElement(HaveKeyWithValue("type", "ClustersKnown")))
	})

	It("propagates without policy status where its RBAC may not update CRDs, and says so once", func() {
		f, hub := karmadaHub()
		limited, err := fleettest.GrantAllButCRDUpdates(ctx, hub, f.Hub.Config)
		Expect(err).NotTo(HaveOccurred())
		kubeconfig := filepath.Join(GinkgoT().TempDir(), "limited.kubeconfig")
		Expect(fleet.WriteKubeconfig(kubeconfig, "hub", limited)).To(Succeed())
		session, err := gexec.Start(exec.Command(federatorBinary(), "controller", "--kubeconfig", kubeconfig), GinkgoWriter, GinkgoWriter)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { session.Kill().Wait("10s") })
		Eventually(session.Out, "60s").Should(gbytes.Say("federator: controllers running against"))

		member := joinMembers(f, hub)["member1"]
		propagate(hub, member)
		// Policy conditions are told by Event where they cannot be stored.
		Expect(hub.Patch(ctx, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy",
			"metadata": map[string]any{"namespace": "shop", "name": "web"}}},
			client.RawPatch("application/merge-patch+json",
				[]byte(`{"spec":{"placement":{"clusterAffinity":{"clusterNames":["member1","member9"]}}}}`)))).To(Succeed())
		Eventually(func() []string { return eventsOn(hub, "shop", "PropagationPolicy", "web") }).Should(
			ContainElement(ContainSubstring(`Warning UnknownCluster: spec.placement.clusterAffinity.clusterNames: "member9"`)))

		Expect(policyServesStatus(hub, ppCRD)).To(BeFalse(), "the CRD was changed although RBAC forbids it")
		forbidden := "Warning CustomResourceDefinitionUpdateForbidden: cannot add status subresource"
		Eventually(func() []string {
			return eventsOn(hub, metav1.NamespaceDefault, "CustomResourceDefinition", ppCRD)
		}).Should(ContainElement(HavePrefix(forbidden)))
		events := &corev1.EventList{}
		Expect(hub.List(ctx, events, client.InNamespace(metav1.NamespaceDefault))).To(Succeed())
		for _, e := range events.Items {
			if e.InvolvedObject.Name == ppCRD {
				Expect(e.Count).To(BeNumerically("<=", 1), "the notice was repeated: %s", e.Message)
			}
		}
		log := string(session.Err.Contents())
		Expect(strings.Count(log, "cannot add status subresource and schema fields")).To(Equal(2),
			"one notice per policy CRD (PropagationPolicy, ClusterPropagationPolicy)")
		for _, line := range strings.Split(log, "\n") {
			Expect(line).NotTo(And(ContainSubstring("Reconciler error"), ContainSubstring("propagationpolicy")))
		}
	})
})

// policyServesStatus reports whether the CRD name serves v1alpha1's status
// subresource.
func policyServesStatus(hub client.Client, name string) bool {
	GinkgoHelper()
	crd := &apiextensionsv1.CustomResourceDefinition{}
	Expect(hub.Get(ctx, client.ObjectKey{Name: name}, crd)).To(Succeed())
	for _, v := range crd.Spec.Versions {
		if v.Name == "v1alpha1" {
			return v.Subresources != nil && v.Subresources.Status != nil
		}
	}
	return false
}

// eventsOn lists "type reason: message" of the Events on an object of a
// hub other than the suite's.
func eventsOn(hub client.Client, ns, kind, name string) []string {
	events := &corev1.EventList{}
	if err := hub.List(ctx, events, client.InNamespace(ns)); err != nil {
		return []string{err.Error()}
	}
	var out []string
	for _, e := range events.Items {
		if e.InvolvedObject.Kind == kind && e.InvolvedObject.Name == name {
			out = append(out, e.Type+" "+e.Reason+": "+e.Message)
		}
	}
	return out
}
