package e2e

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
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

	It("refuses a maxConcurrency or maxFailures that is no number or percentage, with a message that says what to write", func() {
		const ns = "rollout-bad-numbers"
		namespace(ns)
		concurrency := "spec.stages[].maxConcurrency must be a whole number of clusters (1 or more; 0 would stall the stage) or a percentage of the stage's clusters above 0, e.g. 1 or 25%"
		failures := "spec.maxFailures must be a whole number of clusters (0 or more) or a percentage of the stage's clusters, e.g. 1 or 25%"
		for _, tc := range []struct {
			maxConcurrency, maxFailures *intstr.IntOrString
			want                        string
		}{
			{maxConcurrency: ptr.To(intstr.FromString("5O%")), want: concurrency},
			{maxConcurrency: ptr.To(intstr.FromInt32(-1)), want: concurrency},
			{maxConcurrency: ptr.To(intstr.FromInt32(0)), want: concurrency},
			{maxFailures: ptr.To(intstr.FromString("5O%")), want: failures},
			{maxFailures: ptr.To(intstr.FromInt32(-1)), want: failures},
		} {
			ro := &rolloutsv1alpha1.Rollout{
				TypeMeta:   metav1.TypeMeta{APIVersion: "rollouts.federator.dev/v1alpha1", Kind: "Rollout"},
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
				Spec: rolloutsv1alpha1.RolloutSpec{PolicyRef: rolloutsv1alpha1.PolicyReference{Name: "web"}, MaxFailures: tc.maxFailures,
					Stages: []rolloutsv1alpha1.Stage{{Name: "canary", Clusters: []string{"member1"}, MaxConcurrency: tc.maxConcurrency}}},
			}
			err := framework.Apply(ctx, hubClient, ro, fieldOwner)
			Expect(err).To(HaveOccurred(), "maxConcurrency %v, maxFailures %v", tc.maxConcurrency, tc.maxFailures)
			Expect(err.Error()).To(ContainSubstring(tc.want))
		}
		By("a number or a percentage is taken")
		ro := &rolloutsv1alpha1.Rollout{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rollouts.federator.dev/v1alpha1", Kind: "Rollout"},
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
			Spec: rolloutsv1alpha1.RolloutSpec{PolicyRef: rolloutsv1alpha1.PolicyReference{Name: "web"}, MaxFailures: ptr.To(intstr.FromString("0%")),
				Stages: []rolloutsv1alpha1.Stage{
					{Name: "canary", Clusters: []string{"member1"}, MaxConcurrency: ptr.To(intstr.FromInt32(1))},
					{Name: "rest", Clusters: []string{"member2", "member3"}, MaxConcurrency: ptr.To(intstr.FromString("50%"))}}},
		}
		Expect(framework.Apply(ctx, hubClient, ro, fieldOwner)).To(Succeed())
		Expect(hubClient.Delete(ctx, ro)).To(Succeed())
	})

	It("refuses an analysis count above 1 without an interval, and says at once that a query or condition cannot be used, releasing nothing new", func() {
		const ns = "rollout-bad-analysis"
		namespace(ns)
		deployment(ns, "web", "nginx:1.25")
		propagationPolicy(ns, "web", nil)
		propagatedEverywhere(ns, "web")
		analysis := &rolloutsv1alpha1.Analysis{Provider: rolloutsv1alpha1.AnalysisProvider{Prometheus: rolloutsv1alpha1.PrometheusProvider{
			Address: "http://127.0.0.1:1", Query: `errors{cluster="{{ .Cluster }}"}`}}, SuccessCondition: "result[0] < 0.05", Count: ptr.To[int32](3)}
		ro := &rolloutsv1alpha1.Rollout{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rollouts.federator.dev/v1alpha1", Kind: "Rollout"},
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
			Spec: rolloutsv1alpha1.RolloutSpec{PolicyRef: rolloutsv1alpha1.PolicyReference{Name: "web"}, Analysis: analysis,
				Stages: []rolloutsv1alpha1.Stage{{Name: "canary", Clusters: []string{"member1"}}}},
		}
		err := framework.Apply(ctx, hubClient, ro, fieldOwner)
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("analysis.interval is needed when analysis.count is above 1"))
		analysis.Interval = &metav1.Duration{Duration: time.Minute}
		Expect(framework.Apply(ctx, hubClient, ro, fieldOwner)).To(Succeed())
		Eventually(func(g Gomega) int64 {
			got := &rolloutsv1alpha1.Rollout{}
			g.Expect(hubClient.Get(ctx, client.ObjectKeyFromObject(ro), got)).To(Succeed())
			return got.Status.Revision
		}).Should(Equal(int64(1)))

		recorders := recordEverywhere(framework.NewDeployment(ns, "web", ""))
		for field, bad := range map[string]func(){
			"spec.analysis.provider.prometheus.query of Rollout rollout-bad-analysis/web is not a valid template": func() {
				analysis.Provider.Prometheus.Query = `errors{cluster="{{ .Cluster }"}`
			},
			`spec.analysis of Rollout rollout-bad-analysis/web: successCondition "result[0] <" does not compile`: func() {
				analysis.Provider.Prometheus.Query, analysis.SuccessCondition = `errors{cluster="{{ .Cluster }}"}`, "result[0] <"
			},
		} {
			bad()
			Expect(framework.Apply(ctx, hubClient, ro, fieldOwner)).To(Succeed())
			Eventually(func(g Gomega) {
				c := failedCondition(g, ro)
				g.Expect(c.Reason).To(Equal(rolloutsv1alpha1.ReasonInvalidSpec))
				g.Expect(c.Message).To(ContainSubstring(field))
			}).Should(Succeed())
		}
		By("a new image is not released anywhere while the analysis cannot be used")
		setImage(ns, "web", "nginx:1.26")
		time.Sleep(5 * time.Second)
		for m, r := range recorders {
			Expect(stored(r, framework.Image)).NotTo(ContainElement("nginx:1.26"), "%s stored the new image", m)
		}
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
			c := failedCondition(g, ro)
			g.Expect(c.Reason).To(Equal(rolloutsv1alpha1.ReasonPolicyNotFound))
			g.Expect(c.Message).To(Equal("PropagationPolicy rollout-no-policy/wbe does not exist: nothing is rolled out; create it or fix spec.policyRef.name"))
		}).Should(Succeed())
		By("the policy it does not govern still releases a new image to every member")
		setImage(ns, "web", "nginx:1.26")
		Eventually(func() map[string]string { return imagesEverywhere(ns, "web") }).Should(Equal(everywhere("nginx:1.26")))
	})
})

// failedCondition is the Failed condition the hub stores on ro now, for
// its current generation.
func failedCondition(g Gomega, ro *rolloutsv1alpha1.Rollout) *metav1.Condition {
	got := &rolloutsv1alpha1.Rollout{}
	g.Expect(hubClient.Get(ctx, client.ObjectKeyFromObject(ro), got)).To(Succeed())
	c := meta.FindStatusCondition(got.Status.Conditions, rolloutsv1alpha1.ConditionFailed)
	g.Expect(c).NotTo(BeNil())
	g.Expect(c.ObservedGeneration).To(Equal(got.Generation))
	return c
}
