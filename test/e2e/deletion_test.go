package e2e

import (
	"fmt"

	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	"github.com/karmada-io/karmada/pkg/util/names"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/federator-dev/federator/test/framework"
)

var _ = Describe("deleting a template while suspended", func() {
	const ns, name = "deletion", "web"

	It("removes it from every member: deletion is never held", Label("smoke"), func() {
		namespace(ns)
		deployment(ns, name, "nginx:1.25")
		propagationPolicy(ns, name, framework.SuspendClusters("member2"))
		Eventually(func() string { return memberImage("member1", ns, name) }).Should(Equal("nginx:1.25"))
		Eventually(func() string { return memberImage("member3", ns, name) }).Should(Equal("nginx:1.25"))

		By("suspending every cluster, then deleting the template on the hub")
		patchPolicy(ns, name, `{"spec": {"suspension": {"dispatching": true, "dispatchingOnClusters": null}}}`)
		for m := range members {
			Eventually(func() *metav1.Condition { return dispatching(m, "Deployment", ns, name) }).Should(And(
				Not(BeNil()), HaveField("Reason", "SuspendDispatching")), m)
		}
		Expect(hubClient.Delete(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})).To(Succeed())

		Eventually(func() map[string]string { return imagesEverywhere(ns, name) }).Should(Equal(everywhere("")))
		Eventually(func() bool {
			err := hubClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: names.GenerateBindingName("Deployment", name)},
				&workv1alpha2.ResourceBinding{})
			return apierrors.IsNotFound(err)
		}).Should(BeTrue(), "the binding goes with its template")
		for m := range members {
			Eventually(func() *metav1.Condition { return dispatching(m, "Deployment", ns, name) }).Should(BeNil(), "Work for %s", m)
		}
	})

	It("removes a Work's object from its member when the Work is deleted while suspended", func() {
		const ns, name = "work-deletion", "web"
		propagatedEverywhere(ns, name)
		patchPolicy(ns, name, `{"spec": {"suspension": {"dispatching": true}}}`)
		Eventually(func() *metav1.Condition { return dispatching("member1", "Deployment", ns, name) }).Should(
			HaveField("Reason", "SuspendDispatching"))

		member1 := recordMember("member1", deploymentRef(ns, name))
		work := &workv1alpha1.Work{}
		Expect(hubClient.Get(ctx, framework.WorkKey("member1", "Deployment", ns, name), work)).To(Succeed())
		deletedUID := work.UID
		Expect(hubClient.Delete(ctx, work)).To(Succeed())
		Eventually(func() string { return memberImage("member1", ns, name) }).Should(BeEmpty())

		By("the binding writes the Work again, still suspended: member1 stays empty until resumed")
		// The new Work's Dispatching condition is written by the reconcile
		// that decided to hold it: whatever it wrote is in member1 by then.
		Eventually(func() error {
			w, err := env.Work(ctx, "member1", "Deployment", ns, name)
			if err != nil {
				return err
			}
			if w.UID == deletedUID || framework.DispatchingReason(w) != "SuspendDispatching" {
				return fmt.Errorf("Work %s (uid %s) is not yet the new, held one: %v", w.Name, w.UID, w.Status.Conditions)
			}
			return nil
		}).Should(Succeed())
		emptied := []string{"EXISTING nginx:1.25", "DELETED nginx:1.25"}
		Consistently(func() []string { return member1.History(0, member1.End(), framework.Image) }, "2s").Should(Equal(emptied))
		Expect(member1.History(0, mark(member1), framework.Image)).To(Equal(emptied), "member1 was written while held")
		Expect(imagesEverywhere(ns, name)).To(HaveKeyWithValue("member2", "nginx:1.25"))
		patchPolicy(ns, name, `{"spec": {"suspension": null}}`)
		Eventually(func() string { return memberImage("member1", ns, name) }).Should(Equal("nginx:1.25"))
	})
})
