package e2e

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("member credentials", func() {
	It("are the only Secrets of the hub federator watches", func() {
		hubCS := env.HubCS
		// kube-apiserver watches Secrets itself (service account tokens);
		// a member, where federator watches no Secret, shows how many such
		// watches that is.
		apiServersOwn := watches(memberCS["member1"], "secrets")
		Expect(apiServersOwn).NotTo(BeNil())
		Eventually(func() map[string]int { return watches(hubCS, "secrets") }).Should(And(
			HaveKeyWithValue("cluster", apiServersOwn["cluster"]),
			HaveKeyWithValue("namespace", apiServersOwn["namespace"]+1), // karmada-cluster
		))
	})
})
