package e2e

import (
	"strconv"
	"strings"
	"time"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gatingv1alpha1 "github.com/federator-dev/federator/apis/gating/v1alpha1"
	rolloutsv1alpha1 "github.com/federator-dev/federator/apis/rollouts/v1alpha1"
	"github.com/federator-dev/federator/test/framework"
)

// A Rollout over members that run workloads: each new image walks
// through the stages as each becomes healthy; a broken one stops at the
// first stage, and the clusters of the later stages never store it.
var _ = Describe("staged rollouts", Ordered, func() {
	var w *workloadFleet
	const ns, name = "default", "staged"
	BeforeAll(func() {
		w = useWorkloadFleet()
	})

	s := func() stagedRollout { return stagedRollout{w: w, ns: ns, name: name} }
	rollout := func() *rolloutsv1alpha1.Rollout { GinkgoHelper(); return s().get() }
	completedAt := func(revision int64) { GinkgoHelper(); s().completedAt(revision) }
	memberImageIs := func(member, image string) { GinkgoHelper(); s().memberImageIs(member, image) }
	recorders := map[string]*framework.Recorder{}
	recordAll := func() { GinkgoHelper(); recorders = s().recordMembers() }

	It("takes in what runs as its first revision, then walks a healthy image through three stages in order", Label("smoke"), func() {
		Expect(framework.Apply(ctx, w.hub, framework.NewDeployment(ns, name, "nginx:1.25"), fieldOwner)).To(Succeed())
		w.placeOnEveryMember("apps/v1", "Deployment", ns, name)
		s().apply("")
		completedAt(1)
		for m := range w.inMembers {
			memberImageIs(m, "nginx:1.25")
		}
		By("Flux and Argo CD read the completed Rollout and its binding as done and healthy")
		readsAs(w.hub, rolloutRef(ns, name), "Current/Healthy")
		readsAs(w.hub, bindingRef(ns, name), "Current/Healthy")

		recordAll()
		hubDyn, err := dynamic.NewForConfig(w.f.Hub.Config)
		Expect(err).NotTo(HaveOccurred())
		statuses, err := framework.Record(ctx, hubDyn, w.hub, &rolloutsv1alpha1.Rollout{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}, "hub")
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(statuses.Stop)
		hubWorks := map[string]*framework.Recorder{}
		for _, m := range []string{"member2", "member3"} {
			r, err := framework.Record(ctx, hubDyn, w.hub, workOn(w.hub, m, ns, name), "hub")
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(r.Stop)
			hubWorks[m] = r
		}
		Expect(framework.SetImage(ctx, w.hub, ns, name, "nginx:1.26")).To(Succeed())
		completedAt(2)
		By("each stage started once, in order, as the Events say")
		s().stagesStarted(2)
		By("no stored status of revision 2 released a stage before the one before it was healthy")
		states := framework.JSONPath("{.status.revision} {range .status.clusters[*]}{.name}={.state} {end}")
		versions := stored(statuses, states)
		Expect(versions).To(ContainElement("2 member1=Healthy member2=Healthy member3=Healthy "))
		for _, v := range versions {
			if !strings.HasPrefix(v, "2 ") {
				continue
			}
			if !strings.Contains(v, "member3=Pending") {
				Expect(v).To(ContainSubstring("member2=Healthy"), "member3 released before member2 was healthy: %q", v)
			}
			if !strings.Contains(v, "member2=Pending") {
				Expect(v).To(ContainSubstring("member1=Healthy"), "member2 released before member1 was healthy: %q", v)
			}
		}
		Expect(stored(recorders["member3"], framework.Image)).To(ContainElement("nginx:1.26"))

		By("the hub released member2's and member3's Works only after the stage before was stored healthy")
		// Works and the Rollout live in the hub's one etcd: their
		// resourceVersions order every write.
		released := framework.JSONPath("{.spec.suspendDispatching} {.spec.workload.manifests[0].spec.template.spec.containers[0].image}")
		for m, before := range map[string]string{"member2": "member1=Healthy", "member3": "member2=Healthy"} {
			_ = mark(hubWorks[m])
			releasedAt := firstVersion(hubWorks[m], func(v string) bool { return v == "false nginx:1.26" }, released)
			healthyAt := firstVersion(statuses, func(v string) bool { return strings.HasPrefix(v, "2 ") && strings.Contains(v, before) }, states)
			Expect(releasedAt).To(BeNumerically(">", 0), "%s's Work was released with nginx:1.26", m)
			Expect(healthyAt).To(BeNumerically(">", 0), "a status with %s at revision 2 was stored", before)
			Expect(releasedAt).To(BeNumerically(">", healthyAt), "%s's Work was released before the Rollout stored %s", m, before)
		}
	})

	It("stops a -broken image at the canary: it fails there, and member2 and member3 never store it", func() {
		recordAll()
		const broken = "nginx:1.27-broken"
		Expect(framework.SetImage(ctx, w.hub, ns, name, broken)).To(Succeed())
		Eventually(func(g Gomega) {
			ro := rollout()
			g.Expect(ro.Status.Revision).To(Equal(int64(3)))
			g.Expect(condition(ro, rolloutsv1alpha1.ConditionFailed)).To(Equal(metav1.ConditionTrue), "%+v", ro.Status)
			states := map[string]string{}
			for _, c := range ro.Status.Clusters {
				states[c.Name] = c.State
			}
			g.Expect(states).To(Equal(map[string]string{"member1": rolloutsv1alpha1.StateFailed,
				"member2": rolloutsv1alpha1.StateHeld, "member3": rolloutsv1alpha1.StateHeld}))
		}, "2m").Should(Succeed())
		Eventually(func(g Gomega) []string {
			return rolloutEvents(g, w.hub, ns, name, rolloutsv1alpha1.EventReasonRolloutFailed)
		}).Should(ContainElement(ContainSubstring("revision 3: stage 'canary' failed: 1 of 1 clusters failed (member1)")))
		By("Flux reads the failed Rollout as Failed, Argo CD as Degraded; its binding is held on purpose, Suspended")
		readsAs(w.hub, rolloutRef(ns, name), "Failed/Degraded", "canary")
		readsAs(w.hub, bindingRef(ns, name), "Current/Suspended", "member2", "member3", "held by Rollout default/staged")

		By("member2's and member3's Works hold with reason RolloutStage; the dispatcher says so")
		for _, m := range []string{"member2", "member3"} {
			Eventually(func(g Gomega) {
				d := dispatchingOn(w.hub, m, ns, name)
				g.Expect(d).NotTo(BeNil())
				g.Expect(d.Reason).To(Equal("RolloutStage"))
				g.Expect(d.Status).To(Equal(metav1.ConditionFalse))
			}).Should(Succeed())
		}
		Expect(stored(recorders["member1"], framework.Image)).To(ContainElement(broken))
		for _, m := range []string{"member2", "member3"} {
			Expect(stored(recorders[m], framework.Image)).NotTo(ContainElement(broken), "%s stored the broken image", m)
		}

		By("a fixed image is a new revision: it starts from the canary again and reaches every member")
		Expect(framework.SetImage(ctx, w.hub, ns, name, "nginx:1.27")).To(Succeed())
		completedAt(4)
		for m := range w.inMembers {
			memberImageIs(m, "nginx:1.27")
		}
		for _, m := range []string{"member2", "member3"} {
			Expect(stored(recorders[m], framework.Image)).NotTo(ContainElement(broken), "%s stored the broken image", m)
		}
	})

	patchRollout := func(patch string) {
		GinkgoHelper()
		ro := &rolloutsv1alpha1.Rollout{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		Expect(w.hub.Patch(ctx, ro, client.RawPatch(types.MergePatchType, []byte(patch)))).To(Succeed())
	}
	clusterState := func(g Gomega, cluster string) rolloutsv1alpha1.ClusterStatus {
		for _, c := range rollout().Status.Clusters {
			if c.Name == cluster {
				return c
			}
		}
		g.Expect(cluster).To(BeEmpty(), "no status for the cluster")
		return rolloutsv1alpha1.ClusterStatus{}
	}

	It("with onFailure Rollback, puts the failed canary back on the image that was healthy there; the others never store the broken one", func() {
		recordAll()
		patchRollout(`{"spec":{"onFailure":"Rollback"}}`)
		before := rollout().Status.Revision
		const broken = "nginx:1.28-broken"
		Expect(framework.SetImage(ctx, w.hub, ns, name, broken)).To(Succeed())
		Eventually(func(g Gomega) {
			ro := rollout()
			g.Expect(ro.Status.Revision).To(Equal(before + 1))
			c := clusterState(g, "member1")
			g.Expect(c.State).To(Equal(rolloutsv1alpha1.StateRolledBack), "%+v", c)
			g.Expect(c.Revision).To(Equal(before))
		}, "2m").Should(Succeed())
		memberImageIs("member1", "nginx:1.27")
		Expect(stored(recorders["member1"], framework.Image)).To(ContainElement(broken), "member1 got the broken image before it was rolled back")
		By("get rollout says member1 runs the revision it was rolled back to, not that it waits for the template")
		Eventually(func(g Gomega) {
			r := cliOn(w.f.Hub.KubeconfigPath, "get", "rollout", "-n", ns, "-o", "json")
			g.Expect(r.code).To(Equal(0), r.stderr)
			g.Expect(r.stdout).To(MatchRegexp(`"cluster": "member1",\s+"state": "Applied",[^}]*"reason": "RolledBack",\s+"message": "rolled back to revision %d of Rollout %s/%s`, before, ns, name))
		}, "1m").Should(Succeed())
		for _, m := range []string{"member2", "member3"} {
			Expect(stored(recorders[m], framework.Image)).NotTo(ContainElement(broken), "%s stored the broken image", m)
		}
		By("the revisions are kept as ControllerRevisions on the hub")
		var revs appsv1.ControllerRevisionList
		Expect(w.hub.List(ctx, &revs, client.InNamespace(ns), client.MatchingLabels{rolloutsv1alpha1.RolloutUIDLabel: string(rollout().UID)})).To(Succeed())
		Expect(len(revs.Items)).To(BeNumerically(">=", 2))
		patchRollout(`{"spec":{"onFailure":"Hold"}}`)
		Expect(framework.SetImage(ctx, w.hub, ns, name, "nginx:1.28")).To(Succeed())
		completedAt(before + 2)
	})

	It("pauses in the middle of a soak: nothing more is released while paused, and it goes on from there on resume", func() {
		recordAll()
		patchRollout(`{"spec":{"stages":[{"name":"canary","clusters":["member1"],"minSuccessTime":"20s"},{"name":"second","clusters":["member2"]},{"name":"last","clusters":["member3"]}]}}`)
		before := rollout().Status.Revision
		Expect(framework.SetImage(ctx, w.hub, ns, name, "nginx:1.29")).To(Succeed())
		Eventually(func(g Gomega) {
			ro := rollout()
			g.Expect(ro.Status.Revision).To(Equal(before + 1))
			g.Expect(ro.Status.SoakStartedAt).NotTo(BeNil(), "%+v", ro.Status)
		}, "2m").Should(Succeed())
		By("a soaking Rollout is on its way: Flux reads InProgress, Argo CD Progressing")
		Eventually(func(g Gomega) string { r, _ := gitOpsReads(g, w.hub, rolloutRef(ns, name)); return r }).Should(Equal("InProgress/Progressing"))
		patchRollout(`{"metadata":{"annotations":{"propagation.federator.dev/suspended":"look at the canary first"}}}`)
		Eventually(func(g Gomega) metav1.ConditionStatus { return condition(rollout(), rolloutsv1alpha1.ConditionPaused) }).Should(Equal(metav1.ConditionTrue))
		By("paused on purpose: Current for Flux, Suspended for Argo CD, with the reason given")
		readsAs(w.hub, rolloutRef(ns, name), "Current/Suspended", "look at the canary first")
		// Longer than the soak: without the pause, stage second would start.
		time.Sleep(25 * time.Second)
		Expect(stored(recorders["member2"], framework.Image)).NotTo(ContainElement("nginx:1.29"), "member2 got the image while the rollout was paused")
		Expect(rollout().Status.CurrentStage).To(Equal("canary"))
		patchRollout(`{"metadata":{"annotations":{"propagation.federator.dev/suspended":null}}}`)
		completedAt(before + 1)
		memberImageIs("member3", "nginx:1.29")
	})

	It("holds a stage whose gate is closed until the gate opens", func() {
		recordAll()
		gate := &gatingv1alpha1.Gate{TypeMeta: metav1.TypeMeta{APIVersion: "gating.federator.dev/v1alpha1", Kind: "Gate"},
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "approve-second"}, Spec: gatingv1alpha1.GateSpec{Default: gatingv1alpha1.Closed}}
		Expect(framework.Apply(ctx, w.hub, gate, fieldOwner)).To(Succeed())
		patchRollout(`{"spec":{"stages":[{"name":"canary","clusters":["member1"]},{"name":"second","clusters":["member2"],"gates":["approve-second"]},{"name":"last","clusters":["member3"]}]}}`)
		before := rollout().Status.Revision
		Expect(framework.SetImage(ctx, w.hub, ns, name, "nginx:1.30")).To(Succeed())
		Eventually(func(g Gomega) {
			ro := rollout()
			g.Expect(ro.Status.Revision).To(Equal(before + 1))
			g.Expect(ro.Status.CurrentStage).To(Equal("second"))
			c := meta.FindStatusCondition(ro.Status.Conditions, rolloutsv1alpha1.ConditionProgressing)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Reason).To(Equal(rolloutsv1alpha1.ReasonWaitingForGate))
			g.Expect(c.Message).To(ContainSubstring("gate 'default/approve-second' is closed"))
		}, "2m").Should(Succeed())
		memberImageIs("member1", "nginx:1.30")
		By("a closed gate holds on purpose: the Rollout, its binding and the gate read Current/Suspended")
		readsAs(w.hub, rolloutRef(ns, name), "Current/Suspended", "approve-second")
		readsAs(w.hub, bindingRef(ns, name), "Current/Suspended", "member2", "member3", "held by Rollout default/staged")
		readsAs(w.hub, gate, "Current/Suspended")
		Expect(stored(recorders["member2"], framework.Image)).NotTo(ContainElement("nginx:1.30"), "member2 got the image while its gate was closed")
		Expect(w.hub.Patch(ctx, gate, client.RawPatch(types.MergePatchType, []byte(
			`{"metadata":{"annotations":{"open.gate.federator.dev/requestedAt":"`+time.Now().UTC().Format(time.RFC3339)+`"}}}`)))).To(Succeed())
		completedAt(before + 1)
		memberImageIs("member2", "nginx:1.30")
		readsAs(w.hub, gate, "Current/Healthy")
		readsAs(w.hub, bindingRef(ns, name), "Current/Healthy")
		patchRollout(`{"spec":{"stages":[{"name":"canary","clusters":["member1"]},{"name":"second","clusters":["member2"]},{"name":"last","clusters":["member3"]}]}}`)
	})

	It("does not release a stage's clusters while the policy is suspended: the canary waits Held, and goes on once resumed", func() {
		recordAll()
		pp := &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		Expect(w.hub.Patch(ctx, pp, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"propagation.federator.dev/suspended":"incident 7"}}}`)))).To(Succeed())
		before := rollout().Status.Revision
		Expect(framework.SetImage(ctx, w.hub, ns, name, "nginx:1.31")).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(rollout().Status.Revision).To(Equal(before + 1))
			c := clusterState(g, "member1")
			g.Expect(c.State).To(Equal(rolloutsv1alpha1.StateHeld), "%+v", c)
			g.Expect(c.Reason).To(Equal(rolloutsv1alpha1.ReasonHeldElsewhere))
			g.Expect(c.Message).To(ContainSubstring("incident 7"))
		}, "2m").Should(Succeed())
		By("held by the policy's suspension: the Rollout and its binding read Current/Suspended, naming it")
		readsAs(w.hub, rolloutRef(ns, name), "Current/Suspended")
		readsAs(w.hub, bindingRef(ns, name), "Current/Suspended", "member1", "incident 7")
		for _, m := range []string{"member1", "member2", "member3"} {
			Expect(stored(recorders[m], framework.Image)).NotTo(ContainElement("nginx:1.31"), "%s got the image while the policy was suspended", m)
		}
		Expect(w.hub.Patch(ctx, pp, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"propagation.federator.dev/suspended":null}}}`)))).To(Succeed())
		completedAt(before + 1)
		memberImageIs("member3", "nginx:1.31")
	})
})

// firstVersion is the resourceVersion of the first recorded version whose
// field matches, 0 when none does.
func firstVersion(r *framework.Recorder, match func(string) bool, field framework.Field) int64 {
	for _, v := range r.Versions() {
		if match(field(v.Object)) {
			rv, err := strconv.ParseInt(v.Object.GetResourceVersion(), 10, 64)
			Expect(err).NotTo(HaveOccurred())
			return rv
		}
	}
	return 0
}

// rolloutEvents are the messages of the Events with reason on the
// Rollout ns/name of a workload fleet's hub.
func rolloutEvents(g Gomega, hub client.Client, ns, name, reason string) []string {
	events := &corev1.EventList{}
	g.Expect(hub.List(ctx, events, client.InNamespace(ns))).To(Succeed())
	var out []string
	for _, e := range events.Items {
		if e.InvolvedObject.Kind == "Rollout" && e.InvolvedObject.Name == name && e.Reason == reason {
			out = append(out, e.Message)
		}
	}
	return out
}

// dispatchingOn is the Dispatching condition of the Deployment's Work for
// member on hub.
func dispatchingOn(hub client.Client, member, ns, name string) *metav1.Condition {
	w := workOn(hub, member, ns, name)
	if w == nil {
		return nil
	}
	return meta.FindStatusCondition(w.Status.Conditions, "Dispatching")
}
