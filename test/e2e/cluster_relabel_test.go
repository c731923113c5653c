package e2e

import (
	"fmt"
	"regexp"
	"strconv"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// reconciles is how many passes the ResourceBinding controller has made,
// from controller-runtime's controller_runtime_reconcile_total.
func reconciles() float64 {
	GinkgoHelper()
	total := 0.0
	for _, m := range regexp.MustCompile(`(?m)^controller_runtime_reconcile_total\{controller="resourcebinding",result="[a-z_]+"\} (\S+)$`).FindAllStringSubmatch(scrape(), -1) {
		v, err := strconv.ParseFloat(m[1], 64)
		Expect(err).NotTo(HaveOccurred())
		total += v
	}
	return total
}

// A Cluster relabelled concerns only the bindings whose placement selects
// clusters by labels: those are placed again at once, the others are not
// decided again (a hub of thousands of bindings would otherwise re-decide
// every one of them for each label a person or a tool sets on a Cluster).
var _ = Describe("a Cluster relabelled", func() {
	const ns, fixed = "relabel", 12
	const label = "e2e.federator.dev/relabel"

	It("re-places the bindings that select clusters by labels, and no other", func() {
		namespace(ns)
		for i := range fixed {
			deployment(ns, fmt.Sprintf("fixed-%d", i), "nginx:1.25")
		}
		deployment(ns, "picky", "nginx:1.25")
		mustApply(`apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: fixed, namespace: %s}
spec:
  resourceSelectors:
  - {apiVersion: apps/v1, kind: Deployment, labelSelector: {matchLabels: {tier: fixed}}}
  placement:
    clusterAffinity: {clusterNames: [member1]}
`, ns)
		// The fixed ones are claimed by a label of their own.
		for i := range fixed {
			patch := `{"metadata":{"labels":{"tier":"fixed"}}}`
			Expect(hubClient.Patch(ctx, deploymentRef(ns, fmt.Sprintf("fixed-%d", i)), client.RawPatch(types.MergePatchType, []byte(patch)))).To(Succeed())
		}
		mustApply(`apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: picky, namespace: %s}
spec:
  resourceSelectors:
  - {apiVersion: apps/v1, kind: Deployment, name: picky}
  placement:
    clusterAffinity:
      labelSelector: {matchLabels: {%s: "yes"}}
`, ns, label)
		for i := range fixed {
			Eventually(func() string { return memberImage("member1", ns, fmt.Sprintf("fixed-%d", i)) }).Should(Equal("nginx:1.25"))
		}

		settled := func() float64 {
			GinkgoHelper()
			var last float64 = -1
			Eventually(func() bool {
				now := reconciles()
				same := now == last
				last = now
				return same
			}, "60s", "2s").Should(BeTrue(), "the binding controller settles: two readings 2s apart agree")
			return last
		}
		before := settled()
		Expect(imagesEverywhere(ns, "picky")).To(Equal(everywhere("")))

		By("labelling member2: the binding that selects by that label places picky there")
		cluster := &clusterv1alpha1.Cluster{}
		cluster.Name = "member2"
		Expect(hubClient.Patch(ctx, cluster, client.RawPatch(types.MergePatchType,
			[]byte(`{"metadata":{"labels":{"`+label+`":"yes"}}}`)))).To(Succeed())
		DeferCleanup(func() {
			Expect(hubClient.Patch(ctx, cluster, client.RawPatch(types.MergePatchType,
				[]byte(`{"metadata":{"labels":{"`+label+`":null}}}`)))).To(Succeed())
		})
		Eventually(func() map[string]string { return imagesEverywhere(ns, "picky") }).Should(Equal(
			map[string]string{"member1": "", "member2": "nginx:1.25", "member3": ""}))

		By("the bindings placed by name were not decided again")
		// picky's binding takes a few passes (placement, then its new
		// Work's status); every other binding on the hub (the fixed ones
		// here, and those earlier specs left) would add one each.
		passes := settled() - before
		GinkgoWriter.Printf("binding controller passes after the relabel: %.0f\n", passes)
		Expect(passes).To(BeNumerically("<", fixed/2))
	})
})
