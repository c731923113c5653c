package e2e

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/federator-dev/federator/test/framework"
)

var _ = Describe("a suspension list naming a cluster that does not exist", func() {
	const ns, name = "suspend-unknown-cluster", "web"

	It("holds every cluster of the policy (a typo must not release the cluster meant) until the name is fixed", func() {
		propagatedEverywhere(ns, name)
		recorders := recordEverywhere(deploymentRef(ns, name))

		By("suspending 'membr3', a typo of member3, then updating the image")
		patchPolicy(ns, name, `{"spec": {"suspension": {"dispatchingOnClusters": {"clusterNames": ["membr3"]}}}}`)
		for m := range members {
			Eventually(func() *metav1.Condition { return dispatching(m, "Deployment", ns, name) }).Should(And(
				Not(BeNil()), HaveField("Reason", "SuspendDispatching")), m)
			Expect(holdMessageOf(m, ns, name)).To(Equal("spec.suspension.dispatchingOnClusters.clusterNames of PropagationPolicy "+
				"suspend-unknown-cluster/web names 'membr3', which is no registered Cluster; every cluster is held until the name is fixed or such a cluster joins"), m)
		}
		setImage(ns, name, "nginx:1.27")
		for m := range members {
			Eventually(func() string { return workImage(m, ns, name) }).Should(Equal("nginx:1.27"), m)
		}
		held := markEverywhere(recorders)
		for m, r := range recorders {
			Expect(storedBefore(r, held[m], framework.Image)).NotTo(ContainElement("nginx:1.27"), m)
		}

		By("fixing the name: only member3 stays held")
		patchPolicy(ns, name, `{"spec": {"suspension": {"dispatchingOnClusters": {"clusterNames": ["member3"]}}}}`)
		Eventually(func() map[string]string { return imagesEverywhere(ns, name) }).Should(Equal(
			map[string]string{"member1": "nginx:1.27", "member2": "nginx:1.27", "member3": "nginx:1.25"}))
		Expect(holdMessageOf("member3", ns, name)).To(HavePrefix("suspended by spec.suspension.dispatchingOnClusters.clusterNames"))
		Expect(stored(recorders["member3"], framework.Image)).NotTo(ContainElement("nginx:1.27"))
	})
})
