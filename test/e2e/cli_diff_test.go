package e2e

import (
	"strings"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/federator-dev/federator/test/framework"
)

// withoutStatus is obj without what status writes change
// (framework.Content): any other write shows.
func withoutStatus(obj client.Object) string {
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	Expect(err).NotTo(HaveOccurred())
	return framework.Content(u)
}

// `federator diff`: what resuming would change in each held member, from a
// server-side dry run; nothing is written anywhere; kubectl diff's exit
// codes.
var _ = Describe("federator diff (cli)", func() {
	const ns = "cli-diff"

	// written is what diff could write to, without the parts others keep
	// moving: the Deployment in every member, and on the hub the template,
	// its policy and its Works. Members run workloads, so the deployment
	// controller and the dispatcher's status collection go on writing
	// status (and the revision annotation) while the spec runs; a
	// resourceVersion would count those as diff's writes.
	written := func() map[string]string {
		out := map[string]string{}
		for m, c := range members {
			d := &appsv1.Deployment{}
			Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, d)).To(Succeed())
			out[m] = withoutStatus(d)
		}
		for name, obj := range map[string]client.Object{"template": &appsv1.Deployment{}, "policy": &policyv1alpha1.PropagationPolicy{}} {
			err := hubClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, obj)
			Expect(err).NotTo(HaveOccurred())
			out[name] = withoutStatus(obj)
		}
		works := &workv1alpha1.WorkList{}
		Expect(hubClient.List(ctx, works)).To(Succeed())
		for i, w := range works.Items {
			if strings.HasPrefix(w.Name, "web-") && w.Annotations["resourcebinding.karmada.io/namespace"] == ns {
				out[w.Namespace] = withoutStatus(&works.Items[i])
			}
		}
		return out
	}

	It("shows the pending image change for held clusters only, writes nothing, and exits 0, 1 or 2", func() {
		propagatedEverywhere(ns, "web")

		By("nothing held: nothing to compare, exit 0")
		r := federatorCLI("diff", "deployment", "web", "-n", ns)
		Expect(r.code).To(Equal(0), r.stderr)
		Expect(r.stdout).To(BeEmpty())
		Expect(r.stderr).To(ContainSubstring("Deployment cli-diff/web: no cluster is held, so resuming changes nothing"))

		By("holding member2 and member3 and rolling nginx:1.27")
		r = federatorCLI("suspend", "pp", "web", "-n", ns, "--clusters", "member2,member3", "-m", "staged")
		Expect(r.code).To(Equal(0), r.stderr)
		Eventually(func() map[string]string { return rolloutStates(ns, "web") }).Should(Equal(
			map[string]string{"member1": "Applied", "member2": "Held", "member3": "Held"}))
		setImage(ns, "web", "nginx:1.27")
		Eventually(func() string { return memberImage("member1", ns, "web") }).Should(Equal("nginx:1.27"))
		for _, m := range []string{"member2", "member3"} {
			Eventually(func() string { return workImage(m, ns, "web") }).Should(Equal("nginx:1.27"), m)
			// The dispatcher has recorded the hold of this spec: its
			// status write is not the diff's.
			Eventually(func() bool { return heldByDispatcher(m, ns, "web") }).Should(BeTrue(), m)
		}
		before := written()

		By("diff shows member2's and member3's pending change, and exits 1")
		r = federatorCLI("diff", "deployment", "web", "-n", ns)
		Expect(r.code).To(Equal(1), r.stderr)
		for _, m := range []string{"member2", "member3"} {
			Expect(r.stdout).To(ContainSubstring("--- " + m + " apps/v1 Deployment cli-diff/web (live)\n+++ " + m + " apps/v1 Deployment cli-diff/web (after resume)\n"))
		}
		Expect(r.stdout).NotTo(ContainSubstring("member1"))
		Expect(strings.Count(r.stdout, "\n-      - image: nginx:1.25\n+      - image: nginx:1.27\n")).To(Equal(2), r.stdout)
		for _, never := range []string{"status:", "managedFields", "resourceVersion", "work.federator.dev/applied-hash", "suspended.propagation"} {
			Expect(r.stdout).NotTo(ContainSubstring(never))
		}

		By("a cluster that already runs it differs in nothing: exit 0")
		r = federatorCLI("diff", "deployment", "web", "-n", ns, "--clusters", "member1")
		Expect(r.code).To(Equal(0), r.stderr)
		Expect(r.stdout).To(BeEmpty())

		By("diff of the policy compares what it propagates, here only member3")
		r = federatorCLI("diff", "pp", "web", "-n", ns, "--clusters", "member3")
		Expect(r.code).To(Equal(1), r.stderr)
		Expect(r.stdout).To(HavePrefix("--- member3 apps/v1 Deployment cli-diff/web (live)\n"))
		Expect(r.stdout).NotTo(ContainSubstring("member2"))

		By("an error exits 2 and names the object")
		r = federatorCLI("diff", "deployment", "cart", "-n", ns)
		Expect(r.code).To(Equal(2))
		Expect(r.stderr).To(ContainSubstring("Deployment cli-diff/cart not found on the hub"))
		r = federatorCLI("diff", "deployment")
		Expect(r.code).To(Equal(2))

		By("nothing was written: not in any member, not on the hub")
		Expect(written()).To(Equal(before))
		Expect(imagesEverywhere(ns, "web")).To(Equal(map[string]string{"member1": "nginx:1.27", "member2": "nginx:1.25", "member3": "nginx:1.25"}))

		By("after resuming, nothing is held and nothing differs")
		r = federatorCLI("resume", "pp", "web", "-n", ns, "--clusters", "member2,member3")
		Expect(r.code).To(Equal(0), r.stderr)
		Eventually(func() map[string]string { return imagesEverywhere(ns, "web") }).Should(Equal(everywhere("nginx:1.27")))
		r = federatorCLI("diff", "deployment", "web", "-n", ns, "--clusters", "member1,member2,member3")
		Expect(r.code).To(Equal(0), r.stdout)
		Expect(r.stdout).To(BeEmpty())
	})
})
