package e2e

import (
	"github.com/karmada-io/karmada/pkg/util/names"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/federator-dev/federator/test/framework"
)

var _ = Describe("suspend dispatching to all clusters", func() {
	const ns, name = "suspend-all", "web"

	// workDispatchingEvents counts member's WorkDispatching events with
	// message for the Work of the Deployment.
	workDispatchingEvents := func(member, message string) int32 {
		return eventCount(names.GenerateExecutionSpaceName(member), "Work",
			names.GenerateWorkName("Deployment", name, ns), "WorkDispatching", message)
	}
	const suspendedMessage, dispatchingMessage = "Work dispatching is in a suspended state.", "Work is being dispatched to member clusters."

	It("holds a template change from every member and releases it on resume", Label("smoke"), func() {
		namespace(ns)
		deployment(ns, name, "nginx:1.25")
		propagationPolicy(ns, name, nil)
		By("propagating to every member while not suspended")
		Eventually(func() map[string]string { return imagesEverywhere(ns, name) }).Should(Equal(
			map[string]string{"member1": "nginx:1.25", "member2": "nginx:1.25", "member3": "nginx:1.25"}))
		// As Karmada's execution controller, the first dispatch is told on
		// each Work: Karmada's own e2e ("adds dispatching event with a
		// dispatching message") waits for it.
		for m := range members {
			Eventually(func() int32 { return workDispatchingEvents(m, dispatchingMessage) }).Should(BeNumerically("==", 1), m)
		}
		recorders := recordEverywhere(deploymentRef(ns, name))

		By("suspending all clusters")
		patchPolicy(ns, name, `{"spec": {"suspension": {"dispatching": true}}}`)
		for m := range members {
			Eventually(func() *metav1.Condition { return dispatching(m, "Deployment", ns, name) }).Should(And(
				Not(BeNil()),
				HaveField("Status", metav1.ConditionFalse),
				HaveField("Reason", "SuspendDispatching"),
				HaveField("Message", suspendedMessage)), m)
		}

		By("changing the template: every Work carries it, every dispatcher holds it, no member stores it")
		held := newVersionHeldEverywhere(ns, name, "nginx:1.27", recorders)
		dispatchedBefore := workDispatchingEvents("member1", dispatchingMessage)

		By("resuming: every member gets the latest template promptly")
		patchPolicy(ns, name, `{"spec": {"suspension": null}}`)
		Eventually(func() map[string]string { return imagesEverywhere(ns, name) }, "20s").Should(Equal(
			map[string]string{"member1": "nginx:1.27", "member2": "nginx:1.27", "member3": "nginx:1.27"}))
		// The dispatcher writes the Work's condition after it applied the
		// release: a loaded machine can show the member's copy first.
		for m := range members {
			Eventually(func() *metav1.Condition { return dispatching(m, "Deployment", ns, name) }).Should(And(
				Not(BeNil()),
				HaveField("Status", metav1.ConditionTrue),
				HaveField("Reason", "Dispatching"),
				HaveField("Message", dispatchingMessage)), m)
			Expect(storedBefore(recorders[m], held[m], framework.Image)).NotTo(ContainElement("nginx:1.27"),
				"%s stored the held version before the resume", m)
		}

		By("recording a WorkDispatching event for the suspension and a new one for the resume")
		Eventually(func() int32 { return workDispatchingEvents("member1", suspendedMessage) }).Should(BeNumerically(">=", 1))
		Eventually(func() int32 { return workDispatchingEvents("member1", dispatchingMessage) }).Should(BeNumerically(">", dispatchedBefore))
	})
})
