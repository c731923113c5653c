package e2e

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/federator-dev/federator/test/framework"
)

var _ = Describe("suspend dispatching to listed clusters", func() {
	const ns, name = "suspend-clusters", "web"

	It("changes only unlisted clusters, and shrinking the list releases a cluster", Label("smoke"), func() {
		propagatedEverywhere(ns, name)
		member2, member3 := recordMember("member2", deploymentRef(ns, name)), recordMember("member3", deploymentRef(ns, name))

		By("suspending member2 and member3, then updating the image")
		patchPolicy(ns, name, `{"spec": {"suspension": {"dispatchingOnClusters": {"clusterNames": ["member2", "member3"]}}}}`)
		for _, m := range []string{"member2", "member3"} {
			Eventually(func() *metav1.Condition { return dispatching(m, "Deployment", ns, name) }).Should(And(
				Not(BeNil()), HaveField("Reason", "SuspendDispatching")), m)
		}
		Expect(dispatching("member1", "Deployment", ns, name)).To(HaveField("Reason", "Dispatching"))
		setImage(ns, name, "nginx:1.27")
		Eventually(func() string { return memberImage("member1", ns, name) }).Should(Equal("nginx:1.27"))
		dispatcherHolds(ns, name, "nginx:1.27", "member2", "member3")
		member2Held := mark(member2)

		By("shrinking the list to member3: member2 changes, member3 keeps the old version")
		patchPolicy(ns, name, `{"spec": {"suspension": {"dispatchingOnClusters": {"clusterNames": ["member3"]}}}}`)
		Eventually(func() string { return memberImage("member2", ns, name) }, "20s").Should(Equal("nginx:1.27"))
		Expect(heldByDispatcher("member3", ns, name)).To(BeTrue(), "member3 is held at the Work's current spec")
		Expect(dispatching("member3", "Deployment", ns, name)).To(HaveField("Reason", "SuspendDispatching"))
		// The dispatcher writes the Work's condition after it applied the
		// release: a loaded machine can show the member's copy first.
		Eventually(func() *metav1.Condition { return dispatching("member2", "Deployment", ns, name) }).Should(
			And(Not(BeNil()), HaveField("Reason", "Dispatching")))
		Expect(storedBefore(member2, member2Held, framework.Image)).NotTo(ContainElement("nginx:1.27"),
			"member2 stored the new version while it was suspended")
		Expect(stored(member3, framework.Image)).NotTo(ContainElement("nginx:1.27"),
			"member3 stored the new version, suspended all along")
	})
})
