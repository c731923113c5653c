package e2e

import (
	"os/exec"
	"path/filepath"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	"github.com/onsi/gomega/gexec"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gatingv1alpha1 "github.com/federator-dev/federator/apis/gating/v1alpha1"
	"github.com/federator-dev/federator/apis/policy"
	workkeys "github.com/federator-dev/federator/apis/work"
	"github.com/federator-dev/federator/internal/countdown"
	"github.com/federator-dev/federator/pkg/fleet"
	"github.com/federator-dev/federator/pkg/membership"
	"github.com/federator-dev/federator/pkg/yamldocs"
	"github.com/federator-dev/federator/test/framework"
)

// Pull mode (docs/pull-mode.md): a member the hub cannot reach runs
// `federator agent`, which registers it in Pull mode and applies its Works
// from inside it. The hub places, holds and writes that cluster's Works
// as for any other, and never writes to it.
var _ = Describe("a Pull member served by federator agent", func() {
	It("is written by its agent alone, and a hold the hub wrote into its Work holds it there", func() {
		f, hub := separateFleet(2, false)
		// The agent renews its Lease every second (agentCommand): a Pull
		// cluster whose agent is silent for 4 s is Ready=Unknown.
		controllerArgs := []string{"--cluster-monitor-grace-period=4s"}
		controller := runController(f, controllerArgs...)
		push, pull := f.Members[0], f.Members[1]
		Expect(membership.Register(ctx, hub, push.Name, push.Config)).To(Succeed())
		// Joined in Push mode, then handed to an agent as the agent's
		// refusal below says to: the hub keeps the member's credentials,
		// so it could reach it, and must still never write to it.
		Expect(membership.Register(ctx, hub, pull.Name, pull.Config)).To(Succeed())
		Expect(hub.Patch(ctx, &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: pull.Name}},
			client.RawPatch(types.MergePatchType, []byte(`{"spec":{"syncMode":"Pull"}}`)))).To(Succeed())
		pushClient, pullClient := memberClient(push), memberClient(pull)
		// The agent reaches the hub as its own ServiceAccount, with rights
		// over its cluster alone.
		token, err := membership.RegisterPull(ctx, hub, pull.Name)
		Expect(err).NotTo(HaveOccurred())
		agentHub := filepath.Join(GinkgoT().TempDir(), "agent-hub.kubeconfig")
		Expect(fleet.WriteKubeconfig(agentHub, "hub", membership.AgentConfig(f.Hub.Config, token))).To(Succeed())
		agent := startAgent(f, pull.Name, agentHub)

		By("the agent registers its cluster in Pull mode and keeps its status")
		Eventually(func(g Gomega) {
			c := &clusterv1alpha1.Cluster{}
			g.Expect(hub.Get(ctx, client.ObjectKey{Name: pull.Name}, c)).To(Succeed())
			g.Expect(c.Spec.SyncMode).To(Equal(clusterv1alpha1.Pull))
			g.Expect(c.Spec.SecretRef).NotTo(BeNil(), "the hub keeps the credentials it was given")
			g.Expect(meta.IsStatusConditionTrue(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady)).To(BeTrue())
			g.Expect(c.Status.KubernetesVersion).NotTo(BeEmpty())
		}).Should(Succeed())

		By("the agent's rights on the hub reach no other cluster's Works, Cluster or credentials")
		asAgent, err := client.New(membership.AgentConfig(f.Hub.Config, token), client.Options{Scheme: policy.NewScheme()})
		Expect(err).NotTo(HaveOccurred())
		Expect(asAgent.List(ctx, &workv1alpha1.WorkList{}, client.InNamespace("karmada-es-member1"))).To(
			Satisfy(apierrors.IsForbidden), "it lists member1's Works")
		Expect(asAgent.Get(ctx, client.ObjectKey{Namespace: membership.ClusterNamespace, Name: push.Name}, &corev1.Secret{})).To(
			Satisfy(apierrors.IsForbidden), "it reads member1's credentials")
		Expect(asAgent.Get(ctx, client.ObjectKey{Name: push.Name}, &clusterv1alpha1.Cluster{})).To(
			Satisfy(apierrors.IsForbidden), "it reads member1's Cluster")
		Expect(asAgent.List(ctx, &workv1alpha1.WorkList{}, client.InNamespace("karmada-es-member2"))).To(Succeed(),
			"it lists its own Works")

		web, recorder := recordPullWeb(pull, pullClient)
		setImageOn := func(image string) {
			GinkgoHelper()
			Expect(hub.Patch(ctx, web, client.RawPatch(types.MergePatchType,
				[]byte(`{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"`+image+`"}]}}}}`)))).To(Succeed())
		}

		By("a template placed on both members reaches the Pull member through its agent")
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
		Eventually(pullImageIn(pullClient)).Should(Equal("nginx:1.25"))
		Eventually(func() *workv1alpha1.Work { return workOn(hub, pull.Name, "pull", "web") }).Should(
			WithTransform(workApplied, BeTrue()), "the agent reports the Work's status to the hub")

		By("a suspension of the Pull member, written into its Work by the hub, holds it there")
		Expect(framework.PatchPolicy(ctx, hub, "pull", "web", `{"spec":{"suspension":{"dispatchingOnClusters":{"clusterNames":["member2"]}}}}`)).To(Succeed())
		setImageOn("nginx:1.26")
		Eventually(pullImageIn(pushClient)).Should(Equal("nginx:1.26"))
		Eventually(func() string { return workImageOn(hub, pull.Name, "pull", "web") }).Should(Equal("nginx:1.26"))
		Eventually(func() string { return workDispatchingReason(hub, pull.Name) }).Should(Equal("SuspendDispatching"),
			"the agent tells the hub it holds the Work, with Karmada's reason")
		Expect(storedBefore(recorder, mark(recorder), framework.Image)).NotTo(ContainElement("nginx:1.26"),
			"the Pull member stored the suspended version")
		Expect(framework.PatchPolicy(ctx, hub, "pull", "web", `{"spec":{"suspension":null}}`)).To(Succeed())
		Eventually(pullImageIn(pullClient)).Should(Equal("nginx:1.26"))
		// The agent reports the release after it applied it: stopped in
		// between, its Work would still say it holds.
		Eventually(func() string { return workDispatchingReason(hub, pull.Name) }).ShouldNot(Equal("SuspendDispatching"))

		By("with its agent stopped, nothing reaches the Pull member: the hub never dispatches to it")
		agent.Terminate().Wait("20s")
		setImageOn("nginx:1.27")
		Eventually(pullImageIn(pushClient)).Should(Equal("nginx:1.27"))
		Eventually(func() string { return workImageOn(hub, pull.Name, "pull", "web") }).Should(Equal("nginx:1.27"))
		Expect(workDispatchingReason(hub, pull.Name)).NotTo(Equal("SuspendDispatching"), "the Work is released, not held")
		Expect(storedBefore(recorder, mark(recorder), framework.Image)).NotTo(ContainElement("nginx:1.27"),
			"the hub wrote to a Pull member")
		Eventually(func() *metav1.Condition { return clusterReady(hub, pull.Name) }, "20s").Should(And(
			HaveField("Status", metav1.ConditionUnknown), HaveField("Reason", "ClusterStatusUnknown")),
			"the hub says the agent stopped reporting, in Karmada's words")
		Expect(storedBefore(recorder, mark(recorder), framework.Image)).NotTo(ContainElement("nginx:1.27"),
			"the hub wrote to a Pull member")

		By("started again, the agent catches up")
		agent = startAgent(f, pull.Name, agentHub)
		Eventually(pullImageIn(pullClient)).Should(Equal("nginx:1.27"))
		Eventually(func() *metav1.Condition { return clusterReady(hub, pull.Name) }).Should(
			HaveField("Status", metav1.ConditionTrue), "the agent reports its cluster Ready again")

		By("an agent started for a Push cluster refuses, names it and says how to change it, and changes nothing")
		refused, err := gexec.Start(agentCommand(f, push.Name, f.Hub.KubeconfigPath), GinkgoWriter, GinkgoWriter)
		Expect(err).NotTo(HaveOccurred())
		Eventually(refused, "30s").Should(gexec.Exit(1))
		Expect(string(refused.Err.Contents())).To(And(
			ContainSubstring("cluster member1 is registered in Push mode (spec.syncMode: Push)"),
			ContainSubstring("federator unjoin member1")))
		c := &clusterv1alpha1.Cluster{}
		Expect(hub.Get(ctx, client.ObjectKey{Name: push.Name}, c)).To(Succeed())
		Expect(c.Spec.SyncMode).To(Equal(clusterv1alpha1.Push))

		By("a Freeze holds the Pull member at its agent's next write, before any Work records it")
		// The release is in the Work, the agent down; the hub's controllers
		// stop before the Freeze, so no Work records it: only the agent's
		// own check of the Freezes stands between the release and the member.
		agent.Terminate().Wait("20s")
		setImageOn("nginx:1.28")
		Eventually(pullImageIn(pushClient)).Should(Equal("nginx:1.28"))
		Eventually(func() string { return workImageOn(hub, pull.Name, "pull", "web") }).Should(Equal("nginx:1.28"))
		controller.Terminate().Wait("30s")
		freeze := &gatingv1alpha1.Freeze{ObjectMeta: metav1.ObjectMeta{Name: "pull-incident"},
			Spec: gatingv1alpha1.FreezeSpec{Clusters: []string{pull.Name}, Message: "incident 7"}}
		Expect(hub.Create(ctx, freeze)).To(Succeed())
		startAgent(f, pull.Name, agentHub)
		Eventually(func() string { return workDispatchingReason(hub, pull.Name) }).Should(Equal(gatingv1alpha1.ReasonFrozen),
			"the agent met the Freeze and says so on the Work")
		Expect(storedBefore(recorder, mark(recorder), framework.Image)).NotTo(ContainElement("nginx:1.28"),
			"the Pull member stored a version while frozen")
		runController(f, controllerArgs...)
		Expect(hub.Delete(ctx, freeze)).To(Succeed())
		Eventually(pullImageIn(pullClient)).Should(Equal("nginx:1.28"))

		By("a deletion delay: the hub keeps the Pull member's Work until due, and gives it back when the template returns")
		Expect(hub.Patch(ctx, web, client.RawPatch(types.MergePatchType,
			[]byte(`{"metadata":{"annotations":{"federator.dev/deletion-delay":"1h"}}}`)))).To(Succeed())
		Eventually(deletionDelayIn(pullClient, web)).Should(Equal("1h"))
		Expect(hub.Delete(ctx, web)).To(Succeed())
		keptWorkCountdown(hub, pull.Name)
		Expect(pullImageIn(pullClient)()).To(Equal("nginx:1.28"), "deleted before its delay")
		Expect(countdownMarkIn(pullClient, web)()).To(BeEmpty(), "the countdown is the hub's: the member object is not marked")
		Expect(yamldocs.Apply(ctx, hub, []byte(pullWeb("nginx:1.28", "1h")), client.FieldOwner("e2e"))).To(Succeed())
		countdownTakenBack(hub, pull.Name)
		Expect(recorder.History(0, mark(recorder), countdownMark)).NotTo(ContainElement(HavePrefix("DELETED")),
			"the Pull member's object was deleted during its delay")

		By("without a delay, the template deleted, its agent deletes it from the Pull member")
		Expect(yamldocs.Apply(ctx, hub, []byte(pullWeb("nginx:1.28", "0s")), client.FieldOwner("e2e"))).To(Succeed())
		Eventually(deletionDelayIn(pullClient, web)).Should(Equal("0s"))
		Expect(hub.Delete(ctx, web)).To(Succeed())
		Eventually(pullImageIn(pullClient)).Should(ContainSubstring("not found"))
	})
})

// memberClient is a client of a member of a separate fleet.
func memberClient(m *fleet.Cluster) client.Client {
	GinkgoHelper()
	c, err := client.New(m.Config, client.Options{Scheme: policy.NewScheme()})
	Expect(err).NotTo(HaveOccurred())
	return c
}

// agentCommand is `federator agent` for member cluster of f, reaching the
// hub with hubKubeconfig, beside the fleet (no ports, no leader election).
func agentCommand(f *fleet.Fleet, cluster, hubKubeconfig string) *exec.Cmd {
	return exec.Command(federatorBinary(), "agent", "--cluster-name", cluster,
		"--karmada-kubeconfig", hubKubeconfig, "--kubeconfig", f.Member(cluster).KubeconfigPath,
		"--leader-elect=false", "--cluster-status-update-frequency", "1s", "--cluster-lease-duration", "4s")
}

// startAgent runs `federator agent` for cluster, reaching the hub with
// hubKubeconfig, until the end of the spec
// and returns once it runs.
func startAgent(f *fleet.Fleet, cluster, hubKubeconfig string) *gexec.Session {
	GinkgoHelper()
	session, err := gexec.Start(agentCommand(f, cluster, hubKubeconfig), GinkgoWriter, GinkgoWriter)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { session.Kill().Wait("10s") })
	Eventually(session.Out, "60s").Should(gbytes.Say("federator: agent of cluster " + cluster + " running"))
	return session
}

// workApplied says whether the Work's Applied condition is True.
func workApplied(w *workv1alpha1.Work) bool {
	return w != nil && meta.IsStatusConditionTrue(w.Status.Conditions, workv1alpha1.WorkApplied)
}

// workDispatchingReason is the reason of the Dispatching condition of
// member's Work of Deployment pull/web.
func workDispatchingReason(hub client.Client, member string) string {
	w := workOn(hub, member, "pull", "web")
	if w == nil {
		return ""
	}
	if c := meta.FindStatusCondition(w.Status.Conditions, workv1alpha1.WorkDispatching); c != nil {
		return c.Reason
	}
	return ""
}

// clusterReady is the Ready condition of Cluster name on hub, nil while it
// has none.
func clusterReady(hub client.Client, name string) *metav1.Condition {
	c := &clusterv1alpha1.Cluster{}
	if err := hub.Get(ctx, client.ObjectKey{Name: name}, c); err != nil {
		return nil
	}
	return meta.FindStatusCondition(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
}

// pullWebRef is Deployment pull/web, the pull specs' template.
func pullWebRef() *appsv1.Deployment {
	web := &appsv1.Deployment{}
	web.Namespace, web.Name = "pull", "web"
	return web
}

// recordPullWeb records, until the end of the spec, every version of
// Deployment pull/web the Pull member stores.
func recordPullWeb(pull *fleet.Cluster, pullClient client.Client) (*appsv1.Deployment, *framework.Recorder) {
	GinkgoHelper()
	web := pullWebRef()
	dyn, err := dynamic.NewForConfig(pull.Config)
	Expect(err).NotTo(HaveOccurred())
	recorder, err := framework.Record(ctx, dyn, pullClient, web, pull.Name)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(recorder.Stop)
	return web, recorder
}

// pullImageIn reads the image of Deployment pull/web in a member (the error
// when it cannot).
func pullImageIn(c client.Client) func() string {
	return func() string {
		d := &appsv1.Deployment{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(pullWebRef()), d); err != nil {
			return err.Error()
		}
		return d.Spec.Template.Spec.Containers[0].Image
	}
}

// keptWorkCountdown waits until the hub keeps cluster's Work of Deployment
// pull/web for its deletion delay, the template gone: the Work held and
// marked, its countdown recorded in a tombstone that names it. It returns
// the tombstone.
func keptWorkCountdown(hub client.Client, cluster string) countdown.Tombstone {
	GinkgoHelper()
	var t countdown.Tombstone
	Eventually(func(g Gomega) {
		var found bool
		var err error
		t, found, err = countdown.Lookup(ctx, hub, cluster, "Deployment", "pull", "web")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(found).To(BeTrue(), "no countdown recorded")
		g.Expect(t.Work).NotTo(BeEmpty(), "the countdown is not the hub's")
		w := &workv1alpha1.Work{}
		g.Expect(hub.Get(ctx, client.ObjectKey{Namespace: "karmada-es-" + cluster, Name: t.Work}, w)).To(Succeed())
		g.Expect(w.Annotations).To(HaveKey(workkeys.DeletionTimestampAnnotation))
		g.Expect(w.Annotations).To(HaveKeyWithValue(workkeys.HoldReasonAnnotation, workkeys.ReasonDeletionCountdown))
		g.Expect(w.Spec.SuspendDispatching).To(HaveValue(BeTrue()))
	}).Should(Succeed(), "the hub keeps %s's Work of pull/web for its deletion delay", cluster)
	return t
}

// countdownTakenBack waits until the countdown of Deployment pull/web in
// cluster has ended (the template is back) and its Work is no longer
// marked.
func countdownTakenBack(hub client.Client, cluster string) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		_, found, err := countdown.Lookup(ctx, hub, cluster, "Deployment", "pull", "web")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(found).To(BeFalse(), "the countdown is still recorded")
		w := workOn(hub, cluster, "pull", "web")
		g.Expect(w).NotTo(BeNil())
		g.Expect(w.Annotations).NotTo(HaveKey(workkeys.DeletionTimestampAnnotation))
	}).Should(Succeed(), "the template is back: the hub takes the deletion of pull/web in %s back", cluster)
}

// pullWeb is the Deployment pull/web with image, and the deletion delay
// delay unless "". It asks for no replicas: a member with a
// kube-controller-manager makes it Available without nodes.
func pullWeb(image, delay string) string {
	annotations := "{}"
	if delay != "" {
		annotations = `{federator.dev/deletion-delay: "` + delay + `"}`
	}
	return `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: pull, annotations: ` + annotations + `}
spec:
  replicas: 0
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: app, image: ` + image + `}]}`
}

// deletionDelayIn and countdownMarkIn read the deletion delay and the
// countdown's mark of obj in a member ("" when absent).
func deletionDelayIn(c client.Client, obj client.Object) func() string {
	return memberAnnotation(c, obj, "federator.dev/deletion-delay")
}

func countdownMarkIn(c client.Client, obj client.Object) func() string {
	return memberAnnotation(c, obj, "federator.dev/deletion-timestamp")
}

func memberAnnotation(c client.Client, obj client.Object, key string) func() string {
	return func() string {
		d := &appsv1.Deployment{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(obj), d); err != nil {
			return "error: " + err.Error()
		}
		return d.Annotations[key]
	}
}
