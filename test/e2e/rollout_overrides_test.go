package e2e

import (
	"strings"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1alpha1 "github.com/federator-dev/federator/apis/rollouts/v1alpha1"
	"github.com/federator-dev/federator/test/framework"
)

// A revision is what each cluster gets: the template with the overrides
// that apply there. An OverridePolicy change walks through the stages like
// a template change, and a rollback sends back exactly what the cluster
// had, overrides included.
var _ = Describe("staged rollouts of an override change", func() {
	It("walks an OverridePolicy change through the stages, and rolls the failed canary back to what it had with the override before", func() {
		w := useWorkloadFleet()
		const ns, name = "default", "pinned"
		s := stagedRollout{w: w, ns: ns, name: name}
		tag := func(value string) {
			GinkgoHelper()
			op := &policyv1alpha1.OverridePolicy{
				TypeMeta:   metav1.TypeMeta{APIVersion: "policy.karmada.io/v1alpha1", Kind: "OverridePolicy"},
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
				Spec: policyv1alpha1.OverrideSpec{
					ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: name}},
					OverrideRules: []policyv1alpha1.RuleWithCluster{{Overriders: policyv1alpha1.Overriders{
						ImageOverrider: []policyv1alpha1.ImageOverrider{{Component: policyv1alpha1.Tag, Operator: policyv1alpha1.OverriderOpReplace, Value: value}},
					}}},
				},
			}
			Expect(framework.Apply(ctx, w.hub, op, fieldOwner)).To(Succeed())
		}
		DeferCleanup(func() {
			for _, o := range []client.Object{
				&rolloutsv1alpha1.Rollout{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}},
				&policyv1alpha1.OverridePolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}},
				&policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}},
				deploymentRef(ns, name),
			} {
				Expect(client.IgnoreNotFound(w.hub.Delete(ctx, o))).To(Succeed())
			}
		})

		By("a Deployment pinned by an OverridePolicy to nginx:1.24, under a Rollout of three stages")
		Expect(framework.Apply(ctx, w.hub, framework.NewDeployment(ns, name, "nginx:1.25"), fieldOwner)).To(Succeed())
		tag("1.24")
		w.placeOnEveryMember("apps/v1", "Deployment", ns, name)
		s.apply(rolloutsv1alpha1.OnFailureRollback)
		s.completedAt(1)
		for m := range w.inMembers {
			s.memberImageIs(m, "nginx:1.24")
		}

		recorders := s.recordMembers()
		hubDyn, err := dynamic.NewForConfig(w.f.Hub.Config)
		Expect(err).NotTo(HaveOccurred())
		statuses, err := framework.Record(ctx, hubDyn, w.hub, &rolloutsv1alpha1.Rollout{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}, "hub")
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(statuses.Stop)
		lastWork, err := framework.Record(ctx, hubDyn, w.hub, workOn(w.hub, "member3", ns, name), "hub")
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(lastWork.Stop)

		By("the OverridePolicy's tag changes to 1.26: a new revision, released stage by stage")
		tag("1.26")
		s.completedAt(2)
		for m := range w.inMembers {
			s.memberImageIs(m, "nginx:1.26")
		}
		s.stagesStarted(2)
		states := framework.JSONPath("{.status.revision} {range .status.clusters[*]}{.name}={.state} {end}")
		released := framework.JSONPath("{.spec.suspendDispatching} {.spec.workload.manifests[0].spec.template.spec.containers[0].image}")
		_ = mark(lastWork)
		releasedAt := firstVersion(lastWork, func(v string) bool { return v == "false nginx:1.26" }, released)
		healthyAt := firstVersion(statuses, func(v string) bool { return strings.HasPrefix(v, "2 ") && strings.Contains(v, "member2=Healthy") }, states)
		Expect(releasedAt).To(BeNumerically(">", 0), "member3's Work was released with nginx:1.26")
		Expect(healthyAt).To(BeNumerically(">", 0), "a status with member2 healthy at revision 2 was stored")
		Expect(releasedAt).To(BeNumerically(">", healthyAt), "member3's Work was released before the Rollout stored member2 healthy")

		By("the tag changes to a broken one: the canary fails and goes back to what it had, 1.26 from the override, not the template's 1.25")
		const broken = "nginx:1.27-broken"
		tag("1.27-broken")
		Eventually(func(g Gomega) {
			ro := s.get()
			// A revision 4 says why it started (RevisionStarted names the
			// template, the cluster and the hashes that changed).
			g.Expect(ro.Status.Revision).To(Equal(int64(3)), func() string {
				return "the Rollout's Events:\n" + strings.Join(eventsOn(w.hub, ns, "Rollout", name), "\n")
			})
			var member1 rolloutsv1alpha1.ClusterStatus
			for _, c := range ro.Status.Clusters {
				if c.Name == "member1" {
					member1 = c
				}
			}
			g.Expect(member1.State).To(Equal(rolloutsv1alpha1.StateRolledBack), "%+v", ro.Status)
			g.Expect(member1.Revision).To(Equal(int64(2)))
		}, "2m").Should(Succeed())
		s.memberImageIs("member1", "nginx:1.26")
		Expect(stored(recorders["member1"], framework.Image)).To(ContainElement(broken), "member1 got the broken tag before it was rolled back")
		for _, m := range []string{"member2", "member3"} {
			Expect(stored(recorders[m], framework.Image)).NotTo(ContainElement(broken), "%s stored the broken tag", m)
		}
	})
})
