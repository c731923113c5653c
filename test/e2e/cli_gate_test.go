package e2e

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gatingv1alpha1 "github.com/federator-dev/federator/apis/gating/v1alpha1"
)

var _ = Describe("federator gate and get gates", func() {
	const ns = "cli-gate"

	It("open a gate for a while through the CLI, which then closes it by itself, and list what it holds", Label("smoke"), func() {
		namespace(ns)
		Expect(apply(`
apiVersion: gating.federator.dev/v1alpha1
kind: Gate
metadata: {name: approval, namespace: %s}
spec: {default: closed, interval: 1m}
`, ns)).To(Succeed())
		deployment(ns, "web", "nginx:1.25")
		Expect(apply(`
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: %s, annotations: {gating.federator.dev/gates: approval}}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement: {clusterAffinity: {clusterNames: [member1, member2, member3]}}
`, ns)).To(Succeed())
		opened := func() *metav1.Condition {
			g := &gatingv1alpha1.Gate{}
			if err := hubClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "approval"}, g); err != nil {
				return nil
			}
			return meta.FindStatusCondition(g.Status.Conditions, "Opened")
		}
		Eventually(opened).Should(And(Not(BeNil()), HaveField("Status", metav1.ConditionFalse)))

		By("listing the gate: closed by default, holding the web policy")
		Eventually(func() string { return federatorCLI("get", "gates", "-n", ns, "-o", "wide").stdout }).Should(MatchRegexp(
			`(?m)^approval +False +closed +- +- +pp cli-gate/web +\S+ +Gate closed by default$`))

		By("opening it for 4s: dispatched, then closed again by itself")
		r := federatorCLI("gate", "open", "approval", "-n", ns, "--for", "4s")
		Expect(r.code).To(Equal(0), r.stderr)
		Expect(r.stdout).To(MatchRegexp(`^Gate cli-gate/approval: open requested at \S+; it closes again at \S+ \(--for 4s\)`))
		Eventually(func() map[string]string { return imagesEverywhere(ns, "web") }).Should(Equal(everywhere("nginx:1.25")))
		Eventually(opened, "20s").Should(And(HaveField("Status", metav1.ConditionFalse), HaveField("Reason", "CloseRequested")))
		Expect(federatorCLI("get", "gates", "approval", "-n", ns).stdout).To(MatchRegexp(`(?m)^approval +False +closed `))

		By("an unknown gate is an error that names it, and changes nothing")
		r = federatorCLI("gate", "close", "aproval", "-n", ns)
		Expect(r.code).NotTo(Equal(0))
		Expect(r.stderr).To(ContainSubstring("aproval"))
	})
})
