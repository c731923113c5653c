package e2e

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var _ = Describe("suspend dispatching to listed clusters", func() {
	const ns, name = "suspend-clusters", "web"

	It("changes only unlisted clusters, and shrinking the list releases a cluster", func() {
		propagatedEverywhere(ns, name)

		By("suspending member2 and member3, then updating the image")
		patchPolicy(ns, name, `{"spec": {"suspension": {"dispatchingOnClusters": {"clusterNames": ["member2", "member3"]}}}}`)
		for _, m := range []string{"member2", "member3"} {
			Eventually(func() *metav1.Condition { return dispatching(m, "Deployment", ns, name) }).Should(And(
				Not(BeNil()), HaveField("Reason", "SuspendDispatching")), m)
		}
		Expect(dispatching("member1", "Deployment", ns, name)).To(HaveField("Reason", "Dispatching"))
		setImage(ns, name, "nginx:1.27")
		Eventually(func() string { return memberImage("member1", ns, name) }).Should(Equal("nginx:1.27"))
		for _, m := range []string{"member2", "member3"} {
			Eventually(func() string { return workImage(m, ns, name) }).Should(Equal("nginx:1.27"), m)
		}
		Consistently(func() map[string]string { return imagesEverywhere(ns, name) }, "3s").Should(Equal(
			map[string]string{"member1": "nginx:1.27", "member2": "nginx:1.25", "member3": "nginx:1.25"}))

		By("shrinking the list to member3: member2 changes, member3 keeps the old version")
		patchPolicy(ns, name, `{"spec": {"suspension": {"dispatchingOnClusters": {"clusterNames": ["member3"]}}}}`)
		Eventually(func() string { return memberImage("member2", ns, name) }, "20s").Should(Equal("nginx:1.27"))
		Consistently(func() string { return memberImage("member3", ns, name) }, "3s").Should(Equal("nginx:1.25"))
		Expect(dispatching("member3", "Deployment", ns, name)).To(HaveField("Reason", "SuspendDispatching"))
		Expect(dispatching("member2", "Deployment", ns, name)).To(HaveField("Reason", "Dispatching"))
	})
})
