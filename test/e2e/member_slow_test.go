package e2e

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("a hung member", func() {
	const ns, name = "hung", "web"

	It("does not delay the other members, and catches up when it answers again", func() {
		member2 := localFleet().Member("member2")
		propagatedEverywhere(ns, name)

		By("freezing member2's API server: connections open, nothing answers")
		Expect(member2.PauseAPIServer()).To(Succeed())
		resumed := false
		DeferCleanup(func() {
			if !resumed {
				Expect(member2.ResumeAPIServer()).To(Succeed())
			}
		})

		By("updating the template: member1 and member3 get it promptly")
		setImage(ns, name, "nginx:1.27")
		Eventually(func() string { return memberImage("member1", ns, name) }, "20s").Should(Equal("nginx:1.27"))
		Eventually(func() string { return memberImage("member3", ns, name) }, "20s").Should(Equal("nginx:1.27"))

		By("letting member2 answer again: it catches up")
		Expect(member2.ResumeAPIServer()).To(Succeed())
		resumed = true
		Eventually(func() string { return memberImage("member2", ns, name) }, "90s").Should(Equal("nginx:1.27"))
	})
})
