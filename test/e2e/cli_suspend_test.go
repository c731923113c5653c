package e2e

import (
	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	"github.com/karmada-io/karmada/pkg/util/names"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/federator-dev/federator/test/framework"
)

// `federator suspend` and `federator resume`, run as the built binary: the
// reason lands on the object, in the Works and in `get rollout`; no
// generation rolls; resuming converges.
var _ = Describe("federator suspend and resume (cli)", func() {
	policyOf := func(ns, name string) *policyv1alpha1.PropagationPolicy {
		GinkgoHelper()
		pp := &policyv1alpha1.PropagationPolicy{}
		Expect(hubClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, pp)).To(Succeed())
		return pp
	}
	// workHold is the Dispatching reason and hold message of a cluster's
	// Work for Deployment ns/name.
	workHold := func(member, ns, name string) []string {
		w := &workv1alpha1.Work{}
		key := client.ObjectKey{Namespace: names.GenerateExecutionSpaceName(member), Name: names.GenerateWorkName("Deployment", name, ns)}
		if err := hubClient.Get(ctx, key, w); err != nil {
			return []string{err.Error()}
		}
		reason := ""
		if c := meta.FindStatusCondition(w.Status.Conditions, "Dispatching"); c != nil {
			reason = c.Reason
		}
		return []string{reason, w.Annotations["work.federator.dev/hold-message"]}
	}
	templateGeneration := func(ns, name string) int64 {
		GinkgoHelper()
		d := &appsv1.Deployment{}
		Expect(hubClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, d)).To(Succeed())
		return d.Generation
	}

	It("suspends a policy with a reason that reaches the Works and get rollout, rolls no generation, and resume converges", func() {
		const ns = "cli-suspend-policy"
		propagatedEverywhere(ns, "web")
		seen := map[string]*framework.Recorder{}
		for m := range members {
			seen[m] = recordMember(m, deploymentRef(ns, "web"))
		}
		generation := policyOf(ns, "web").Generation

		r := federatorCLI("suspend", "pp", "web", "-n", ns, "-m", "incident 42")
		Expect(r.code).To(Equal(0), r.stderr)
		Expect(r.stdout).To(Equal(`PropagationPolicy cli-suspend-policy/web: suspended on every cluster ("incident 42")` + "\n"))
		pp := policyOf(ns, "web")
		Expect(pp.Annotations).To(HaveKeyWithValue("propagation.federator.dev/suspended", "incident 42"))
		Expect(pp.Generation).To(Equal(generation), "an annotation rolls no generation")

		held := `suspended by annotation propagation.federator.dev/suspended on PropagationPolicy cli-suspend-policy/web ("incident 42"); remove the annotation to resume`
		for m := range members {
			Eventually(func() []string { return workHold(m, ns, "web") }).Should(Equal([]string{"SuspendDispatching", held}), m)
		}
		Eventually(func() map[string]string { return rolloutStates(ns, "web") }).Should(Equal(everywhere("Held")))
		for m, c := range rolloutOf(ns, "web") {
			Expect(c.Message).To(Equal(held), m)
			Expect(c.Reason).To(Equal("SuspendDispatching"), m)
		}

		By("rolling nginx:1.27 while suspended: no member gets it")
		setImage(ns, "web", "nginx:1.27")
		dispatcherHolds(ns, "web", "nginx:1.27", "member1", "member2", "member3")

		By("suspending again updates the reason and says so")
		r = federatorCLI("suspend", "pp", "web", "-n", ns, "-m", "incident 42: rolling back")
		Expect(r.code).To(Equal(0), r.stderr)
		Expect(r.stdout).To(ContainSubstring(`already suspended on every cluster; reason updated from "incident 42" to "incident 42: rolling back"`))
		Eventually(func() string { return rolloutOf(ns, "web")["member2"].Message }).Should(ContainSubstring(`("incident 42: rolling back")`))
		Expect(policyOf(ns, "web").Generation).To(Equal(generation))

		By("resuming: every member converges, and get rollout says Applied at the template's generation")
		for m, rec := range seen {
			Expect(stored(rec, framework.Image)).NotTo(ContainElement("nginx:1.27"), "%s got the new image while suspended", m)
		}
		r = federatorCLI("resume", "pp", "web", "-n", ns)
		Expect(r.code).To(Equal(0), r.stderr)
		Expect(r.stdout).To(ContainSubstring("nothing else holds member1, member2, member3; dispatching resumes"))
		Eventually(func() map[string]string { return imagesEverywhere(ns, "web") }).Should(Equal(everywhere("nginx:1.27")))
		Eventually(func() map[string]string { return rolloutStates(ns, "web") }).Should(Equal(everywhere("Applied")))
		for m, c := range rolloutOf(ns, "web") {
			Expect(c.Generation).To(Equal(templateGeneration(ns, "web")), m)
			Expect(c.Images).To(Equal([]string{"nginx:1.27"}), m)
		}
		Expect(policyOf(ns, "web").Generation).To(Equal(generation))

		By("resuming what is not suspended says so and exits 0")
		r = federatorCLI("resume", "pp", "web", "-n", ns)
		Expect(r.code).To(Equal(0), r.stderr)
		Expect(r.stdout).To(ContainSubstring("not suspended on every cluster by annotation propagation.federator.dev/suspended; nothing to resume"))
	})

	It("holds one Deployment by its own annotation while its sibling under the same policy updates", func() {
		const ns = "cli-suspend-template"
		namespace(ns)
		deployment(ns, "web", "nginx:1.25")
		deployment(ns, "api", "nginx:1.25")
		mustApply(`
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: shop, namespace: %s}
spec:
  resourceSelectors:
  - {apiVersion: apps/v1, kind: Deployment, name: web}
  - {apiVersion: apps/v1, kind: Deployment, name: api}
  placement:
    clusterAffinity: {clusterNames: [member1, member2, member3]}
`, ns)
		for _, name := range []string{"web", "api"} {
			Eventually(func() map[string]string { return imagesEverywhere(ns, name) }).Should(Equal(everywhere("nginx:1.25")), name)
		}
		seen := map[string]*framework.Recorder{}
		for m := range members {
			seen[m] = recordMember(m, deploymentRef(ns, "web"))
		}

		r := federatorCLI("suspend", "deployment", "web", "-n", ns, "-m", "bad config in web")
		Expect(r.code).To(Equal(0), r.stderr)
		Expect(r.stdout).To(Equal(`Deployment cli-suspend-template/web: suspended on every cluster ("bad config in web")` + "\n"))
		Eventually(func() map[string]string { return rolloutStates(ns, "web") }).Should(Equal(everywhere("Held")))
		Expect(rolloutOf(ns, "web")["member1"].Message).To(Equal(
			`suspended by annotation propagation.federator.dev/suspended on Deployment cli-suspend-template/web ("bad config in web"); remove the annotation to resume`))

		By("rolling nginx:1.27 to both: api updates everywhere, web nowhere")
		setImage(ns, "web", "nginx:1.27")
		setImage(ns, "api", "nginx:1.27")
		Eventually(func() map[string]string { return imagesEverywhere(ns, "api") }).Should(Equal(everywhere("nginx:1.27")))
		Eventually(func() map[string]string { return rolloutStates(ns, "api") }).Should(Equal(everywhere("Applied")))
		dispatcherHolds(ns, "web", "nginx:1.27", "member1", "member2", "member3")
		table := federatorCLI("get", "rollout", "-n", ns)
		Expect(table.code).To(Equal(0), table.stderr)
		Expect(table.stdout).To(MatchRegexp(`(?m)^Deployment/api\s+member2\s+Applied\s+\d+\s+\S+\s+nginx:1\.27\s+-$`))
		By("get rollout says what the held members still run, and what they wait for")
		Expect(table.stdout).To(MatchRegexp(`(?m)^Deployment/web\s+member2\s+Held\s+-\s+\S+\s+nginx:1\.25\s+wants nginx:1\.27; suspended by annotation .*\("bad config in web"\)`))
		for m, c := range rolloutOf(ns, "web") {
			Expect(c.RunningImages).To(Equal([]string{"nginx:1.25"}), m)
			Expect(c.WantedImages).To(Equal([]string{"nginx:1.27"}), m)
		}

		By("resuming the template converges it")
		for m, rec := range seen {
			Expect(stored(rec, framework.Image)).NotTo(ContainElement("nginx:1.27"), "%s got web's new image while it was suspended", m)
		}
		r = federatorCLI("resume", "deploy", "web", "-n", ns)
		Expect(r.code).To(Equal(0), r.stderr)
		Eventually(func() map[string]string { return imagesEverywhere(ns, "web") }).Should(Equal(everywhere("nginx:1.27")))
		Eventually(func() map[string]string { return rolloutStates(ns, "web") }).Should(Equal(everywhere("Applied")))
	})

	It("--clusters member3 holds only member3, rolls no generation, and resume --clusters releases it", func() {
		const ns = "cli-suspend-clusters"
		propagatedEverywhere(ns, "web")
		onMember3 := recordMember("member3", deploymentRef(ns, "web"))
		generation := policyOf(ns, "web").Generation

		r := federatorCLI("suspend", "pp", "web", "-n", ns, "--clusters", "member3", "-m", "canary looks bad")
		Expect(r.code).To(Equal(0), r.stderr)
		Expect(r.stdout).To(Equal(`PropagationPolicy cli-suspend-clusters/web: suspended on cluster member3 ("canary looks bad")` + "\n"))
		pp := policyOf(ns, "web")
		Expect(pp.Annotations).To(HaveKeyWithValue("suspended.propagation.federator.dev/member3", "canary looks bad"))
		Expect(pp.Annotations).NotTo(HaveKey("propagation.federator.dev/suspended"))
		Expect(pp.Generation).To(Equal(generation))
		Eventually(func() map[string]string { return rolloutStates(ns, "web") }).Should(Equal(
			map[string]string{"member1": "Applied", "member2": "Applied", "member3": "Held"}))
		Expect(rolloutOf(ns, "web")["member3"].Message).To(Equal(
			`suspended by annotation suspended.propagation.federator.dev/member3 on PropagationPolicy cli-suspend-clusters/web ("canary looks bad"); remove the annotation to resume`))

		By("rolling nginx:1.27: member1 and member2 get it, member3 keeps nginx:1.25")
		setImage(ns, "web", "nginx:1.27")
		Eventually(func() map[string]string { return imagesEverywhere(ns, "web") }).Should(Equal(
			map[string]string{"member1": "nginx:1.27", "member2": "nginx:1.27", "member3": "nginx:1.25"}))
		dispatcherHolds(ns, "web", "nginx:1.27", "member3")
		Expect(policyOf(ns, "web").Generation).To(Equal(generation))

		By("an unknown cluster is refused and changes nothing")
		r = federatorCLI("resume", "pp", "web", "-n", ns, "--clusters", "member3,member9")
		Expect(r.code).To(Equal(1))
		Expect(r.stderr).To(ContainSubstring(`cluster "member9" is not registered on the hub (registered: member1, member2, member3); nothing changed`))
		Expect(policyOf(ns, "web").Annotations).To(HaveKey("suspended.propagation.federator.dev/member3"))

		By("resume --clusters member3 releases it")
		Expect(stored(onMember3, framework.Image)).NotTo(ContainElement("nginx:1.27"), "member3 got the new image while suspended")
		r = federatorCLI("resume", "pp", "web", "-n", ns, "--clusters", "member3")
		Expect(r.code).To(Equal(0), r.stderr)
		Expect(r.stdout).To(ContainSubstring(`suspension on cluster member3 lifted: annotation suspended.propagation.federator.dev/member3 removed (reason was "canary looks bad")`))
		Eventually(func() map[string]string { return imagesEverywhere(ns, "web") }).Should(Equal(everywhere("nginx:1.27")))
		Expect(policyOf(ns, "web").Generation).To(Equal(generation))
	})
})
