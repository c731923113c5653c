package e2e

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var _ = Describe("rollback on the hub while a cluster is suspended", func() {
	const ns, name = "rollback", "web"

	It("never lets the suspended cluster see the bad version, and does not rewrite it on resume", func() {
		propagatedEverywhere(ns, name)
		seenByMember3 := recordImages("member3", ns, name)
		member3Object := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		versionBefore := memberResourceVersion("member3", member3Object)

		By("suspending member3 and rolling out a bad image")
		patchPolicy(ns, name, `{"spec": {"suspension": {"dispatchingOnClusters": {"clusterNames": ["member3"]}}}}`)
		Eventually(func() *metav1.Condition { return dispatching("member3", "Deployment", ns, name) }).Should(And(
			Not(BeNil()), HaveField("Reason", "SuspendDispatching")))
		setImage(ns, name, "nginx:bad")
		Eventually(func() map[string]string { return imagesEverywhere(ns, name) }).Should(Equal(
			map[string]string{"member1": "nginx:bad", "member2": "nginx:bad", "member3": "nginx:1.25"}))
		Eventually(func() string { return workImage("member3", ns, name) }).Should(Equal("nginx:bad"))

		By("rolling back on the hub, then resuming member3")
		setImage(ns, name, "nginx:1.25")
		Eventually(func() map[string]string { return imagesEverywhere(ns, name) }).Should(Equal(everywhere("nginx:1.25")))
		Eventually(func() string { return workImage("member3", ns, name) }).Should(Equal("nginx:1.25"))
		patchPolicy(ns, name, `{"spec": {"suspension": null}}`)
		Eventually(func() *metav1.Condition { return dispatching("member3", "Deployment", ns, name) }).Should(
			HaveField("Reason", "Dispatching"))
		Eventually(func() *metav1.Condition { return applied("member3", "Deployment", ns, name) }).Should(And(
			Not(BeNil()), HaveField("Status", metav1.ConditionTrue)))

		Expect(seenByMember3.seen()).NotTo(ContainElement("nginx:bad"), "member3 must never have had the bad version")
		Expect(memberResourceVersion("member3", member3Object)).To(Equal(versionBefore),
			"member3's object did not change, so it must not have been written at all")
	})
})
