package e2e

import (
	"io"
	"net/http"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/federator-dev/federator/test/framework"
)

// scrape is the controllers' Prometheus metrics, or the error reading them.
func scrape() string {
	resp, err := http.Get("http://" + metricsAddr + "/metrics")
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return string(body)
}

var _ = Describe("metrics", func() {
	const ns, name = "metrics", "web"

	It("exposes held Works, member readiness and member writes, prefixed federator_", func() {
		namespace(ns)
		deployment(ns, name, "nginx:1.25")
		propagationPolicy(ns, name, framework.SuspendClusters("member3"))
		Eventually(func() string { return memberImage("member1", ns, name) }).Should(Equal("nginx:1.25"))
		Eventually(scrape).Should(And(
			MatchRegexp(`federator_works\{cluster="member3",dispatching="SuspendDispatching"\} [1-9]`),
			MatchRegexp(`federator_works\{cluster="member1",dispatching="Dispatching"\} [1-9]`),
			ContainSubstring(`federator_cluster_ready{cluster="member1"} 1`),
			MatchRegexp(`federator_member_manifest_applies_total\{cluster="member1",result="created"\} [1-9]`),
			MatchRegexp(`federator_dispatch_latency_seconds_count\{cluster="member1"\} [1-9]`),
		))

		By("suspending the template with a reason: the suspended gauge and its reason")
		Expect(scrape()).NotTo(ContainSubstring(`federator_suspended{kind="Deployment",name="web",namespace="metrics"}`))
		Expect(hubClient.Patch(ctx, deploymentRef(ns, name), client.RawPatch(types.MergePatchType,
			[]byte(`{"metadata": {"annotations": {"propagation.federator.dev/suspended": "incident 42"}}}`)))).To(Succeed())
		Eventually(scrape).Should(And(
			ContainSubstring(`federator_suspended{kind="Deployment",name="web",namespace="metrics"} 1`),
			ContainSubstring(`federator_suspended_info{kind="Deployment",name="web",namespace="metrics",reason="incident 42"} 1`),
		))
		Expect(hubClient.Patch(ctx, deploymentRef(ns, name), client.RawPatch(types.MergePatchType,
			[]byte(`{"metadata": {"annotations": {"propagation.federator.dev/suspended": null}}}`)))).To(Succeed())
		Eventually(scrape).ShouldNot(ContainSubstring(`federator_suspended{kind="Deployment",name="web",namespace="metrics"}`))
	})
})
