package e2e

import (
	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

var _ = Describe("a member outage", func() {
	const ns, name = "outage", "web"

	clusterReady := func(member string) *metav1.Condition {
		c := &clusterv1alpha1.Cluster{}
		if err := hubClient.Get(ctx, client.ObjectKey{Name: member}, c); err != nil {
			return nil
		}
		return meta.FindStatusCondition(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
	}

	It("does not delay the other members, and the member catches up when it is back", func() {
		outage := faults()
		propagatedEverywhere(ns, name)
		// Eventually: a spec before this one may have left member2 just
		// back from an outage, its Cluster Ready again at the next probe.
		Eventually(func() *metav1.Condition { return clusterReady("member2") }).Should(
			And(Not(BeNil()), HaveField("Status", metav1.ConditionTrue)))

		By("stopping member2's API server (kind: freezing its node)")
		Expect(outage.StopMember("member2")).To(Succeed())
		restarted := false
		DeferCleanup(func() {
			if !restarted {
				Expect(outage.StartMember("member2")).To(Succeed())
			}
		})
		Eventually(func() *metav1.Condition { return clusterReady("member2") }).Should(And(
			HaveField("Status", metav1.ConditionFalse), HaveField("Reason", "ClusterNotReachable")))

		By("updating the template: member1 and member3 get it promptly")
		setImage(ns, name, "nginx:1.27")
		Eventually(func() string { return memberImage("member1", ns, name) }, "20s").Should(Equal("nginx:1.27"))
		Eventually(func() string { return memberImage("member3", ns, name) }, "20s").Should(Equal("nginx:1.27"))
		By("member2's Work says AppliedFailed once its requests time out")
		// A reconcile of the Work that was waiting on member2 when it went
		// ends with Karmada's 32 s member request timeout before the one
		// for the new image starts, which waits as long: up to twice that.
		Eventually(func() *metav1.Condition { return applied("member2", "Deployment", ns, name) }, "100s").Should(And(
			HaveField("Status", metav1.ConditionFalse), HaveField("Reason", "AppliedFailed")))

		By("starting member2 again: it catches up")
		Expect(outage.StartMember("member2")).To(Succeed())
		restarted = true
		Eventually(func() *metav1.Condition { return clusterReady("member2") }).Should(HaveField("Status", metav1.ConditionTrue))
		Eventually(func() string { return memberImage("member2", ns, name) }, "30s").Should(Equal("nginx:1.27"))
		Eventually(func() *metav1.Condition { return applied("member2", "Deployment", ns, name) }).Should(
			HaveField("Status", metav1.ConditionTrue))
	})
})
