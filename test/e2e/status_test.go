package e2e

import (
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	"github.com/karmada-io/karmada/pkg/util/names"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

var _ = Describe("status from members", func() {
	const ns, name = "status", "web"

	templateStatus := func() appsv1.DeploymentStatus {
		d := &appsv1.Deployment{}
		Expect(hubClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, d)).To(Succeed())
		return d.Status
	}

	It("flows back to the Work, the binding and the Deployment template, suspended or not", Label("smoke"), func() {
		bareMembersOnly("the spec reports the members' Deployments ready itself")
		propagatedEverywhere(ns, name)
		patchPolicy(ns, name, `{"spec": {"suspension": {"dispatchingOnClusters": {"clusterNames": ["member2"]}}}}`)
		Eventually(func() *metav1.Condition { return dispatching("member2", "Deployment", ns, name) }).Should(And(
			Not(BeNil()), HaveField("Reason", "SuspendDispatching")))

		By("members reporting ready replicas: collected even from the suspended member")
		for m := range members {
			reportReady(m, ns, name)
		}
		for m := range members {
			Eventually(func() int32 { return workReadyReplicas(m, ns, name) }).Should(Equal(int32(2)), m)
		}
		Eventually(func() []string {
			b := &workv1alpha2.ResourceBinding{}
			Expect(hubClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: names.GenerateBindingName("Deployment", name)}, b)).To(Succeed())
			var withStatus []string
			for _, item := range b.Status.AggregatedStatus {
				if item.Status != nil && item.Applied {
					withStatus = append(withStatus, item.ClusterName)
				}
			}
			return withStatus
		}).Should(ConsistOf("member1", "member2", "member3"))

		By("the template's status sums the members; observedGeneration waits for the suspended member")
		Eventually(templateStatus).Should(And(
			HaveField("Replicas", int32(6)), HaveField("ReadyReplicas", int32(6)), HaveField("AvailableReplicas", int32(6)),
			HaveField("ObservedGeneration", int64(0))))

		By("resuming member2: the template is observed everywhere")
		patchPolicy(ns, name, `{"spec": {"suspension": null}}`)
		d := &appsv1.Deployment{}
		Expect(hubClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, d)).To(Succeed())
		Eventually(templateStatus).Should(And(
			HaveField("ReadyReplicas", int32(6)), HaveField("ObservedGeneration", d.Generation)))
	})
})
