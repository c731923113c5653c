package e2e

import (
	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/federator-dev/federator/internal/conditions"
	"github.com/federator-dev/federator/test/framework"
)

// clustersKnown is the ClustersKnown condition on PropagationPolicy ns/name.
func clustersKnown(ns, name string) *metav1.Condition {
	return policyCondition(ns, name, "ClustersKnown")
}

// policyCondition is a condition on PropagationPolicy ns/name (status the
// hub's CRDs add; Karmada's Go type has none, so it is read unstructured);
// nil when absent.
func policyCondition(ns, name, conditionType string) *metav1.Condition {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(policyv1alpha1.SchemeGroupVersion.WithKind("PropagationPolicy"))
	if err := hubClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, u); err != nil {
		return nil
	}
	return meta.FindStatusCondition(conditions.Of(u), conditionType)
}

var _ = Describe("a suspension list naming a cluster that does not exist", func() {
	const ns, name = "suspend-unknown-cluster", "web"

	It("holds every cluster of the policy (a typo must not release the cluster meant) until the name is fixed", func() {
		propagatedEverywhere(ns, name)
		recorders := recordEverywhere(deploymentRef(ns, name))

		By("suspending 'membr3', a typo of member3, then updating the image")
		patchPolicy(ns, name, `{"spec": {"suspension": {"dispatchingOnClusters": {"clusterNames": ["membr3"]}}}}`)
		for m := range members {
			Eventually(func() *metav1.Condition { return dispatching(m, "Deployment", ns, name) }).Should(And(
				Not(BeNil()), HaveField("Reason", "SuspendDispatching")), m)
			Expect(holdMessageOf(m, ns, name)).To(Equal("spec.suspension.dispatchingOnClusters.clusterNames of PropagationPolicy "+
				"suspend-unknown-cluster/web names \"membr3\", which is no registered Cluster; every cluster is held until the name is fixed or such a cluster joins"), m)
		}
		Eventually(func() *metav1.Condition { return clustersKnown(ns, name) }).Should(And(
			HaveField("Status", metav1.ConditionFalse), HaveField("Reason", "UnknownSuspendedCluster"),
			HaveField("Message", `spec.suspension.dispatchingOnClusters.clusterNames: "membr3" name no registered Cluster; `+
				`dispatching to every cluster of this policy's bindings is held until the name is fixed or such a Cluster joins`)))
		newVersionHeldEverywhere(ns, name, "nginx:1.27", recorders)

		By("fixing the name: only member3 stays held")
		patchPolicy(ns, name, `{"spec": {"suspension": {"dispatchingOnClusters": {"clusterNames": ["member3"]}}}}`)
		Eventually(func() map[string]string { return imagesEverywhere(ns, name) }).Should(Equal(
			map[string]string{"member1": "nginx:1.27", "member2": "nginx:1.27", "member3": "nginx:1.25"}))
		Expect(holdMessageOf("member3", ns, name)).To(HavePrefix("suspended by spec.suspension.dispatchingOnClusters.clusterNames"))
		Expect(stored(recorders["member3"], framework.Image)).NotTo(ContainElement("nginx:1.27"))
		Expect(clustersKnown(ns, name)).To(And(HaveField("Status", metav1.ConditionTrue), HaveField("Reason", "ClustersKnown")))
	})

	It("re-checks the names as Clusters leave and join: a suspended cluster that leaves holds the rest until it rejoins", func() {
		const ns = "clusters-known"
		namespace(ns)
		deployment(ns, name, "nginx:1.25")
		propagationPolicy(ns, name, &policyv1alpha1.Suspension{DispatchingOnClusters: &policyv1alpha1.SuspendClusters{ClusterNames: []string{"member3"}}})
		Eventually(func() map[string]string { return imagesEverywhere(ns, name) }).Should(Equal(
			map[string]string{"member1": "nginx:1.25", "member2": "nginx:1.25", "member3": ""}))
		Eventually(func() *metav1.Condition { return clustersKnown(ns, name) }).Should(HaveField("Status", metav1.ConditionTrue))
		recorders := recordEverywhere(deploymentRef(ns, name))

		By("deleting the member3 Cluster: the policy says so, and member1 and member2 are held")
		rejoin := leave("member3")
		Eventually(func() *metav1.Condition { return clustersKnown(ns, name) }).Should(And(
			HaveField("Status", metav1.ConditionFalse), HaveField("Reason", "UnknownSuspendedCluster"),
			HaveField("Message", And(ContainSubstring(`spec.suspension.dispatchingOnClusters.clusterNames: "member3"`),
				ContainSubstring(`spec.placement.clusterAffinity.clusterNames: "member3"`)))))
		for _, m := range []string{"member1", "member2"} {
			Eventually(func() string { return holdMessageOf(m, ns, name) }).Should(ContainSubstring("names \"member3\", which is no registered Cluster"), m)
		}
		setImage(ns, name, "nginx:1.27")
		dispatcherHolds(ns, name, "nginx:1.27", "member1", "member2")
		held := markEverywhere(recorders)

		By("registering member3 again: the names are known, member1 and member2 get the new version")
		rejoin()
		Eventually(func() *metav1.Condition { return clustersKnown(ns, name) }).Should(HaveField("Status", metav1.ConditionTrue))
		Eventually(func() map[string]string { return imagesEverywhere(ns, name) }).Should(Equal(
			map[string]string{"member1": "nginx:1.27", "member2": "nginx:1.27", "member3": ""}))
		for _, m := range []string{"member1", "member2"} {
			Expect(storedBefore(recorders[m], held[m], framework.Image)).NotTo(ContainElement("nginx:1.27"), m)
		}
		Expect(stored(recorders["member3"], framework.Image)).To(BeEmpty())
	})
})
