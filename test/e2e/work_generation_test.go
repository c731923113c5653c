package e2e

import (
	"time"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	workkeys "github.com/federator-dev/federator/apis/work"
	"github.com/federator-dev/federator/test/framework"
)

// A Work's Dispatching condition speaks of the generation it names
// (observedGeneration): the CLI shows a cluster Held only while that is
// the Work's current generation, and Pending while the dispatcher has not
// decided on a newer one, however long that takes.
var _ = Describe("a Work's state for its current generation", func() {
	It("shows Pending, not Held, in get works and get rollout while the dispatcher has not seen the Work's new spec", func() {
		f, hub := separateFleet(1, false)
		first := runController(f)
		joinMembers(f, hub)
		const ns, name = "work-generation", "web"
		Expect(hub.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
		Expect(framework.Apply(ctx, hub, framework.NewDeployment(ns, name, "nginx:1.25"), fieldOwner)).To(Succeed())
		pp := framework.NewDeploymentPolicy(ns, name, name, "member1")
		pp.Spec.Suspension = &policyv1alpha1.Suspension{Dispatching: ptr.To(true)}
		Expect(framework.Apply(ctx, hub, pp, fieldOwner)).To(Succeed())

		work := func() *workv1alpha1.Work { return workOn(hub, "member1", ns, name) }
		// dispatching is the Work's Dispatching reason, and "current" or
		// "stale": whether the condition speaks of the Work's generation.
		dispatching := func() string {
			w := work()
			if w == nil {
				return ""
			}
			c := meta.FindStatusCondition(w.Status.Conditions, workkeys.ConditionDispatching)
			if c == nil {
				return ""
			}
			if c.ObservedGeneration != w.Generation {
				return c.Reason + " stale"
			}
			return c.Reason + " current"
		}
		getWorks := func() string { return cliOn(f.Hub.KubeconfigPath, "get", "works", "-n", ns).stdout }
		getRollout := func() string { return cliOn(f.Hub.KubeconfigPath, "get", "rollout", name, "-n", ns).stdout }

		By("holding the Work, and saying so for its current generation")
		Eventually(dispatching).Should(Equal(workkeys.ReasonSuspendDispatching + " current"))
		Expect(getWorks()).To(MatchRegexp(`(?m)^member1 +\S+ +Deployment/web +SuspendDispatching `))
		Expect(getRollout()).To(MatchRegexp(`(?m)^Deployment/web +member1 +Held `))

		By("changing the template while no dispatcher runs: the Work's new generation has no decision yet")
		first.Kill().Wait("10s")
		runController(f, "--controllers", "*,-execution")
		Expect(framework.Apply(ctx, hub, framework.NewDeployment(ns, name, "nginx:1.26"), fieldOwner)).To(Succeed())
		Eventually(func() string { return workImageOn(hub, "member1", ns, name) }).Should(Equal("nginx:1.26"))
		Expect(dispatching()).To(Equal(workkeys.ReasonSuspendDispatching+" stale"),
			"the condition of the old generation stays as it was, the Work's generation moved past it")
		Expect(getWorks()).To(MatchRegexp(`(?m)^member1 +\S+ +Deployment/web +Pending `))
		Expect(getRollout()).To(MatchRegexp(`(?m)^Deployment/web +member1 +Pending `))

		By("the dispatcher back: Held again, for the new generation")
		runController(f, "--controllers", "execution")
		Eventually(dispatching, time.Minute).Should(Equal(workkeys.ReasonSuspendDispatching + " current"))
		Expect(getWorks()).To(MatchRegexp(`(?m)^member1 +\S+ +Deployment/web +SuspendDispatching `))
	})
})
