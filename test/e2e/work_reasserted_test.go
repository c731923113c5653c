package e2e

import (
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/federator-dev/federator/test/framework"
)

// A Work whose spec differs from what its binding wants is written again:
// the binding controller watches Works (their spec and annotations) and
// re-asserts, so nothing, a stale write of its own included, leaves a Work
// wrong for good.
var _ = Describe("a Work changed behind the binding controller", func() {
	const ns, name = "work-reasserted", "web"

	It("is written back to what its binding wants, still held, and the held cluster never stores either version", func() {
		propagatedEverywhere(ns, name)
		member2 := recordMember("member2", deploymentRef(ns, name))

		By("holding member2, then updating the image")
		patchPolicy(ns, name, `{"spec": {"suspension": {"dispatchingOnClusters": {"clusterNames": ["member2"]}}}}`)
		Eventually(func() *metav1.Condition { return dispatching("member2", "Deployment", ns, name) }).Should(And(
			Not(BeNil()), HaveField("Reason", "SuspendDispatching")))
		setImage(ns, name, "nginx:1.27")
		dispatcherHolds(ns, name, "nginx:1.27", "member2")

		By("writing another image into member2's Work by hand")
		Eventually(func() error {
			w, err := env.Work(ctx, "member2", "Deployment", ns, name)
			if err != nil {
				return err
			}
			raw := string(w.Spec.Workload.Manifests[0].Raw)
			Expect(raw).To(ContainSubstring(`"nginx:1.27"`))
			w.Spec.Workload.Manifests[0].Raw = []byte(strings.Replace(raw, `"nginx:1.27"`, `"nginx:9.9"`, 1))
			return hubClient.Update(ctx, w)
		}).Should(Succeed())

		By("the binding controller writing the Work back, held")
		Eventually(func() string { return workImage("member2", ns, name) }).Should(Equal("nginx:1.27"))
		w, err := env.Work(ctx, "member2", "Deployment", ns, name)
		Expect(err).NotTo(HaveOccurred())
		Expect(ptr.Deref(w.Spec.SuspendDispatching, false)).To(BeTrue(), "the Work written back is still held")
		dispatcherHolds(ns, name, "nginx:1.27", "member2")
		Expect(stored(member2, framework.Image)).NotTo(ContainElement(Or(Equal("nginx:9.9"), Equal("nginx:1.27"))),
			"member2, held all along, stored a version")

		By("resuming member2: it gets what the template says")
		patchPolicy(ns, name, `{"spec": {"suspension": null}}`)
		Eventually(func() string { return memberImage("member2", ns, name) }, "30s").Should(Equal("nginx:1.27"))
		Expect(stored(member2, framework.Image)).NotTo(ContainElement("nginx:9.9"))
	})
})
