package e2e

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
)

var _ = Describe("activationPreference: Lazy", func() {
	const ns, name = "lazy-activation", "web"

	It("lets a policy change reach a template only when the template next changes", func() {
		namespace(ns)
		Expect(apply(`
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: %[2]s, namespace: %[1]s}
spec:
  activationPreference: Lazy
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: %[2]s}]
  placement: {clusterAffinity: {clusterNames: [member1, member2, member3]}}
`, ns, name)).To(Succeed())
		deployment(ns, name, "nginx:1.25")
		Eventually(func() map[string]string { return imagesEverywhere(ns, name) }).Should(Equal(everywhere("nginx:1.25")))
		placedOn := func() []string {
			rb := &workv1alpha2.ResourceBinding{}
			if err := hubClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name + "-deployment"}, rb); err != nil {
				return []string{err.Error()}
			}
			return rb.Spec.Placement.ClusterAffinity.ClusterNames
		}

		By("dropping member3 from the placement: the binding keeps the old placement")
		patchPolicy(ns, name, `{"spec": {"placement": {"clusterAffinity": {"clusterNames": ["member1", "member2"]}}}}`)
		Consistently(placedOn, "3s").Should(Equal([]string{"member1", "member2", "member3"}))
		Expect(memberImage("member3", ns, name)).To(Equal("nginx:1.25"))

		By("changing the template: the policy change comes with it")
		setImage(ns, name, "nginx:1.27")
		Eventually(placedOn).Should(Equal([]string{"member1", "member2"}))
		Eventually(func() map[string]string { return imagesEverywhere(ns, name) }).Should(Equal(
			map[string]string{"member1": "nginx:1.27", "member2": "nginx:1.27", "member3": ""}))
	})
})
