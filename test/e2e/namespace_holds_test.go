package e2e

import (
	"slices"
	"time"

	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	"github.com/karmada-io/karmada/pkg/util/names"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/federator-dev/federator/pkg/fleet"
	"github.com/federator-dev/federator/test/framework"
)

// Removing a namespace removes everything in it, so a member namespace
// follows the rules of what it holds: a hub namespace deleted or
// skip-labelled leaves a member only once nothing of the hub's in it is
// held there or counting down. Where nothing is, it goes as before.
var _ = Describe("namespaces with held or counting-down objects", Ordered, func() {
	// Namespaces are gone only once a namespace controller has emptied
	// them: a fleet of its own with kube-controller-manager in every
	// cluster, as `federator up` runs, shared by this file's specs.
	var (
		f         *fleet.Fleet
		hub       client.Client
		inMembers map[string]client.Client
	)
	BeforeAll(func() {
		f, hub = separateFleet(2, true)
		runController(f)
		inMembers = joinMembers(f, hub)
	})

	// record records obj in member for the rest of the spec.
	record := func(member string, obj client.Object) *framework.Recorder {
		GinkgoHelper()
		for _, m := range f.Members {
			if m.Name != member {
				continue
			}
			dyn, err := dynamic.NewForConfig(m.Config)
			Expect(err).NotTo(HaveOccurred())
			r, err := framework.Record(ctx, dyn, inMembers[member], obj, member)
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(r.Stop)
			return r
		}
		Fail("no member " + member)
		return nil
	}
	present := func(member string, obj client.Object) bool {
		err := inMembers[member].Get(ctx, client.ObjectKeyFromObject(obj), obj.DeepCopyObject().(client.Object))
		Expect(client.IgnoreNotFound(err)).To(Succeed())
		return err == nil
	}
	namespaceWork := func(member, ns string) *workv1alpha1.Work {
		w := &workv1alpha1.Work{}
		if err := hub.Get(ctx, framework.WorkKey(member, "Namespace", "", ns), w); err != nil {
			return nil
		}
		return w
	}
	placed := func(ns, name string, annotations map[string]string) {
		GinkgoHelper()
		Expect(hub.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
		d := framework.NewDeployment(ns, name, "nginx:1.25")
		d.Annotations = annotations
		Expect(framework.Apply(ctx, hub, d, fieldOwner)).To(Succeed())
		Expect(framework.Apply(ctx, hub, framework.NewDeploymentPolicy(ns, name, name, "member1", "member2"), fieldOwner)).To(Succeed())
		Eventually(func() []bool {
			return []bool{present("member1", deploymentRef(ns, name)), present("member2", deploymentRef(ns, name))}
		}, "60s").Should(Equal([]bool{true, true}))
	}
	deletionTimestamp := framework.JSONPath("{.metadata.deletionTimestamp}")
	uid := framework.JSONPath("{.metadata.uid}")
	// neverDeleted proves from r's whole record that its object was never
	// marked for deletion nor deleted.
	neverDeleted := func(r *framework.Recorder, what string) {
		GinkgoHelper()
		m := mark(r)
		Expect(r.ValuesBetween(0, m, deletionTimestamp)).To(HaveEach(BeEmpty()), "%s was marked for deletion", what)
		Expect(r.History(0, m, uid)).NotTo(ContainElement(HavePrefix("DELETED")), "%s was deleted", what)
		Expect(slices.Compact(r.ValuesBetween(0, m, uid))).To(HaveLen(1), "%s was replaced (a new UID)", what)
	}
	hubNamespaceEvents := func(ns string) []string {
		events := &corev1.EventList{}
		Expect(hub.List(ctx, events, client.InNamespace(metav1.NamespaceDefault))).To(Succeed())
		var out []string
		for _, e := range events.Items {
			if e.InvolvedObject.Kind == "Namespace" && e.InvolvedObject.Name == ns {
				out = append(out, e.Reason+": "+e.Message)
			}
		}
		return out
	}

	It("keeps a skip-labelled namespace, and the object in it, where that object is held; elsewhere it goes as before", func() {
		const ns, name = "ns-held", "web"
		placed(ns, name, nil)
		nsRef := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
		namespaceOnMember2, webOnMember2 := record("member2", nsRef), record("member2", deploymentRef(ns, name))

		By("holding web on member2")
		Expect(hub.Patch(ctx, deploymentRef(ns, name), client.RawPatch(types.MergePatchType,
			[]byte(`{"metadata": {"annotations": {"suspended.propagation.federator.dev/member2": "freeze"}}}`)))).To(Succeed())
		Eventually(func() string {
			w := &workv1alpha1.Work{}
			if err := hub.Get(ctx, framework.WorkKey("member2", "Deployment", ns, name), w); err != nil {
				return err.Error()
			}
			if c := meta.FindStatusCondition(w.Status.Conditions, "Dispatching"); c != nil {
				return c.Reason
			}
			return ""
		}).Should(Equal("SuspendDispatching"), "the dispatcher saw the hold")

		By("labelling the hub namespace namespace.karmada.io/skip-auto-propagation=true")
		Expect(hub.Patch(ctx, nsRef.DeepCopy(), client.RawPatch(types.MergePatchType,
			[]byte(`{"metadata": {"labels": {"namespace.karmada.io/skip-auto-propagation": "true"}}}`)))).To(Succeed())
		Eventually(func() bool { return present("member1", nsRef) }, "60s").Should(BeFalse(), "member1, where nothing is held, loses it as before")
		Expect(present("member1", deploymentRef(ns, name))).To(BeFalse())

		const why = `namespace ns-held kept in member2: Deployment ns-held/web is held (suspended by annotation ` +
			`suspended.propagation.federator.dev/member2 on Deployment ns-held/web ("freeze"); remove the annotation to resume)`
		neverDeleted(namespaceOnMember2, "member2's namespace")
		neverDeleted(webOnMember2, "member2's Deployment")
		Eventually(func() string {
			if w := namespaceWork("member2", ns); w != nil {
				return w.Annotations["namespace.federator.dev/kept"]
			}
			return "no Work"
		}).Should(Equal(why))
		Eventually(func() []string { return hubNamespaceEvents(ns) }).Should(ContainElement("NamespaceKept: " + why))
		neverDeleted(namespaceOnMember2, "member2's namespace")
		neverDeleted(webOnMember2, "member2's Deployment")

		By("releasing the hold: nothing keeps the namespace in member2 any more")
		Expect(hub.Patch(ctx, deploymentRef(ns, name), client.RawPatch(types.MergePatchType,
			[]byte(`{"metadata": {"annotations": {"suspended.propagation.federator.dev/member2": null}}}`)))).To(Succeed())
		Eventually(func() bool { return present("member2", nsRef) }, "60s").Should(BeFalse())
		Eventually(func() []string { return hubNamespaceEvents(ns) }).Should(ContainElement(
			"NamespaceReleased: namespace ns-held removed from member2: nothing of the hub's in it is held or counting down there any more"))
	})

	It("removes a deleted namespace from a member only after the deletion delay of an object in it has passed", func() {
		const ns, name = "ns-delayed", "web"
		placed(ns, name, map[string]string{delayKey: "20s"})
		nsRef := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
		namespaceOnMember1, webOnMember1 := record("member1", nsRef), record("member1", deploymentRef(ns, name))

		By("deleting the namespace on the hub")
		Expect(hub.Delete(ctx, nsRef.DeepCopy())).To(Succeed())
		var started string
		Eventually(func() string {
			got := &appsv1.Deployment{}
			_ = inMembers["member1"].Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, got)
			started = got.Annotations[timestampKey]
			return started
		}, "60s").ShouldNot(BeEmpty(), "the template's deletion starts its countdown in member1")
		at, err := time.Parse(time.RFC3339, started)
		Expect(err).NotTo(HaveOccurred())
		due := at.Add(20 * time.Second)

		By("waiting for the countdown")
		// Five seconds before it ends: room for the recorders' sync and the
		// read of the Work on a loaded machine.
		time.Sleep(time.Until(due.Add(-5 * time.Second)))
		m := mark(namespaceOnMember1)
		Expect(time.Now()).To(BeTemporally("<", due), "the recorder synced too late to prove anything")
		Expect(namespaceOnMember1.ValuesBetween(0, m, deletionTimestamp)).To(HaveEach(BeEmpty()),
			"member1's namespace was marked for deletion before its object's countdown ended")
		Expect(webOnMember1.History(0, mark(webOnMember1), countdownMark)).NotTo(ContainElement(HavePrefix("DELETED")))
		w := namespaceWork("member1", ns)
		Expect(w).NotTo(BeNil(), "the Work that carries the namespace to member1")
		Expect(w.Annotations).To(HaveKeyWithValue("namespace.federator.dev/kept", "namespace ns-delayed kept in member1: "+
			"Deployment ns-delayed/web counts down until "+due.UTC().Format(time.RFC3339)+" (deletion delay 20s)"))

		Eventually(func() bool { return present("member1", nsRef) }, time.Until(due)+60*time.Second).Should(BeFalse(),
			"member1's namespace goes once the countdown ended")
		var marked []string
		for _, v := range namespaceOnMember1.Values(deletionTimestamp) {
			if v != "" {
				marked = append(marked, v)
			}
		}
		Expect(marked).NotTo(BeEmpty())
		at, err = time.Parse(time.RFC3339, marked[0])
		Expect(err).NotTo(HaveOccurred())
		Expect(at).NotTo(BeTemporally("<", due.Truncate(time.Second)), "member1's namespace was deleted before the countdown ended")
		Eventually(func() bool {
			return apierrors.IsNotFound(hub.Get(ctx, client.ObjectKeyFromObject(nsRef), &corev1.Namespace{}))
		}).Should(BeTrue(), "the hub's namespace controller finishes too")
		Eventually(func() (int, error) {
			list := &corev1.ConfigMapList{}
			err := hub.List(ctx, list, client.InNamespace(names.GenerateExecutionSpaceName("member1")),
				client.HasLabels{"softdelete.federator.dev/tombstone"})
			return len(list.Items), err
		}).Should(BeZero(), "the countdown's record is gone")
	})
})
