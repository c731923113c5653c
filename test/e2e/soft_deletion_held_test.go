package e2e

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/federator-dev/federator/test/framework"
)

var _ = Describe("soft deletion of a copy placed back while held", func() {
	It("takes the countdown back when the template comes back while a suspension holds the cluster: same object, kept, not updated", func() {
		const ns, name = "softdel-held", "web"
		const delay = 20 * time.Second
		delayedEverywhere(ns, name, delay.String())
		before := &appsv1.Deployment{}
		Expect(members["member3"].Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, before)).To(Succeed())
		member3 := recordMember("member3", deploymentRef(ns, name))

		By("deleting the template: member3's copy counts down")
		Expect(hubClient.Delete(ctx, deploymentRef(ns, name))).To(Succeed())
		due := countingDown("member3", ns, name, delay)

		By("suspending member3, then creating the template again at a new version before the delay ends")
		patchPolicy(ns, name, `{"spec": {"suspension": {"dispatchingOnClusters": {"clusterNames": ["member3"]}}}}`)
		delayedDeployment(ns, name, "nginx:1.26", delay.String())
		Eventually(func() string { return memberImage("member1", ns, name) }).Should(Equal("nginx:1.26"))
		Eventually(func() string { return workImage("member3", ns, name) }).Should(Equal("nginx:1.26"))
		Eventually(func() *metav1.Condition { return dispatching("member3", "Deployment", ns, name) }).Should(And(
			Not(BeNil()), HaveField("Reason", "SuspendDispatching")), "the dispatcher saw the held Work")
		Expect(time.Now()).To(BeTemporally("<", due), "placed again too late to prove anything; the machine is loaded")

		By("waiting past the time the countdown would have ended")
		time.Sleep(time.Until(due.Add(5 * time.Second)))
		after := &appsv1.Deployment{}
		Expect(members["member3"].Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, after)).To(Succeed(), "deleted though placed again")
		Expect(after.UID).To(Equal(before.UID), "the same object: never deleted and created anew")
		Expect(after.Annotations).NotTo(HaveKey(timestampKey), "still counting down")
		Expect(member3.History(0, mark(member3), framework.Image)).NotTo(ContainElement(HavePrefix("DELETED")))
		Expect(stored(member3, framework.Image)).NotTo(ContainElement("nginx:1.26"), "the held version reached member3")
		Eventually(func() bool { _, found := tombstone("member3", ns, name); return found }).Should(BeFalse())
		Eventually(func() []string { return bindingEvents(ns, name) }).Should(ContainElement(
			HavePrefix("SoftDeletionCancelled: Deployment softdel-held/web in member3 is placed there again")))

		By("resuming member3: it gets the new version")
		patchPolicy(ns, name, `{"spec": {"suspension": null}}`)
		Eventually(func() string { return memberImage("member3", ns, name) }).Should(Equal("nginx:1.26"))
	})
})
