package e2e

import (
	"path/filepath"
	"strings"

	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/federator-dev/federator/pkg/fleet"
	"github.com/federator-dev/federator/test/framework"
)

// A replica that begins to lead finds the bindings as the previous
// leader's detector left them: a suspension written just before it
// stopped (or while none led) is not in them yet. A Work released before
// the suspension, still on its way to a member that was away, must not
// be sent after it: the new leader's binding controller, deciding from
// the binding as it was, finds that Work as it wants it and writes
// nothing, so nothing but a wait for its detector stops the dispatcher
// (internal/redecide). The detector's binding writes are refused for a
// while, as when they conflict or time out, so the spec does not depend
// on which controller the scheduler runs first.
var _ = Describe("a replica that begins to lead", func() {
	It("dispatches nothing before its detector has carried a suspension written while none led into the binding", func() {
		f, hub := separateFleet(1, false)
		first := runController(f)
		member := joinMembers(f, hub)["member1"]

		const ns, name = "lead-catchup", "web"
		back := releasedWhileAway(f, hub, member, ns, name)

		By("no controller runs; the policy is suspended; member1 is back")
		first.Interrupt()
		Eventually(first, "30s").Should(gexec.Exit())
		patchPolicyOn(hub, ns, name, `{"spec":{"suspension":{"dispatching":true}}}`)
		binding := &workv1alpha2.ResourceBinding{}
		Expect(hub.Get(ctx, client.ObjectKey{Namespace: ns, Name: name + "-deployment"}, binding)).To(Succeed())
		Expect(binding.Spec.Suspension).To(BeNil(), "the binding carries the suspension already: this spec would not test the new leader")
		recorder := back()

		By("a controller starts whose detector cannot write the binding yet: the dispatcher sends nothing")
		proxy := startInformerBlocker(f.Hub.Config)
		proxy.refuseBindingUpdates(true)
		viaProxy := filepath.Join(GinkgoT().TempDir(), "hub-via-proxy")
		Expect(fleet.WriteKubeconfig(viaProxy, "hub", &rest.Config{Host: proxy.url})).To(Succeed())
		second := runController(f, "--kubeconfig", viaProxy, "--v=1")
		logs := func() string { return string(second.Out.Contents()) + string(second.Err.Contents()) }
		// Until it says it waits (or, were it to send the Work, until
		// member1 has it: the record below then fails the spec).
		Eventually(func() bool {
			return strings.Contains(logs(), "bindings still to be decided again since this replica began to lead") ||
				imageIn(member, ns, name) == "nginx:1.26"
		}, "30s").Should(BeTrue())
		Expect(workSuspended(workOn(hub, "member1", ns, name))).To(BeFalse(),
			"the Work was held before the detector wrote the binding: this spec would not test the dispatcher")

		By("the detector writes the binding: the Work is held, and member1 never stored 1.26")
		proxy.refuseBindingUpdates(false)
		Eventually(func() bool { w := workOn(hub, "member1", ns, name); return w != nil && workSuspended(w) }, "60s").Should(BeTrue())
		Expect(stored(recorder, framework.Image)).NotTo(ContainElement("nginx:1.26"),
			"member1 stored the version released before the suspension, after it")
		Eventually(logs).Should(ContainSubstring("the hub's decisions caught up after this replica began to lead"))

		By("resuming the policy: 1.26 arrives")
		patchPolicyOn(hub, ns, name, `{"spec":{"suspension":null}}`)
		Eventually(func() string { return imageIn(member, ns, name) }).Should(Equal("nginx:1.26"))
	})
})
