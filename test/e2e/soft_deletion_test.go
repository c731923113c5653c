package e2e

import (
	"slices"
	"time"

	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	"github.com/karmada-io/karmada/pkg/util/names"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/federator-dev/federator/internal/countdown"
	"github.com/federator-dev/federator/test/framework"
)

const (
	delayKey     = "federator.dev/deletion-delay"
	timestampKey = "federator.dev/deletion-timestamp"
)

// countdownMark is a member object's deletion-timestamp annotation.
var countdownMark framework.Field = func(u *unstructured.Unstructured) string { return u.GetAnnotations()[timestampKey] }

// delayedDeployment applies Deployment ns/name at image with a deletion
// delay ("" for none).
func delayedDeployment(ns, name, image, delay string) {
	GinkgoHelper()
	d := framework.NewDeployment(ns, name, image)
	if delay != "" {
		d.Annotations = map[string]string{delayKey: delay}
	}
	Expect(framework.Apply(ctx, hubClient, d, fieldOwner)).To(Succeed())
}

// delayedEverywhere starts a spec from Deployment ns/name at nginx:1.25 with
// a deletion delay, in its own namespace, propagated to every member.
func delayedEverywhere(ns, name, delay string) {
	GinkgoHelper()
	namespace(ns)
	delayedDeployment(ns, name, "nginx:1.25", delay)
	propagationPolicy(ns, name, nil)
	Eventually(func() map[string]string { return imagesEverywhere(ns, name) }).Should(Equal(everywhere("nginx:1.25")))
}

// countingDown waits until member marks Deployment ns/name as counting
// down and returns when its delay ends.
func countingDown(member, ns, name string, delay time.Duration) time.Time {
	GinkgoHelper()
	var mark string
	Eventually(func() string {
		mark = env.MemberValue(ctx, member, deploymentRef(ns, name), countdownMark)
		return mark
	}).ShouldNot(BeEmpty(), "%s marks %s/%s", member, ns, name)
	started, err := time.Parse(time.RFC3339, mark)
	Expect(err).NotTo(HaveOccurred())
	return started.Add(delay)
}

// tombstone is the countdown the hub records for Deployment ns/name in
// member.
func tombstone(member, ns, name string) (countdown.Tombstone, bool) {
	GinkgoHelper()
	t, found, err := countdown.Lookup(ctx, hubClient, member, "Deployment", ns, name)
	Expect(err).NotTo(HaveOccurred())
	return t, found
}

// notDeletedBefore proves, from the recorder's watch, that the object was
// still stored up to just before due: it waits until three seconds before
// (room for the sync on a loaded machine), then syncs the recorder and
// finds no deletion in what it recorded.
func notDeletedBefore(r *framework.Recorder, due time.Time) {
	GinkgoHelper()
	time.Sleep(time.Until(due.Add(-3 * time.Second)))
	m := mark(r)
	Expect(time.Now()).To(BeTemporally("<", due), "the recorder synced too late to prove anything")
	Expect(r.History(0, m, countdownMark)).NotTo(ContainElement(HavePrefix("DELETED")), "deleted before its delay ended")
}

// deletedOnTime waits until the recorder saw the deletion.
// How soon after due is not asserted (the machine may be loaded; the
// exact RequeueAfter is pkg/softdelete's unit tests' business); it returns
// when the deletion was seen, for a spec that must tell a countdown that
// went on from one started afresh.
func deletedOnTime(r *framework.Recorder, due time.Time) time.Time {
	GinkgoHelper()
	Eventually(func() []string { return r.History(0, r.End(), countdownMark) }, time.Until(due)+30*time.Second).
		Should(ContainElement(HavePrefix("DELETED")))
	return time.Now()
}

// bindingEvents is "reason: message" of the Events on Deployment ns/name's binding.
func bindingEvents(ns, name string) []string {
	return templateEvents(ns, "ResourceBinding", names.GenerateBindingName("Deployment", name))
}

var _ = Describe("soft deletion", func() {
	It("keeps a Deployment dropped from member3 running there, marked, until its delay ends, then deletes it", func() {
		const ns, name = "softdel-drop", "web"
		delayedEverywhere(ns, name, "5s")
		member3 := recordMember("member3", deploymentRef(ns, name))

		By("dropping member3 from the policy's clusterNames")
		patchPolicy(ns, name, `{"spec": {"placement": {"clusterAffinity": {"clusterNames": ["member1", "member2"]}}}}`)
		due := countingDown("member3", ns, name, 5*time.Second)
		Expect(memberImage("member3", ns, name)).To(Equal("nginx:1.25"), "still running in member3")
		// The member is marked first, then the hub records the countdown.
		var t countdown.Tombstone
		Eventually(func() (found bool) { t, found = tombstone("member3", ns, name); return found }).Should(BeTrue(),
			"the hub records the countdown")
		Expect(t.Delay).To(Equal("5s"))
		Eventually(func() error {
			_, err := env.Work(ctx, "member3", "Deployment", ns, name)
			return err
		}).Should(Satisfy(apierrors.IsNotFound), "the Work is released, not stuck")
		Eventually(func() []string { return bindingEvents(ns, name) }).Should(ContainElement(
			HavePrefix("SoftDeletionStarted: Deployment softdel-drop/web in member3 will be deleted at " + due.UTC().Format(time.RFC3339))))

		notDeletedBefore(member3, due)
		deletedOnTime(member3, due)
		Expect(slices.Compact(stored(member3, countdownMark))).To(Equal([]string{"", t.StartedAt.UTC().Format(time.RFC3339)}),
			"marked once, with one start")
		Eventually(func() bool { _, found := tombstone("member3", ns, name); return found }).Should(BeFalse())
		Eventually(func() []string { return bindingEvents(ns, name) }).Should(ContainElement(
			HavePrefix("SoftDeletionCompleted: Deployment softdel-drop/web deleted from member3")))
		Expect(imagesEverywhere(ns, name)).To(Equal(map[string]string{"member1": "nginx:1.25", "member2": "nginx:1.25", "member3": ""}))
	})

	It("takes a deletion back when member3 is placed again before the delay ends: same object, unmarked, updated", Label("smoke"), func() {
		const ns, name = "softdel-back", "web"
		delayedEverywhere(ns, name, "1m")
		before := &appsv1.Deployment{}
		Expect(members["member3"].Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, before)).To(Succeed())
		member3 := recordMember("member3", deploymentRef(ns, name))

		patchPolicy(ns, name, `{"spec": {"placement": {"clusterAffinity": {"clusterNames": ["member1", "member2"]}}}}`)
		countingDown("member3", ns, name, time.Minute)
		By("updating the template while member3 counts down, then placing member3 again")
		delayedDeployment(ns, name, "nginx:1.26", "1m")
		Eventually(func() string { return memberImage("member1", ns, name) }).Should(Equal("nginx:1.26"))
		Expect(memberImage("member3", ns, name)).To(Equal("nginx:1.25"), "what counts down gets no updates")
		patchPolicy(ns, name, `{"spec": {"placement": {"clusterAffinity": {"clusterNames": ["member1", "member2", "member3"]}}}}`)

		Eventually(func() []string {
			return []string{memberImage("member3", ns, name), env.MemberValue(ctx, "member3", deploymentRef(ns, name), countdownMark)}
		}).Should(Equal([]string{"nginx:1.26", ""}), "adopted: updated and unmarked")
		after := &appsv1.Deployment{}
		Expect(members["member3"].Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, after)).To(Succeed())
		Expect(after.UID).To(Equal(before.UID), "the same object: never deleted and created anew")
		Expect(member3.History(0, mark(member3), framework.Image)).NotTo(ContainElement(HavePrefix("DELETED")))
		Eventually(func() bool { _, found := tombstone("member3", ns, name); return found }).Should(BeFalse())
		Eventually(func() []string { return bindingEvents(ns, name) }).Should(ContainElement(
			HavePrefix("SoftDeletionCancelled: Deployment softdel-back/web in member3 is placed there again")))
	})

	It("keeps a template deleted on the hub in every member until the policy's default delay ends, then leaves nothing anywhere", func() {
		const ns, name = "softdel-template", "web"
		namespace(ns)
		delayedDeployment(ns, name, "nginx:1.25", "")
		pp := framework.NewDeploymentPolicy(ns, name, name, env.MemberNames()...)
		pp.Annotations = map[string]string{delayKey: "6s"}
		Expect(framework.Apply(ctx, hubClient, pp, fieldOwner)).To(Succeed())
		delayOnMembers := framework.Field(func(u *unstructured.Unstructured) string { return u.GetAnnotations()[delayKey] })
		Eventually(func() map[string]string { return env.MemberValues(ctx, deploymentRef(ns, name), delayOnMembers) }).
			Should(Equal(everywhere("6s")), "the policy's default travels to every member copy")
		recorders := recordEverywhere(deploymentRef(ns, name))

		Expect(hubClient.Delete(ctx, deploymentRef(ns, name))).To(Succeed())
		var due time.Time
		for m := range members {
			if d := countingDown(m, ns, name, 6*time.Second); d.After(due) {
				due = d
			}
		}
		By("the hub side does not wait: binding and Works go, tombstones stay")
		Eventually(func() bool {
			err := hubClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: names.GenerateBindingName("Deployment", name)},
				&workv1alpha2.ResourceBinding{})
			return apierrors.IsNotFound(err)
		}).Should(BeTrue())
		Eventually(func() (int, error) { w, err := env.WorksOf(ctx, ns); return len(w), err }).Should(BeZero())
		for m := range members {
			_, found := tombstone(m, ns, name)
			Expect(found).To(BeTrue(), m)
		}
		Expect(imagesEverywhere(ns, name)).To(Equal(everywhere("nginx:1.25")))

		for m, r := range recorders {
			By("member " + m)
			notDeletedBefore(r, due.Add(-time.Second))
		}
		for _, r := range recorders {
			deletedOnTime(r, due)
		}
		Eventually(func() int {
			n := 0
			for m := range members {
				if _, found := tombstone(m, ns, name); found {
					n++
				}
			}
			return n
		}).Should(BeZero(), "no tombstone left")
		Expect(imagesEverywhere(ns, name)).To(Equal(everywhere("")))
		Eventually(func() []string { return templateEvents(ns, "PropagationPolicy", name) }).Should(ContainElement(
			HavePrefix("SoftDeletionCompleted: Deployment softdel-template/web deleted from member")), "told on the policy: the binding is gone")
	})

	It("keeps an object whose delay is invalid, says so naming the value, and counts down once it is fixed", func() {
		const ns, name = "softdel-bad", "web"
		delayedEverywhere(ns, name, "24 hours")
		bindingKey := client.ObjectKey{Namespace: ns, Name: names.GenerateBindingName("Deployment", name)}
		Eventually(func() *metav1.Condition {
			b := &workv1alpha2.ResourceBinding{}
			if err := hubClient.Get(ctx, bindingKey, b); err != nil {
				return nil
			}
			return meta.FindStatusCondition(b.Status.Conditions, "DeletionDelay")
		}).Should(And(Not(BeNil()), HaveField("Status", metav1.ConditionFalse), HaveField("Reason", "InvalidDeletionDelay"),
			HaveField("Message", ContainSubstring(`"24 hours" is not a Go duration`))))
		Eventually(func() []string { return templateEvents(ns, "Deployment", name) }).Should(ContainElement(
			ContainSubstring(`InvalidDeletionDelay: deletion delay 24 hours on Deployment softdel-bad/web: "24 hours" is not a Go duration`)))
		member3 := recordMember("member3", deploymentRef(ns, name))

		patchPolicy(ns, name, `{"spec": {"placement": {"clusterAffinity": {"clusterNames": ["member1", "member2"]}}}}`)
		Eventually(func() ([]workv1alpha2.TargetCluster, error) {
			b := &workv1alpha2.ResourceBinding{}
			return b.Spec.Clusters, hubClient.Get(ctx, bindingKey, b)
		}).Should(HaveLen(2), "placement dropped member3")
		// The binding controller has acted on the drop; give the dispatcher
		// a moment it would need to delete.
		time.Sleep(2 * time.Second)
		Expect(member3.History(0, mark(member3), countdownMark)).To(Equal([]string{"EXISTING "}), "kept as it was: not deleted, not marked")
		_, err := env.Work(ctx, "member3", "Deployment", ns, name)
		Expect(err).NotTo(HaveOccurred(), "the Work of member3 is kept while the delay cannot be read")

		By("fixing the value: the countdown starts and ends")
		delayedDeployment(ns, name, "nginx:1.25", "2s")
		due := countingDown("member3", ns, name, 2*time.Second)
		deletedOnTime(member3, due)
	})

	It("deletes at once on `federator delete --now`", func() {
		const ns, name = "softdel-now", "web"
		delayedEverywhere(ns, name, "1h")
		patchPolicy(ns, name, `{"spec": {"placement": {"clusterAffinity": {"clusterNames": ["member1", "member2"]}}}}`)
		countingDown("member3", ns, name, time.Hour)
		Eventually(func() bool { _, found := tombstone("member3", ns, name); return found }).Should(BeTrue())

		run := federatorCLI("delete", "--now", "deployment", name, "-n", ns, "--cluster", "member3")
		Expect(run.code).To(BeZero(), run.stderr)
		Expect(run.stdout).To(HavePrefix("Deployment softdel-now/web deleted from member3"))
		err := members["member3"].Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &appsv1.Deployment{})
		Expect(apierrors.IsNotFound(err)).To(BeTrue(), "gone from member3 when the command returns: %v", err)
		Eventually(func() []string { return bindingEvents(ns, name) }).Should(ContainElement(
			ContainSubstring("on request (federator delete --now)")))
		Expect(imagesEverywhere(ns, name)).To(Equal(map[string]string{"member1": "nginx:1.25", "member2": "nginx:1.25", "member3": ""}))

		By("an object that does not count down is left alone")
		run = federatorCLI("delete", "--now", "deployment", name, "-n", ns, "--cluster", "member1")
		Expect(run.code).NotTo(BeZero())
		Expect(run.stderr).To(ContainSubstring("has no deletion countdown in cluster member1"))
		Expect(memberImage("member1", ns, name)).To(Equal("nginx:1.25"))
	})

	It("deletes on time after the controller restarts in the middle of a countdown", func() {
		f, hub := separateFleet(1, false)
		session := runController(f)
		member := joinMembers(f, hub)["member1"]
		const ns, name = "softdel-restart", "web"
		Expect(hub.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
		d := framework.NewDeployment(ns, name, "nginx:1.25")
		// Long enough for a restart on a loaded machine to end before it.
		d.Annotations = map[string]string{delayKey: "20s"}
		Expect(framework.Apply(ctx, hub, d, fieldOwner)).To(Succeed())
		Expect(framework.Apply(ctx, hub, framework.NewDeploymentPolicy(ns, name, name, "member1"), fieldOwner)).To(Succeed())
		Eventually(func() error {
			return member.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &appsv1.Deployment{})
		}).Should(Succeed())
		dyn, err := dynamic.NewForConfig(f.Members[0].Config)
		Expect(err).NotTo(HaveOccurred())
		recorder, err := framework.Record(ctx, dyn, member, deploymentRef(ns, name), "member1")
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(recorder.Stop)

		Expect(hub.Delete(ctx, deploymentRef(ns, name))).To(Succeed())
		var started string
		Eventually(func() string {
			got := &appsv1.Deployment{}
			_ = member.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, got)
			started = got.Annotations[timestampKey]
			return started
		}).ShouldNot(BeEmpty())
		at, err := time.Parse(time.RFC3339, started)
		Expect(err).NotTo(HaveOccurred())
		due := at.Add(20 * time.Second)
		// The mark is rounded up to the second: a restart within that second
		// could not be told from a countdown started afresh by it.
		time.Sleep(time.Until(at.Add(time.Second)))

		By("stopping the controller and starting it again")
		session.Kill().Wait("10s")
		runController(f)
		restarted := time.Now()
		notDeletedBefore(recorder, due)
		// A countdown started afresh by the restart would end 20s after it.
		Expect(deletedOnTime(recorder, due)).To(BeTemporally("<", restarted.Add(20*time.Second)),
			"the countdown went on from its start after the restart")
		Expect(slices.Compact(recorder.Values(countdownMark))).To(Equal([]string{"", started}), "the restart kept the start")
		Eventually(func() (int, error) {
			list := &corev1.ConfigMapList{}
			err := hub.List(ctx, list, client.HasLabels{"softdelete.federator.dev/tombstone"})
			return len(list.Items), err
		}).Should(BeZero())
	})
})
