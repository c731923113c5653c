package e2e

import (
	"regexp"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	. "github.com/onsi/gomega/gstruct"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/federator-dev/federator/test/framework"
)

// A freeze is one write: the dispatchers check the Freezes before each
// write to a member, so nothing new reaches a frozen member from the
// moment the hub stores it, whatever its policies say, and unfreeze sends
// what it held.
var _ = Describe("federator freeze and unfreeze", func() {
	const ns, name = "freeze", "web"
	freezeName := regexp.MustCompile(`^Freeze (freeze-\S+): `)

	It("holds every write to the members a freeze names, says why on their Works, and sends what it held once unfrozen", func() {
		namespace(ns)
		deployment(ns, name, "nginx:1.25")
		propagationPolicy(ns, name, nil)
		Eventually(func() map[string]string { return imagesEverywhere(ns, name) }).Should(Equal(everywhere("nginx:1.25")))
		recorders := recordEverywhere(deploymentRef(ns, name))
		DeferCleanup(func() { federatorCLI("unfreeze") })

		By("freezing member2 and member3")
		r := federatorCLI("freeze", "--clusters", "member3,member2", "-m", "incident 42")
		Expect(r.code).To(Equal(0), r.stderr)
		Expect(r.stdout).To(MatchRegexp(`^Freeze freeze-\S+: every write to member2, member3 is held from \S+ \(the hub's clock\) until .federator unfreeze freeze-`))
		frozen := freezeName.FindStringSubmatch(r.stdout)[1]

		By("a new version: member1 gets it; member2 and member3 store nothing, and their Works name the freeze")
		setImage(ns, name, "nginx:1.26")
		Eventually(func() string { return imagesEverywhere(ns, name)["member1"] }).Should(Equal("nginx:1.26"))
		for _, m := range []string{"member2", "member3"} {
			Eventually(func() *metav1.Condition { return dispatching(m, "Deployment", ns, name) }).Should(And(
				Not(BeNil()),
				HaveField("Status", metav1.ConditionFalse),
				HaveField("Reason", "Frozen"),
				HaveField("Message", "Freeze "+frozen+" holds every write to "+m+": incident 42; `federator unfreeze` lifts it")), m)
		}
		Eventually(func() rolloutCluster { return rolloutOf(ns, name)["member2"] }).Should(And(
			HaveField("State", "Held"), HaveField("Reason", "Frozen"),
			HaveField("Message", ContainSubstring("Freeze "+frozen+" holds every write to member2: incident 42"))))
		Expect(federatorCLI("get", "clusters").stdout).To(MatchRegexp(`(?m)^member3 .* ` + frozen + ` \(incident 42\) `))
		By("the Works record the freeze, for Karmada's tools and agents: suspended, with its reason and message")
		for _, m := range []string{"member2", "member3"} {
			Eventually(func() string {
				w := workOn(hubClient, m, ns, name)
				if w == nil || w.Spec.SuspendDispatching == nil || !*w.Spec.SuspendDispatching {
					return "not suspended"
				}
				return w.Annotations["work.federator.dev/hold-reason"] + ": " + w.Annotations["work.federator.dev/hold-message"]
			}).Should(Equal("Frozen: Freeze "+frozen+" holds every write to "+m+": incident 42; `federator unfreeze` lifts it"), m)
		}
		Expect(workOn(hubClient, "member1", ns, name).Spec.SuspendDispatching).To(Or(BeNil(), PointTo(BeFalse())))
		held := markEverywhere(recorders)

		By("unfreezing: the version it held goes out")
		r = federatorCLI("unfreeze")
		Expect(r.code).To(Equal(0), r.stderr)
		Expect(r.stdout).To(Equal("Unfrozen: Freeze " + frozen + " deleted\n"))
		Eventually(func() map[string]string { return imagesEverywhere(ns, name) }, "20s").Should(Equal(everywhere("nginx:1.26")))
		for _, m := range []string{"member2", "member3"} {
			Eventually(func() *metav1.Condition { return dispatching(m, "Deployment", ns, name) }).Should(HaveField("Reason", "Dispatching"), m)
			Expect(storedBefore(recorders[m], held[m], framework.Image)).NotTo(ContainElement("nginx:1.26"),
				"%s stored the version while frozen", m)
		}
	})

	It("ends a freeze --for by itself, by the hub's clock, and refuses a cluster the hub does not know", func() {
		namespace(ns + "-for")
		deployment(ns+"-for", name, "nginx:1.25")
		propagationPolicy(ns+"-for", name, nil)
		Eventually(func() map[string]string { return imagesEverywhere(ns+"-for", name) }).Should(Equal(everywhere("nginx:1.25")))
		DeferCleanup(func() { federatorCLI("unfreeze") })

		r := federatorCLI("freeze", "--clusters", "member2,member9")
		Expect(r.code).NotTo(Equal(0))
		Expect(r.stderr).To(ContainSubstring(`--clusters: cluster "member9" is not registered on the hub`))

		By("freezing every member for 10s")
		recorders := recordEverywhere(deploymentRef(ns+"-for", name))
		r = federatorCLI("freeze", "--for", "10s", "-m", "a short one")
		Expect(r.code).To(Equal(0), r.stderr)
		Expect(r.stdout).To(MatchRegexp(`^Freeze freeze-\S+: every write to every member is held from \S+ \(the hub's clock\) until \S+ \(--for 10s\)`))
		setImage(ns+"-for", name, "nginx:1.26")
		for m := range members {
			Eventually(func() *metav1.Condition { return dispatching(m, "Deployment", ns+"-for", name) }).Should(
				HaveField("Reason", "Frozen"), m)
		}
		held := markEverywhere(recorders)
		Eventually(func() map[string]string { return imagesEverywhere(ns+"-for", name) }, "30s").Should(Equal(everywhere("nginx:1.26")))
		for m := range members {
			Expect(storedBefore(recorders[m], held[m], framework.Image)).NotTo(ContainElement("nginx:1.26"),
				"%s stored the version while frozen", m)
		}
	})
})
