package e2e

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"

	"github.com/federator-dev/federator/test/framework"
)

var _ = Describe("bad input", func() {
	It("refuses suspension.dispatching together with dispatchingOnClusters, and no member changes", func() {
		const ns, name = "bad-suspension", "web"
		propagatedEverywhere(ns, name)
		recorders := recordEverywhere(deploymentRef(ns, name))

		refused := &policyv1alpha1.Suspension{Dispatching: ptr.To(true),
			DispatchingOnClusters: &policyv1alpha1.SuspendClusters{ClusterNames: []string{"member2"}}}
		err := applyPropagationPolicy(ns, name, refused)
		Expect(err).To(MatchError(ContainSubstring("spec.suspension: Invalid value: suspension dispatching cannot co-exist with dispatchingOnClusters.clusterNames")))

		pp := &policyv1alpha1.PropagationPolicy{}
		Expect(hubClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, pp)).To(Succeed())
		Expect(pp.Spec.Suspension).To(BeNil(), "the refused change is not stored")
		// Time for a write the refusal should have prevented to happen.
		// Status writes (members that run workloads) are not the refusal's.
		contentWrites := func() map[string]int {
			out := map[string]int{}
			for m, r := range recorders {
				out[m] = r.ContentWrites()
			}
			return out
		}
		Consistently(contentWrites, "2s").Should(Equal(map[string]int{"member1": 0, "member2": 0, "member3": 0}),
			"no object in any member is written")
		for m, r := range recorders {
			Expect(r.History(0, mark(r), framework.Image)).To(HaveEach(HaveSuffix(" nginx:1.25")), "%s stored only nginx:1.25", m)
		}
		setImage(ns, name, "nginx:1.27")
		Eventually(func() map[string]string { return imagesEverywhere(ns, name) }).Should(Equal(everywhere("nginx:1.27")),
			"the policy still works as it was")
	})

	DescribeTable("refuses a suspension whose two spellings disagree or mix all clusters with a list",
		func(suspension, refusal string) {
			const ns = "bad-alias"
			namespace(ns)
			err := apply(`
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  suspension: %[2]s
`, ns, suspension)
			Expect(err).To(MatchError(ContainSubstring(refusal)))
			pp := &policyv1alpha1.PropagationPolicy{}
			Expect(apierrors.IsNotFound(hubClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, pp))).To(BeTrue(), "nothing stored")
		},
		Entry("all-clusters spellings disagree", `{dispatching: true, suspendDispatching: false}`,
			"spec.suspension: Invalid value: suspendDispatching is an alias of dispatching (the suspension proposal's spelling) and the two disagree"),
		Entry("cluster lists disagree", `{dispatchingOnClusters: {clusterNames: [member2]}, suspendDispatchingOnClusters: {clusterNames: [member3]}}`,
			"spec.suspension: Invalid value: suspendDispatchingOnClusters is an alias of dispatchingOnClusters (the suspension proposal's spelling) and the two list different clusters"),
		Entry("all clusters in the proposal's spelling, a list in Karmada's", `{suspendDispatching: true, dispatchingOnClusters: {clusterNames: [member2]}}`,
			"spec.suspension: Invalid value: suspension dispatching cannot co-exist with dispatchingOnClusters.clusterNames (in either spelling"),
		Entry("both in the proposal's spelling", `{suspendDispatching: true, suspendDispatchingOnClusters: {clusterNames: [member2]}}`,
			"spec.suspension: Invalid value: suspension dispatching cannot co-exist with dispatchingOnClusters.clusterNames (in either spelling"),
	)

	It("reports a clusterNames entry naming no known cluster on the policy", func() {
		const ns, name = "unknown-cluster", "web"
		namespace(ns)
		deployment(ns, name, "nginx:1.25")
		mustApply(`
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: %[2]s, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: %[2]s}]
  placement:
    clusterAffinity: {clusterNames: [member1, member9]}
`, ns, name)
		Eventually(func() string { return memberImage("member1", ns, name) }).Should(Equal("nginx:1.25"))
		Eventually(func() []string { return templateEvents(ns, "PropagationPolicy", name) }).Should(ContainElement(And(HavePrefix("UnknownCluster: "), ContainSubstring("member9"))))
		Expect(memberImage("member2", ns, name)).To(BeEmpty())
	})
})
