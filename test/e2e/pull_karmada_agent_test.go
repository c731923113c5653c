package e2e

import (
	"os/exec"
	"path/filepath"
	"time"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gatingv1alpha1 "github.com/federator-dev/federator/apis/gating/v1alpha1"
	rolloutsv1alpha1 "github.com/federator-dev/federator/apis/rollouts/v1alpha1"
	workkeys "github.com/federator-dev/federator/apis/work"
	"github.com/federator-dev/federator/internal/countdown"
	"github.com/federator-dev/federator/pkg/fleet"
	"github.com/federator-dev/federator/pkg/membership"
	"github.com/federator-dev/federator/pkg/yamldocs"
	"github.com/federator-dev/federator/test/framework"
)

// Karmada's own karmada-agent (v1.16.0, built unmodified by make
// karmada-agent) serving a Pull member of a federator hub
// (docs/pull-mode.md): it registers the cluster, reports its status and
// applies its Works, honouring Work.spec.suspendDispatching, into which
// the hub writes every hold. The hub never writes to that member, though
// the agent reports the member's credentials to it.
var _ = Describe("a Pull member served by Karmada's karmada-agent", func() {
	It("is held by every holder the hub writes into its Work, and written by its agent alone", func() {
		// kube-controller-manager in every cluster: a Deployment of no
		// replicas turns Available, so a Rollout stage can pass.
		f, hub := separateFleet(2, true)
		runController(f, "--cluster-monitor-grace-period=10s")
		push, pull := f.Members[0], f.Members[1]
		Expect(membership.Register(ctx, hub, push.Name, push.Config)).To(Succeed())
		pushClient, pullClient := memberClient(push), memberClient(pull)
		startKarmadaAgent(f, pull.Name)

		By("karmada-agent registers its cluster in Pull mode and keeps its status")
		Eventually(func(g Gomega) {
			c := &clusterv1alpha1.Cluster{}
			g.Expect(hub.Get(ctx, client.ObjectKey{Name: pull.Name}, c)).To(Succeed())
			g.Expect(c.Spec.SyncMode).To(Equal(clusterv1alpha1.Pull))
			g.Expect(meta.IsStatusConditionTrue(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady)).To(BeTrue())
			g.Expect(c.Status.KubernetesVersion).NotTo(BeEmpty())
		}, "90s").Should(Succeed())
		Eventually(func() error {
			return hub.Get(ctx, client.ObjectKey{Namespace: membership.ClusterNamespace, Name: pull.Name}, &corev1.Secret{})
		}).Should(Succeed(), "karmada-agent reports the member's credentials (--report-secrets), and still the hub must not write")

		web, recorder := recordPullWeb(pull, pullClient)
		setImage := func(image string) {
			GinkgoHelper()
			Expect(hub.Patch(ctx, web, client.RawPatch(types.MergePatchType,
				[]byte(`{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"`+image+`"}]}}}}`)))).To(Succeed())
			Eventually(pullImageIn(pushClient)).Should(Equal(image), "the Push member gets it")
			Eventually(func() string { return workImageOn(hub, pull.Name, "pull", "web") }).Should(Equal(image),
				"the Pull member's Work carries it")
		}
		// heldThenReleased: image, held from the Pull member by what hold
		// set up, is in its Work, held (Karmada's SuspendDispatching,
		// which karmada-agent writes), never stored; release lets it in.
		heldThenReleased := func(image, what string, release func()) {
			GinkgoHelper()
			setImage(image)
			Eventually(func() *workv1alpha1.Work { return workOn(hub, pull.Name, "pull", "web") }).Should(
				WithTransform(func(w *workv1alpha1.Work) bool {
					return w != nil && w.Spec.SuspendDispatching != nil && *w.Spec.SuspendDispatching
				},
					BeTrue()), "the hub holds the Pull member's Work: %s", what)
			Eventually(func() string { return workDispatchingReason(hub, pull.Name) }).Should(Equal("SuspendDispatching"),
				"karmada-agent says it holds the Work (%s)", what)
			Expect(storedBefore(recorder, mark(recorder), framework.Image)).NotTo(ContainElement(image),
				"the Pull member stored %s while %s held it", image, what)
			release()
			Eventually(pullImageIn(pullClient), "60s").Should(Equal(image), "released from %s", what)
		}

		By("a template placed on both members reaches the Pull member through karmada-agent")
		Expect(yamldocs.Apply(ctx, hub, []byte(`
apiVersion: v1
kind: Namespace
metadata: {name: pull}
---
`+pullWeb("nginx:1.25", "")+`
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: pull}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement: {clusterAffinity: {clusterNames: [member1, member2]}}
`), client.FieldOwner("e2e"))).To(Succeed())
		Eventually(pullImageIn(pushClient)).Should(Equal("nginx:1.25"))
		Eventually(pullImageIn(pullClient), "60s").Should(Equal("nginx:1.25"))
		Eventually(func() *workv1alpha1.Work { return workOn(hub, pull.Name, "pull", "web") }).Should(
			WithTransform(workApplied, BeTrue()), "karmada-agent reports the Work applied")
		Eventually(func() []workv1alpha1.ManifestStatus {
			if w := workOn(hub, pull.Name, "pull", "web"); w != nil {
				return w.Status.ManifestStatuses
			}
			return nil
		}).Should(ContainElement(HaveField("Health", workv1alpha1.ResourceHealthy)),
			"karmada-agent reflects the member's Deployment status into the Work")

		By("spec.suspension of the Pull member holds it")
		Expect(framework.PatchPolicy(ctx, hub, "pull", "web", `{"spec":{"suspension":{"dispatchingOnClusters":{"clusterNames":["member2"]}}}}`)).To(Succeed())
		heldThenReleased("nginx:1.26", "spec.suspension", func() {
			Expect(framework.PatchPolicy(ctx, hub, "pull", "web", `{"spec":{"suspension":null}}`)).To(Succeed())
		})

		By("the cluster's suspension annotation holds it")
		Expect(framework.PatchPolicy(ctx, hub, "pull", "web",
			`{"metadata":{"annotations":{"suspended.propagation.federator.dev/member2":"incident 12"}}}`)).To(Succeed())
		heldThenReleased("nginx:1.27", "the suspension annotation", func() {
			Expect(framework.PatchPolicy(ctx, hub, "pull", "web",
				`{"metadata":{"annotations":{"suspended.propagation.federator.dev/member2":null}}}`)).To(Succeed())
		})

		By("a Freeze of the Pull member holds it, once the hub has written it into its Work")
		// karmada-agent reads no Freeze: it is frozen by what the hub
		// writes into its Works (federator's agent checks the Freezes
		// itself before each write, pull_mode_test.go).
		freeze := &gatingv1alpha1.Freeze{ObjectMeta: metav1.ObjectMeta{Name: "pull-incident"},
			Spec: gatingv1alpha1.FreezeSpec{Clusters: []string{pull.Name}, Message: "incident 9"}}
		Expect(hub.Create(ctx, freeze)).To(Succeed())
		Eventually(func() string {
			if w := workOn(hub, pull.Name, "pull", "web"); w != nil && w.Spec.SuspendDispatching != nil && *w.Spec.SuspendDispatching {
				return w.Annotations[workkeys.HoldReasonAnnotation]
			}
			return ""
		}).Should(Equal(gatingv1alpha1.ReasonFrozen), "the hub writes the Freeze into the Pull member's Work")
		heldThenReleased("nginx:1.27.1", "a Freeze", func() { Expect(hub.Delete(ctx, freeze)).To(Succeed()) })

		By("a closed Gate holds it")
		Expect(yamldocs.Apply(ctx, hub, []byte(`
apiVersion: gating.federator.dev/v1alpha1
kind: Gate
metadata: {name: approval, namespace: pull}
spec: {default: closed}
`), client.FieldOwner("e2e"))).To(Succeed())
		Expect(framework.PatchPolicy(ctx, hub, "pull", "web",
			`{"metadata":{"annotations":{"`+gatingv1alpha1.GatesAnnotation+`":"approval"}}}`)).To(Succeed())
		Eventually(func() string { return workDispatchingReason(hub, pull.Name) }).Should(Equal("SuspendDispatching"))
		Expect(hub.Patch(ctx, web, client.RawPatch(types.MergePatchType,
			[]byte(`{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"nginx:1.28"}]}}}}`)))).To(Succeed())
		Eventually(func() string { return workImageOn(hub, pull.Name, "pull", "web") }).Should(Equal("nginx:1.28"))
		Expect(pullImageIn(pushClient)()).To(Equal("nginx:1.27.1"), "the gate holds every member")
		Expect(storedBefore(recorder, mark(recorder), framework.Image)).NotTo(ContainElement("nginx:1.28"),
			"the Pull member stored nginx:1.28 while the gate was closed")
		Expect(hub.Patch(ctx, &gatingv1alpha1.Gate{ObjectMeta: metav1.ObjectMeta{Namespace: "pull", Name: "approval"}},
			client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"open.gate.federator.dev/requestedAt":"`+
				time.Now().UTC().Format(time.RFC3339)+`"}}}`)))).To(Succeed())
		Eventually(pullImageIn(pullClient), "60s").Should(Equal("nginx:1.28"), "released when the gate opens")

		By("a Rollout stage holds it until the stage before it passes, and the Rollout completes on karmada-agent's status")
		Expect(framework.Apply(ctx, hub, &rolloutsv1alpha1.Rollout{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rollouts.federator.dev/v1alpha1", Kind: "Rollout"},
			ObjectMeta: metav1.ObjectMeta{Namespace: "pull", Name: "web"},
			Spec: rolloutsv1alpha1.RolloutSpec{PolicyRef: rolloutsv1alpha1.PolicyReference{Name: "web"},
				Stages: []rolloutsv1alpha1.Stage{
					{Name: "canary", Clusters: []string{push.Name}, MinSuccessTime: &metav1.Duration{Duration: 10 * time.Second}},
					{Name: "pull", Clusters: []string{pull.Name}},
				}},
		}, fieldOwner)).To(Succeed())
		completed := func(g Gomega) {
			ro := &rolloutsv1alpha1.Rollout{}
			g.Expect(hub.Get(ctx, client.ObjectKey{Namespace: "pull", Name: "web"}, ro)).To(Succeed())
			g.Expect(condition(ro, rolloutsv1alpha1.ConditionCompleted)).To(Equal(metav1.ConditionTrue), "%+v", ro.Status)
		}
		Eventually(completed, "60s").Should(Succeed(), "the Rollout takes in what every member runs")
		Expect(hub.Patch(ctx, web, client.RawPatch(types.MergePatchType,
			[]byte(`{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"nginx:1.29"}]}}}}`)))).To(Succeed())
		Eventually(pullImageIn(pushClient)).Should(Equal("nginx:1.29"), "the canary stage gets it")
		Eventually(func() string { return workDispatchingReason(hub, pull.Name) }).Should(Equal("SuspendDispatching"),
			"karmada-agent holds the Pull member's Work while the canary soaks")
		Expect(storedBefore(recorder, mark(recorder), framework.Image)).NotTo(ContainElement("nginx:1.29"),
			"the Pull member stored nginx:1.29 before its stage")
		Eventually(pullImageIn(pullClient), "90s").Should(Equal("nginx:1.29"), "released at its stage")
		Eventually(completed, "90s").Should(Succeed(),
			"the Rollout reads from karmada-agent's status that the Pull member runs the new manifest")

		By("nothing in the Pull member was ever written by the hub")
		d := &appsv1.Deployment{}
		Expect(pullClient.Get(ctx, client.ObjectKeyFromObject(web), d)).To(Succeed())
		for _, f := range d.ManagedFields {
			Expect(f.Manager).NotTo(Equal("federator"), "the hub's field manager wrote to the Pull member: %+v", f)
		}

		By("a deletion delay delays the deletion: the hub keeps the Work until due, and gives it back when the template returns")
		Expect(hub.Delete(ctx, &rolloutsv1alpha1.Rollout{ObjectMeta: metav1.ObjectMeta{Namespace: "pull", Name: "web"}})).To(Succeed())
		Expect(hub.Patch(ctx, web, client.RawPatch(types.MergePatchType,
			[]byte(`{"metadata":{"annotations":{"federator.dev/deletion-delay":"1h"}}}`)))).To(Succeed())
		Eventually(deletionDelayIn(pullClient, web)).Should(Equal("1h"))
		Expect(hub.Delete(ctx, web)).To(Succeed())
		keptWorkCountdown(hub, pull.Name)
		Eventually(countdownMarkIn(pushClient, web)).ShouldNot(BeEmpty(), "the Push member counts down in the member, as before")
		Expect(pullImageIn(pullClient)()).To(Equal("nginx:1.29"), "karmada-agent deleted it: the Work went")
		Expect(yamldocs.Apply(ctx, hub, []byte(pullWeb("nginx:1.29", "8s")), client.FieldOwner("e2e"))).To(Succeed())
		countdownTakenBack(hub, pull.Name)
		Expect(recorder.History(0, mark(recorder), countdownMark)).NotTo(ContainElement(HavePrefix("DELETED")),
			"karmada-agent deleted the object during its delay")
		Eventually(deletionDelayIn(pullClient, web)).Should(Equal("8s"), "released again with its new delay")

		By("when the delay has passed, karmada-agent deletes the object, not before")
		Expect(hub.Delete(ctx, web)).To(Succeed())
		t := keptWorkCountdown(hub, pull.Name)
		due, ok := t.DueAt(0)
		Expect(ok).To(BeTrue())
		notDeletedBefore(recorder, due)
		deletedOnTime(recorder, due)
		Eventually(func() bool {
			_, found, err := countdown.Lookup(ctx, hub, pull.Name, "Deployment", "pull", "web")
			return err == nil && !found
		}).Should(BeTrue(), "the countdown ends with the deletion")
	})
})

// startKarmadaAgent runs Karmada's karmada-agent (bin/karmada-agent) for
// member cluster of f until the end of the spec, as Karmada's local setup
// runs it: with the hub's kubeconfig, the member's, and the Lease and status
// intervals short enough for a spec.
func startKarmadaAgent(f *fleet.Fleet, cluster string) *gexec.Session {
	GinkgoHelper()
	cmd := exec.Command(filepath.Join(binDir, "karmada-agent"), "--cluster-name", cluster,
		"--karmada-kubeconfig", f.Hub.KubeconfigPath, "--kubeconfig", f.Member(cluster).KubeconfigPath,
		"--leader-elect=false", "--metrics-bind-address=0", "--health-probe-bind-address=0",
		"--cluster-status-update-frequency=1s", "--cluster-lease-duration=10s", "--v=2")
	session, err := gexec.Start(cmd, GinkgoWriter, GinkgoWriter)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { session.Kill().Wait(10 * time.Second) })
	return session
}
