package e2e

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	"github.com/karmada-io/karmada/pkg/util/names"

	"github.com/federator-dev/federator/test/framework"
)

// A policy's holds outlive the policy: a GitOps prune and re-apply of a
// policy (or `kubectl replace --force`) deletes it and creates it again, and
// in between nothing claims the template. The Works keep the holds and the
// deletion delay they last had until a policy claims the template again.
var _ = Describe("a policy deleted and created again", func() {
	annotatedPolicy := func(ns, name string, annotations map[string]string) *policyv1alpha1.PropagationPolicy {
		pp := framework.NewDeploymentPolicy(ns, name, name, env.MemberNames()...)
		pp.Annotations = annotations
		return pp
	}
	worksSyncedReason := func(ns, name string) string {
		rb := &workv1alpha2.ResourceBinding{}
		if err := hubClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: names.GenerateBindingName("Deployment", name)}, rb); err != nil {
			return err.Error()
		}
		if c := meta.FindStatusCondition(rb.Status.Conditions, "WorksSynced"); c != nil {
			return c.Reason
		}
		return ""
	}

	It("keeps holding what its suspended annotation held, through the prune and the re-apply", func() {
		const ns, name = "policy-recreated", "web"
		freeze := map[string]string{"propagation.federator.dev/suspended": "change-freeze"}
		namespace(ns)
		deployment(ns, name, "nginx:1.25")
		Expect(framework.Apply(ctx, hubClient, annotatedPolicy(ns, name, nil), fieldOwner)).To(Succeed())
		Eventually(func() map[string]string { return imagesEverywhere(ns, name) }).Should(Equal(everywhere("nginx:1.25")))
		inMembers := recordEverywhere(deploymentRef(ns, name))

		By("freezing the policy and changing the template: nginx:1.28 is held")
		Expect(framework.Apply(ctx, hubClient, annotatedPolicy(ns, name, freeze), fieldOwner)).To(Succeed())
		for m := range members {
			Eventually(func() *metav1.Condition { return dispatching(m, "Deployment", ns, name) }).Should(
				HaveField("Reason", "SuspendDispatching"), m)
		}
		setImage(ns, name, "nginx:1.28")
		for m := range members {
			Eventually(func() string { return workImage(m, ns, name) }).Should(Equal("nginx:1.28"), m)
			Eventually(func() bool { return heldByDispatcher(m, ns, name) }).Should(BeTrue(), m)
		}

		By("pruning the policy and applying it again, as GitOps does")
		Expect(hubClient.Delete(ctx, annotatedPolicy(ns, name, nil))).To(Succeed())
		Eventually(func() string { return worksSyncedReason(ns, name) }).Should(Equal("Unclaimed"))
		for m := range members {
			Expect(workImage(m, ns, name)).To(Equal("nginx:1.28"), m)
			Expect(dispatching(m, "Deployment", ns, name)).To(HaveField("Reason", "SuspendDispatching"), m)
		}
		Expect(framework.Apply(ctx, hubClient, annotatedPolicy(ns, name, freeze), fieldOwner)).To(Succeed())
		Eventually(func() string { return worksSyncedReason(ns, name) }).Should(Equal("WorksSynced"))
		for m := range members {
			Eventually(func() bool { return heldByDispatcher(m, ns, name) }).Should(BeTrue(), m)
		}

		By("lifting the freeze: nginx:1.28 goes out, and was never stored before")
		held := markEverywhere(inMembers)
		patch := `{"metadata":{"annotations":{"propagation.federator.dev/suspended":null}}}`
		Expect(hubClient.Patch(ctx, annotatedPolicy(ns, name, nil), client.RawPatch(types.MergePatchType, []byte(patch)))).To(Succeed())
		Eventually(func() map[string]string { return imagesEverywhere(ns, name) }, "20s").Should(Equal(everywhere("nginx:1.28")))
		for m, r := range inMembers {
			Expect(storedBefore(r, held[m], framework.Image)).NotTo(ContainElement("nginx:1.28"), "%s stored nginx:1.28 while it was held", m)
		}
	})

	// prunedKeepsCountingDown propagates Deployment ns/web under a policy
	// with a deletion delay of 1h, deletes the policy, then (after between)
	// the template, and proves every member's copy counts down from then
	// instead of being deleted; then ends the countdowns on request.
	prunedKeepsCountingDown := func(ns string, between func(ns, name string)) {
		GinkgoHelper()
		const name = "web"
		namespace(ns)
		deployment(ns, name, "nginx:1.25")
		Expect(framework.Apply(ctx, hubClient, annotatedPolicy(ns, name, map[string]string{delayKey: "1h"}), fieldOwner)).To(Succeed())
		Eventually(func() map[string]string { return imagesEverywhere(ns, name) }).Should(Equal(everywhere("nginx:1.25")))
		inMembers := recordEverywhere(deploymentRef(ns, name))

		Expect(hubClient.Delete(ctx, annotatedPolicy(ns, name, nil))).To(Succeed())
		between(ns, name)
		Expect(hubClient.Delete(ctx, deploymentRef(ns, name))).To(Succeed())
		for m := range members {
			due := countingDown(m, ns, name, time.Hour)
			Expect(due).To(BeTemporally(">", time.Now().Add(50*time.Minute)), m)
		}
		for m, r := range inMembers {
			Expect(stored(r, countdownMark)).NotTo(ContainElement(HavePrefix("DELETED")), "%s deleted its copy at once", m)
		}
		By("the countdowns can still be ended on request")
		for m := range members {
			run := federatorCLI("delete", "--now", "deployment", name, "-n", ns, "--cluster", m)
			Expect(run.code).To(BeZero(), run.stderr)
		}
	}

	It("honours the policy's deletion delay when the policy and then the template are pruned", func() {
		prunedKeepsCountingDown("policy-pruned", func(ns, name string) {
			Eventually(func() string { return worksSyncedReason(ns, name) }).Should(Equal("Unclaimed"))
		})
	})

	It("honours the policy's deletion delay when the policy and the template are pruned together", func() {
		// As `kubectl delete -f app.yaml` does with a policy and its
		// template in one file: one after the other, waiting for nothing.
		prunedKeepsCountingDown("policy-template-pruned", func(string, string) {})
	})
})
