package e2e

import (
	"io"
	"net/http"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/federator-dev/federator/test/framework"
)

var _ = Describe("metrics", func() {
	const ns, name = "metrics", "web"

	scrape := func() string {
		resp, err := http.Get("http://" + metricsAddr + "/metrics")
		if err != nil {
			return err.Error()
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return string(body)
	}

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
		))
	})
})
