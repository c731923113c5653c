package e2e

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("a hung member", func() {
	const ns, name = "hung", "web"

	It("does not delay the other members, and catches up when it answers again", func() {
		hang := faults()
		propagatedEverywhere(ns, name)

		By("freezing member2's API server (kind: its node): connections open, nothing answers")
		Expect(hang.HangMember("member2")).To(Succeed())
		resumed := false
		DeferCleanup(func() {
			if !resumed {
				Expect(hang.ResumeMember("member2")).To(Succeed())
			}
		})

		By("updating the template: member1 and member3 get it promptly")
		setImage(ns, name, "nginx:1.27")
		Eventually(func() string { return memberImage("member1", ns, name) }, "20s").Should(Equal("nginx:1.27"))
		Eventually(func() string { return memberImage("member3", ns, name) }, "20s").Should(Equal("nginx:1.27"))

		By("letting member2 answer again: it catches up")
		Expect(hang.ResumeMember("member2")).To(Succeed())
		resumed = true
		Eventually(func() string { return memberImage("member2", ns, name) }, "90s").Should(Equal("nginx:1.27"))
	})
})
