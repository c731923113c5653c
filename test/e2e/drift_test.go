package e2e

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/federator-dev/federator/test/framework"
)

var _ = Describe("drift in a member", func() {
	const ns, name = "drift", "web"

	It("is put back to what the hub says, unless the member is suspended", func() {
		bareMembersOnly("the spec reports member2's Deployment ready itself")
		propagatedEverywhere(ns, name)

		editInMember := func(member, image string) {
			GinkgoHelper()
			d := &appsv1.Deployment{}
			Expect(members[member].Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, d)).To(Succeed())
			d.Spec.Template.Spec.Containers[0].Image = image
			Expect(members[member].Update(ctx, d)).To(Succeed())
		}

		By("editing the Deployment directly in member1")
		editInMember("member1", "nginx:edited")
		Eventually(func() string { return memberImage("member1", ns, name) }).Should(Equal("nginx:1.25"))

		By("editing it in member2 while member2 is suspended: held means hands off")
		patchPolicy(ns, name, `{"spec": {"suspension": {"dispatchingOnClusters": {"clusterNames": ["member2"]}}}}`)
		Eventually(func() *metav1.Condition { return dispatching("member2", "Deployment", ns, name) }).Should(And(
			Not(BeNil()), HaveField("Reason", "SuspendDispatching")))
		member2 := recordMember("member2", deploymentRef(ns, name))
		editInMember("member2", "nginx:hotfix")
		// Status flows back from a suspended member on every change it
		// watches: once the ready replicas reported after the edit reach
		// the Work, a reconcile that saw the edit has decided to leave it.
		reportReady("member2", ns, name)
		Eventually(func() int32 { return workReadyReplicas("member2", ns, name) }).Should(Equal(int32(2)))
		handsOff := []string{"EXISTING nginx:1.25", "MODIFIED nginx:hotfix", "MODIFIED nginx:hotfix"}
		Consistently(func() []string { return member2.History(0, member2.End(), framework.Image) }, "2s").Should(
			Equal(handsOff), "the edit and the status report, nothing from the hub")
		Expect(member2.History(0, mark(member2), framework.Image)).To(Equal(handsOff), "the hub wrote to suspended member2")

		By("resuming member2 puts the hub's version back")
		patchPolicy(ns, name, `{"spec": {"suspension": null}}`)
		Eventually(func() string { return memberImage("member2", ns, name) }).Should(Equal("nginx:1.25"))
	})
})
