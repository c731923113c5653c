package e2e

import (
	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/federator-dev/federator/test/framework"
)

var _ = Describe("rollback on the hub while a cluster is suspended", func() {
	const ns, name = "rollback", "web"

	It("never lets the suspended cluster see the bad version, and does not rewrite it on resume", func() {
		propagatedEverywhere(ns, name)
		rollbackWhileSuspended(rollout{
			template: deploymentRef(ns, name),
			policy:   &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}},
			version:  framework.Image,
			write:    func(image string) { setImage(ns, name, image) },
		}, "nginx:1.25", "nginx:bad")
	})
})

// rollout is a template propagated to every member, and how a spec rolls
// new versions of it.
type rollout struct {
	// template names the template on the hub and its copies in members.
	template client.Object
	// policy names the (Cluster)PropagationPolicy placing it, whose
	// suspension the spec patches.
	policy client.Object
	// version reads what changes between versions (an image, a verb).
	version framework.Field
	// write puts the template at a version on the hub.
	write func(version string)
}

func (r rollout) kind() string {
	GinkgoHelper()
	gvk, err := apiutil.GVKForObject(r.template, hubClient.Scheme())
	Expect(err).NotTo(HaveOccurred())
	return gvk.Kind
}

// memberVersions is each member's version of the template, "" where absent.
func (r rollout) memberVersions() map[string]string {
	return env.MemberValues(ctx, r.template, r.version)
}

// workVersion is the version member's Work carries.
func (r rollout) workVersion(member string) string {
	return env.WorkValue(ctx, member, r.kind(), r.template.GetNamespace(), r.template.GetName(), r.version)
}

// rollbackWhileSuspended starts from r propagated at good everywhere:
// member3 is suspended, bad is rolled out and rolled back on the hub, then
// member3 is resumed. member3 must never store bad, and since its content
// never changed, resuming must not write it at all.
func rollbackWhileSuspended(r rollout, good, bad string) {
	GinkgoHelper()
	kind, ns, name := r.kind(), r.template.GetNamespace(), r.template.GetName()
	Expect(r.memberVersions()).To(Equal(everywhere(good)))
	member3 := recordMember("member3", r.template)

	By("suspending member3 and rolling out a bad version")
	Expect(framework.MergePatch(ctx, hubClient, r.policy,
		`{"spec": {"suspension": {"dispatchingOnClusters": {"clusterNames": ["member3"]}}}}`)).To(Succeed())
	Eventually(func() *metav1.Condition { return dispatching("member3", kind, ns, name) }).Should(And(
		Not(BeNil()), HaveField("Reason", "SuspendDispatching")))
	r.write(bad)
	Eventually(r.memberVersions).Should(Equal(map[string]string{"member1": bad, "member2": bad, "member3": good}))
	Eventually(func() string { return r.workVersion("member3") }).Should(Equal(bad))

	By("rolling back on the hub, then resuming member3")
	r.write(good)
	Eventually(r.memberVersions).Should(Equal(everywhere(good)))
	Eventually(func() string { return r.workVersion("member3") }).Should(Equal(good))
	Expect(framework.MergePatch(ctx, hubClient, r.policy, `{"spec": {"suspension": null}}`)).To(Succeed())
	Eventually(func() *metav1.Condition { return dispatching("member3", kind, ns, name) }).Should(
		HaveField("Reason", "Dispatching"))
	// Once member3's Work is applied at its current generation the
	// dispatcher has decided about the resumed Work: any write it made is
	// in member3 by then.
	Eventually(func() error { return appliedCurrent("member3", kind, ns, name) }).Should(Succeed())

	Expect(stored(member3, r.version)).NotTo(ContainElement(bad), "member3 must never have stored the bad version")
	// Status writes (members that run workloads) are not federator's.
	Expect(member3.ContentWrites()).To(BeZero(), "member3's object did not change, so it must not have been written at all")
}
