package e2e

import (
	"encoding/json"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workkeys "github.com/federator-dev/federator/apis/work"
	"github.com/federator-dev/federator/test/framework"
)

// A Work a deleted binding left behind (found by the chaos checker, seed
// 7: a new leader, its caches just back after a hub restart, deleted a
// deleted template's Works as its cache listed them and missed the one
// written a moment before). The Work stayed, held by the old binding's
// Rollout stage, and the template created again never reached that
// member: its binding refused, on every pass, a Work of "another owner".
// Here the leftover is made by hand: member1's Work is given the
// permanent id of a binding that does not exist, and a hold.
var _ = Describe("a Work a deleted binding left behind", func() {
	It("is taken over by the template's binding, and its member gets the next change without losing the object", func() {
		const ns, name = "orphan-work", "web"
		propagatedEverywhere(ns, name)
		recorders := recordEverywhere(deploymentRef(ns, name))
		key := framework.WorkKey("member1", "Deployment", ns, name)
		w := &workv1alpha1.Work{}
		Expect(hubClient.Get(ctx, key, w)).To(Succeed())
		owner := w.Labels[workv1alpha2.ResourceBindingPermanentIDLabel]
		Expect(owner).NotTo(BeEmpty())

		By("leaving member1's Work to a binding that is gone, held")
		patch, err := json.Marshal(map[string]any{
			"metadata": map[string]any{
				"labels": map[string]any{workv1alpha2.ResourceBindingPermanentIDLabel: "a-binding-deleted-since"},
				"annotations": map[string]any{workkeys.HoldReasonAnnotation: "RolloutStage",
					workkeys.HoldMessageAnnotation: "held by Rollout orphan-work/gone: the rollout has not taken in this content of the template yet"},
			},
			"spec": map[string]any{"suspendDispatching": true},
		})
		Expect(err).NotTo(HaveOccurred())
		Expect(hubClient.Patch(ctx, w, client.RawPatch(types.MergePatchType, patch))).To(Succeed())

		setImage(ns, name, "nginx:1.26")
		Eventually(func() map[string]string { return imagesEverywhere(ns, name) }).Should(Equal(everywhere("nginx:1.26")),
			"member1's Work is the template's binding's again, released")
		Expect(hubClient.Get(ctx, key, w)).To(Succeed())
		Expect(w.Labels).To(HaveKeyWithValue(workv1alpha2.ResourceBindingPermanentIDLabel, owner))
		Expect(w.Annotations).NotTo(HaveKey(workkeys.HoldReasonAnnotation))
		for m, r := range recorders {
			Expect(stored(r, framework.Image)).NotTo(ContainElement(HavePrefix("DELETED")), "%s kept its object", m)
		}
	})

	It("is taken over held while its cluster is suspended: the member never stores a change until it is resumed", func() {
		const ns, name = "orphan-suspended", "web"
		propagatedEverywhere(ns, name)
		recorders := recordEverywhere(deploymentRef(ns, name))
		policy := &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		Expect(framework.MergePatch(ctx, hubClient, policy,
			`{"spec": {"suspension": {"dispatchingOnClusters": {"clusterNames": ["member1"]}}}}`)).To(Succeed())
		Eventually(func() *metav1.Condition { return dispatching("member1", "Deployment", ns, name) }).Should(And(
			Not(BeNil()), HaveField("Reason", "SuspendDispatching")))
		key := framework.WorkKey("member1", "Deployment", ns, name)
		w := &workv1alpha1.Work{}
		Expect(hubClient.Get(ctx, key, w)).To(Succeed())
		owner := w.Labels[workv1alpha2.ResourceBindingPermanentIDLabel]

		By("leaving member1's Work to a binding that is gone, and released: the worst a leftover can be")
		patch, err := json.Marshal(map[string]any{
			"metadata": map[string]any{
				"labels":      map[string]any{workv1alpha2.ResourceBindingPermanentIDLabel: "a-binding-deleted-since"},
				"annotations": map[string]any{workkeys.HoldReasonAnnotation: nil, workkeys.HoldMessageAnnotation: nil},
			},
			"spec": map[string]any{"suspendDispatching": false},
		})
		Expect(err).NotTo(HaveOccurred())
		Expect(hubClient.Patch(ctx, w, client.RawPatch(types.MergePatchType, patch))).To(Succeed())
		setImage(ns, name, "nginx:1.26")
		Eventually(func() map[string]string { return imagesEverywhere(ns, name) }).Should(Equal(
			map[string]string{"member1": "nginx:1.25", "member2": "nginx:1.26", "member3": "nginx:1.26"}))
		Eventually(func(g Gomega) {
			g.Expect(hubClient.Get(ctx, key, w)).To(Succeed())
			g.Expect(w.Labels).To(HaveKeyWithValue(workv1alpha2.ResourceBindingPermanentIDLabel, owner))
			g.Expect(w.Spec.SuspendDispatching).To(HaveValue(BeTrue()))
			g.Expect(w.Annotations).To(HaveKeyWithValue(workkeys.HoldReasonAnnotation, "SuspendDispatching"))
			g.Expect(workImage("member1", ns, name)).To(Equal("nginx:1.26"))
		}).Should(Succeed(), "member1's Work is the binding's again, with the new image, held")

		By("resuming member1 brings it the change, which it never stored before")
		Expect(storedBefore(recorders["member1"], mark(recorders["member1"]), framework.Image)).NotTo(ContainElement("nginx:1.26"),
			"member1 stored the change while its cluster was suspended")
		Expect(framework.MergePatch(ctx, hubClient, policy, `{"spec": {"suspension": null}}`)).To(Succeed())
		Eventually(func() map[string]string { return imagesEverywhere(ns, name) }).Should(Equal(everywhere("nginx:1.26")))
		for m, r := range recorders {
			Expect(stored(r, framework.Image)).NotTo(ContainElement(HavePrefix("DELETED")), "%s kept its object", m)
		}
	})
})
