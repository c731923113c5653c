package e2e

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1alpha1 "github.com/federator-dev/federator/apis/rollouts/v1alpha1"
	"github.com/federator-dev/federator/test/framework"
)

// A Rollout that cannot be used is refused, or says why, and changes
// nothing in any member.
var _ = Describe("rollouts with bad input", func() {
	It("refuses a Rollout that names a cluster in two stages, with a message that says what to fix", func() {
		const ns = "rollout-bad-stages"
		namespace(ns)
		ro := &rolloutsv1alpha1.Rollout{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rollouts.federator.dev/v1alpha1", Kind: "Rollout"},
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
			Spec: rolloutsv1alpha1.RolloutSpec{PolicyRef: rolloutsv1alpha1.PolicyReference{Name: "web"},
				Stages: []rolloutsv1alpha1.Stage{{Name: "canary", Clusters: []string{"member1"}}, {Name: "rest", Clusters: []string{"member2", "member1"}}}},
		}
		err := framework.Apply(ctx, hubClient, ro, fieldOwner)
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("a cluster is named in two stages: name each cluster in one stage only"))
	})

	It("says a Rollout's policy does not exist, and releases and holds nothing", func() {
		const ns = "rollout-no-policy"
		namespace(ns)
		deployment(ns, "web", "nginx:1.25")
		propagationPolicy(ns, "web", nil)
		propagatedEverywhere(ns, "web")
		ro := &rolloutsv1alpha1.Rollout{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rollouts.federator.dev/v1alpha1", Kind: "Rollout"},
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "typo"},
			Spec: rolloutsv1alpha1.RolloutSpec{PolicyRef: rolloutsv1alpha1.PolicyReference{Name: "wbe"},
				Stages: []rolloutsv1alpha1.Stage{{Name: "canary", Clusters: []string{"member1"}}}},
		}
		Expect(framework.Apply(ctx, hubClient, ro, fieldOwner)).To(Succeed())
		Eventually(func(g Gomega) {
			got := &rolloutsv1alpha1.Rollout{}
			g.Expect(hubClient.Get(ctx, client.ObjectKeyFromObject(ro), got)).To(Succeed())
			c := meta.FindStatusCondition(got.Status.Conditions, rolloutsv1alpha1.ConditionFailed)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Reason).To(Equal(rolloutsv1alpha1.ReasonPolicyNotFound))
			g.Expect(c.Message).To(Equal("PropagationPolicy rollout-no-policy/wbe does not exist: nothing is rolled out; create it or fix spec.policyRef.name"))
		}).Should(Succeed())
		By("the policy it does not govern still releases a new image to every member")
		setImage(ns, "web", "nginx:1.26")
		Eventually(func() map[string]string { return imagesEverywhere(ns, "web") }).Should(Equal(everywhere("nginx:1.26")))
	})
})
