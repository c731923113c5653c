package e2e

import (
	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Karmada's PolicyPreemption and PriorityBasedScheduling, which Karmada's
// own test deployment turns on; here they are simply on.
var _ = Describe("policy preemption and schedule priority", func() {
	binding := func(ns, name string) (*workv1alpha2.ResourceBinding, error) {
		rb := &workv1alpha2.ResourceBinding{}
		return rb, hubClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, rb)
	}
	claimedBy := func(ns, name string) string {
		d := deploymentRef(ns, name)
		if err := hubClient.Get(ctx, client.ObjectKeyFromObject(d), d); err != nil {
			return err.Error()
		}
		return d.Annotations["propagationpolicy.karmada.io/name"]
	}
	clusterClaimedBy := func(ns, name string) string {
		d := deploymentRef(ns, name)
		if err := hubClient.Get(ctx, client.ObjectKeyFromObject(d), d); err != nil {
			return err.Error()
		}
		return d.Annotations["clusterpropagationpolicy.karmada.io/name"]
	}

	It("lets a higher-priority policy with preemption Always take a claimed template, and the lower one lets go", func() {
		const ns, name = "preemption", "web"
		namespace(ns)
		deployment(ns, name, "nginx:1.25")
		mustApply(`
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: low, namespace: %[1]s}
spec:
  priority: 1
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement: {clusterAffinity: {clusterNames: [member1]}}
`, ns)
		Eventually(func() string { return memberImage("member1", ns, name) }).Should(Equal("nginx:1.25"))
		Expect(claimedBy(ns, name)).To(Equal("low"))

		By("a policy of higher priority without preemption (Never, the default), and one with preemption Always")
		mustApply(`
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: never, namespace: %[1]s}
spec:
  priority: 9
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement: {clusterAffinity: {clusterNames: [member3]}}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: high, namespace: %[1]s}
spec:
  priority: 5
  preemption: Always
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement: {clusterAffinity: {clusterNames: [member2]}}
`, ns)
		Eventually(func() string { return claimedBy(ns, name) }).Should(Equal("high"))
		Eventually(func() string { return memberImage("member2", ns, name) }).Should(Equal("nginx:1.25"))
		Eventually(func() string { return memberImage("member1", ns, name) }).Should(BeEmpty(), "the lower policy's cluster lets go")
		rb, err := binding(ns, "web-deployment")
		Expect(err).NotTo(HaveOccurred())
		Expect(rb.Annotations).To(HaveKeyWithValue("propagationpolicy.karmada.io/name", "high"))
		Expect(eventCount(ns, "Deployment", name, "PreemptPolicySucceed",
			"Propagation policy(preemption/high) preempted propagation policy(preemption/low) successfully")).To(BeNumerically(">=", 1))
		// never has the highest priority but does not preempt: high keeps it.
		Expect(claimedBy(ns, name)).To(Equal("high"))
		Expect(memberImage("member3", ns, name)).To(BeEmpty())
	})

	It("lets a PropagationPolicy with preemption Always take a ClusterPropagationPolicy's claim, whatever the priorities", func() {
		const ns, name, cpp = "preemption-cluster", "web", "preemption-cluster-everything"
		namespace(ns)
		deployment(ns, name, "nginx:1.25")
		DeferCleanup(func() {
			err := hubClient.Delete(ctx, &policyv1alpha1.ClusterPropagationPolicy{ObjectMeta: metav1.ObjectMeta{Name: cpp}})
			Expect(client.IgnoreNotFound(err)).To(Succeed())
		})
		mustApply(`
apiVersion: policy.karmada.io/v1alpha1
kind: ClusterPropagationPolicy
metadata: {name: %[2]s}
spec:
  priority: 100
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, namespace: %[1]s, name: web}]
  placement: {clusterAffinity: {clusterNames: [member1]}}
`, ns, cpp)
		Eventually(func() string { return memberImage("member1", ns, name) }).Should(Equal("nginx:1.25"))
		Expect(clusterClaimedBy(ns, name)).To(Equal(cpp))

		By("a PropagationPolicy of lower priority with preemption Always")
		mustApply(`
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: takeover, namespace: %[1]s}
spec:
  preemption: Always
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement: {clusterAffinity: {clusterNames: [member2]}}
`, ns)
		Eventually(func() string { return claimedBy(ns, name) }).Should(Equal("takeover"))
		Eventually(func() string { return memberImage("member2", ns, name) }).Should(Equal("nginx:1.25"))
		Eventually(func() string { return memberImage("member1", ns, name) }).Should(BeEmpty(), "the ClusterPropagationPolicy's cluster lets go")
		Expect(clusterClaimedBy(ns, name)).To(BeEmpty(), "the ClusterPropagationPolicy's claim is released")
		Expect(eventCount(ns, "Deployment", name, "PreemptPolicySucceed",
			"Propagation policy(preemption-cluster/takeover) preempted cluster propagation policy(preemption-cluster-everything) successfully")).To(BeNumerically(">=", 1))
	})

	It("copies the PriorityClass's value into the binding, and writes no binding while it is missing", func() {
		const ns, name, class = "schedule-priority", "web", "e2e-schedule-priority"
		namespace(ns)
		DeferCleanup(func() {
			err := hubClient.Delete(ctx, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: class}})
			Expect(client.IgnoreNotFound(err)).To(Succeed())
		})
		deployment(ns, name, "nginx:1.25")
		mustApply(`
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement: {clusterAffinity: {clusterNames: [member1, member2, member3]}}
  schedulePriority: {priorityClassSource: KubePriorityClass, priorityClassName: %[2]s}
`, ns, class)

		By("while the PriorityClass is missing: the policy says why, the template is told, and there is no binding")
		Eventually(func() *metav1.Condition { return policyCondition(ns, name, "SchedulePriorityResolved") }).Should(And(
			Not(BeNil()), HaveField("Status", metav1.ConditionFalse), HaveField("Reason", "PriorityClassNotFound")))
		Eventually(func() int32 {
			return eventCount(ns, "Deployment", name, "ApplyPolicyFailed",
				`Apply policy(schedule-priority/web) failed: priorityclasses.scheduling.k8s.io "e2e-schedule-priority" not found`)
		}).Should(BeNumerically(">=", 1))
		_, err := binding(ns, "web-deployment")
		Expect(apierrors.IsNotFound(err)).To(BeTrue(), "a binding was written without its priority: %v", err)

		By("creating the PriorityClass: the binding carries its value and the members get the template")
		Expect(hubClient.Create(ctx, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: class}, Value: 1000})).To(Succeed())
		Eventually(func() (int32, error) {
			rb, err := binding(ns, "web-deployment")
			if err != nil || rb.Spec.SchedulePriority == nil {
				return 0, err
			}
			return rb.Spec.SchedulePriority.Priority, nil
		}).Should(Equal(int32(1000)))
		Eventually(func() map[string]string { return imagesEverywhere(ns, name) }).Should(Equal(everywhere("nginx:1.25")))
		Eventually(func() *metav1.Condition { return policyCondition(ns, name, "SchedulePriorityResolved") }).Should(And(
			Not(BeNil()), HaveField("Status", metav1.ConditionTrue), HaveField("Reason", "PriorityClassFound")))
	})
})
