package e2e

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/karmada-io/karmada/pkg/util/names"
)

var _ = Describe("suspend dispatching to all clusters", func() {
	const ns, name = "suspend-all", "web"

	It("holds a template change from every member and releases it on resume", func() {
		namespace(ns)
		deployment(ns, name, "nginx:1.25")
		propagationPolicy(ns, name, nil)
		By("propagating to every member while not suspended")
		Eventually(func() map[string]string { return imagesEverywhere(ns, name) }).Should(Equal(
			map[string]string{"member1": "nginx:1.25", "member2": "nginx:1.25", "member3": "nginx:1.25"}))

		By("suspending all clusters")
		patchPolicy(ns, name, `{"spec": {"suspension": {"dispatching": true}}}`)
		for m := range members {
			Eventually(func() *metav1.Condition { return dispatching(m, "Deployment", ns, name) }).Should(And(
				Not(BeNil()),
				HaveField("Status", metav1.ConditionFalse),
				HaveField("Reason", "SuspendDispatching"),
				HaveField("Message", "Work dispatching is in a suspended state.")), m)
		}

		By("changing the template: every Work carries it, no member gets it")
		setImage(ns, name, "nginx:1.27")
		for m := range members {
			Eventually(func() string { return workImage(m, ns, name) }).Should(Equal("nginx:1.27"), m)
		}
		Consistently(func() map[string]string { return imagesEverywhere(ns, name) }, "3s").Should(Equal(
			map[string]string{"member1": "nginx:1.25", "member2": "nginx:1.25", "member3": "nginx:1.25"}))

		By("resuming: every member gets the latest template promptly")
		patchPolicy(ns, name, `{"spec": {"suspension": null}}`)
		Eventually(func() map[string]string { return imagesEverywhere(ns, name) }, "20s").Should(Equal(
			map[string]string{"member1": "nginx:1.27", "member2": "nginx:1.27", "member3": "nginx:1.27"}))
		for m := range members {
			Expect(dispatching(m, "Deployment", ns, name)).To(And(
				HaveField("Status", metav1.ConditionTrue),
				HaveField("Reason", "Dispatching"),
				HaveField("Message", "Work is being dispatched to member clusters.")), m)
		}

		By("recording a WorkDispatching event for the suspension and for the resume")
		events := &corev1.EventList{}
		Eventually(func() []string {
			Expect(hubClient.List(ctx, events, client.InNamespace(names.GenerateExecutionSpaceName("member1")))).To(Succeed())
			var messages []string
			for _, e := range events.Items {
				if e.Reason == "WorkDispatching" && e.InvolvedObject.Name == names.GenerateWorkName("Deployment", name, ns) {
					messages = append(messages, e.Message)
				}
			}
			return messages
		}).Should(ContainElements("Work dispatching is in a suspended state.", "Work is being dispatched to member clusters."))
	})
})
