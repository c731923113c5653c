package e2e

import (
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	"github.com/karmada-io/karmada/pkg/util/names"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"

	"github.com/federator-dev/federator/test/framework"
)

var _ = Describe("policy claims", func() {
	const ns, name = "claims", "web"

	claimedBy := func() string {
		d := &appsv1.Deployment{}
		if err := hubClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, d); err != nil {
			return err.Error()
		}
		return d.Annotations["propagationpolicy.karmada.io/name"]
	}
	bindingPolicy := func() string {
		b := &workv1alpha2.ResourceBinding{}
		if err := hubClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: names.GenerateBindingName("Deployment", name)}, b); err != nil {
			return err.Error()
		}
		return b.Annotations["propagationpolicy.karmada.io/name"]
	}

	// claimPolicy applies a PropagationPolicy selecting Deployments (the one
	// named deployment, or all when it is "") and placing them on cluster.
	claimPolicy := func(policy, deployment, cluster string) {
		GinkgoHelper()
		mustApply(`
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: %[2]s, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: %[3]q}]
  placement: {clusterAffinity: {clusterNames: [%[4]s]}}
`, ns, policy, deployment, cluster)
	}

	It("keep a template with its policy until that policy lets go, as Karmada does", func() {
		claim := framework.JSONPath(`{.metadata.annotations.propagationpolicy\.karmada\.io/name}`)
		namespace(ns)
		member2 := recordMember("member2", deploymentRef(ns, name))
		deployment(ns, name, "nginx:1.25")
		template := recordHub(deploymentRef(ns, name))
		claimPolicy("broad", "", "member1")
		Eventually(func() string { return memberImage("member1", ns, name) }).Should(Equal("nginx:1.25"))
		Expect(claimedBy()).To(Equal("broad"))
		Expect(bindingPolicy()).To(Equal("broad"))

		By("a more specific policy appearing does not take the template over")
		claimPolicy("exact", name, "member2")
		// Time for the detector to weigh the new policy.
		Consistently(func() []string { return template.Values(claim) }, "3s").ShouldNot(ContainElement("exact"))
		broadDeleted := mark(template)
		Expect(storedBefore(member2, mark(member2), framework.Image)).To(BeEmpty(), "member2 is placed only by the policy that lost")

		By("deleting the claiming policy hands the template to the next one")
		Expect(hubClient.Delete(ctx, &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "broad"}})).To(Succeed())
		Eventually(claimedBy).Should(Equal("exact"))
		Eventually(bindingPolicy).Should(Equal("exact"))
		Eventually(func() string { return memberImage("member2", ns, name) }).Should(Equal("nginx:1.25"))
		Eventually(func() string { return memberImage("member1", ns, name) }).Should(BeEmpty(), "member1 is no longer placed")

		By("narrowing the claiming policy so it no longer selects the template hands it over too")
		claimPolicy("broad", "", "member1")
		Consistently(func() []string { return template.ValuesBetween(broadDeleted, template.End(), claim) }, "2s").ShouldNot(
			ContainElement("broad"))
		exactNarrowed := mark(template)
		claimPolicy("exact", "another", "member2")
		Eventually(claimedBy).Should(Equal("broad"))
		Eventually(bindingPolicy).Should(Equal("broad"))
		Eventually(func() string { return memberImage("member1", ns, name) }).Should(Equal("nginx:1.25"))
		Eventually(func() string { return memberImage("member2", ns, name) }).Should(BeEmpty(), "member2 is no longer placed")

		Expect(storedBefore(template, broadDeleted, claim)).To(HaveEach(BeElementOf("", "broad")),
			"claimed by nothing but broad while broad existed")
		Expect(template.ValuesBetween(broadDeleted, exactNarrowed, claim)).NotTo(ContainElement("broad"),
			"broad took the template back while exact still selected it")
	})
})
