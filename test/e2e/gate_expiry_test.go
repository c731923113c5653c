package e2e

import (
	"os/exec"
	"time"

	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gatingv1alpha1 "github.com/federator-dev/federator/apis/gating/v1alpha1"
	"github.com/federator-dev/federator/test/framework"
)

// A gate is judged by the clock where it holds: an open request that has
// lapsed holds the next change even while the gate controller is off and
// the Gate's status still says open.
var _ = Describe("gates judged by the clock", func() {
	It("hold the next change once `gate open --for` lapses, with the gate controller off and the Gate's status still open", func() {
		f, hub := separateFleet(1, false)
		first := runController(f)
		member := joinMembers(f, hub)["member1"]
		const ns, name = "gate-expiry", "web"
		Expect(hub.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
		Expect(hub.Create(ctx, &gatingv1alpha1.Gate{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "approval"},
			Spec: gatingv1alpha1.GateSpec{Default: gatingv1alpha1.Closed}})).To(Succeed())
		dyn, err := dynamic.NewForConfig(f.Members[0].Config)
		Expect(err).NotTo(HaveOccurred())
		recorder, err := framework.Record(ctx, dyn, member, deploymentRef(ns, name), "member1")
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(recorder.Stop)
		Expect(framework.Apply(ctx, hub, framework.NewDeployment(ns, name, "nginx:1.25"), fieldOwner)).To(Succeed())
		pp := framework.NewDeploymentPolicy(ns, name, name, "member1")
		pp.Annotations = map[string]string{gatingv1alpha1.GatesAnnotation: "approval"}
		Expect(framework.Apply(ctx, hub, pp, fieldOwner)).To(Succeed())

		gateOpened := func() *metav1.Condition {
			g := &gatingv1alpha1.Gate{}
			if err := hub.Get(ctx, client.ObjectKey{Namespace: ns, Name: "approval"}, g); err != nil {
				return nil
			}
			return meta.FindStatusCondition(g.Status.Conditions, gatingv1alpha1.ConditionOpened)
		}
		work := func() *workv1alpha1.Work { return workOn(hub, "member1", ns, name) }
		workImage := func() string { return workImageOn(hub, "member1", ns, name) }
		heldByTheGate := And(Not(BeNil()),
			HaveField("Spec.SuspendDispatching", HaveValue(BeTrue())),
			HaveField("Annotations", HaveKeyWithValue("work.federator.dev/hold-reason", "GateClosed")))
		Eventually(work).Should(heldByTheGate)

		By("opening the gate for 30s with the gate controller running: dispatched, and the Gate's status says open")
		const openFor = 30 * time.Second
		run := runCLI(exec.Command(federatorBinary(), "gate", "open", "approval", "-n", ns, "--for", openFor.String(),
			"--kubeconfig", f.Hub.KubeconfigPath))
		Expect(run.code).To(BeZero(), run.stderr)
		g := &gatingv1alpha1.Gate{}
		Expect(hub.Get(ctx, client.ObjectKey{Namespace: ns, Name: "approval"}, g)).To(Succeed())
		lapses, err := time.Parse(time.RFC3339, g.Annotations[gatingv1alpha1.CloseRequestAnnotation])
		Expect(err).NotTo(HaveOccurred(), "gate open --for writes the close request it lapses at")
		Eventually(func() string { return imageIn(member, ns, name) }).Should(Equal("nginx:1.25"))
		Eventually(gateOpened).Should(And(Not(BeNil()), HaveField("Status", metav1.ConditionTrue)))

		By("restarting the controllers without the gate controller, before the request lapses")
		first.Kill().Wait("10s")
		runController(f, "--controllers", "*,-gate")
		Expect(time.Now()).To(BeTemporally("<", lapses),
			"the restart took longer than the open request lasts: this spec would not test the recheck at the lapse")

		By("the request lapses: the Work is held then, with no event to bring it, though the Gate's status still says open")
		Eventually(work, time.Until(lapses)+20*time.Second).Should(heldByTheGate)
		Expect(time.Now()).To(BeTemporally(">=", lapses))
		Expect(work().Annotations).To(HaveKeyWithValue("work.federator.dev/hold-message", ContainSubstring("Gate close requested")))
		Expect(gateOpened()).To(HaveField("Status", metav1.ConditionTrue), "the gate controller is off: nothing updates the Gate's status")

		By("changing the template: the Work carries the change, held")
		Expect(framework.SetImage(ctx, hub, ns, name, "nginx:1.27")).To(Succeed())
		Eventually(workImage).Should(Equal("nginx:1.27"))
		Expect(work()).To(heldByTheGate)

		By("opening the gate again, still without the gate controller: the change arrives, and only now")
		beforeReopen := mark(recorder)
		run = cliOn(f.Hub.KubeconfigPath, "gate", "open", "approval", "-n", ns)
		Expect(run.code).To(BeZero(), run.stderr)
		Eventually(func() string { return imageIn(member, ns, name) }).Should(Equal("nginx:1.27"))
		Expect(work().Spec.SuspendDispatching).To(Equal(ptr.To(false)))
		Expect(storedBefore(recorder, beforeReopen, framework.Image)).NotTo(ContainElement("nginx:1.27"),
			"member1 stored the change made after the open request lapsed, before the gate was opened again")
	})
})

// imageIn is the image of Deployment ns/name in the cluster c reads,
// "" when absent.
func imageIn(c client.Client, ns, name string) string {
	d := deploymentRef(ns, name)
	if err := c.Get(ctx, client.ObjectKeyFromObject(d), d); err != nil || len(d.Spec.Template.Spec.Containers) == 0 {
		return ""
	}
	return d.Spec.Template.Spec.Containers[0].Image
}
