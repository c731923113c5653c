package e2e

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/federator-dev/federator/test/framework"
)

var _ = Describe("deleting a hub namespace", func() {
	It("removes it, and what it held, from every member", func() {
		// A namespace is gone only once a namespace controller has emptied
		// it. The suite's fleet runs none (its member-watch spec counts the
		// watches on members, and a garbage collector would add its own),
		// so this spec has a fleet of its own running kube-controller-manager
		// in every cluster, as `federator up` does.
		f, hub := separateFleet(2, true)
		runController(f)
		inMembers := joinMembers(f, hub)
		const ns, name = "shop", "web"
		shop := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
		// present is, per member, whether it holds obj (or an error).
		present := func(obj client.Object) map[string]string {
			out := map[string]string{}
			for m, c := range inMembers {
				switch err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj.DeepCopyObject().(client.Object)); {
				case err == nil:
					out[m] = "present"
				case apierrors.IsNotFound(err):
					out[m] = "gone"
				default:
					out[m] = err.Error()
				}
			}
			return out
		}
		inEveryMember := func(v string) map[string]string { return map[string]string{"member1": v, "member2": v} }

		Expect(hub.Create(ctx, shop.DeepCopy())).To(Succeed())
		Expect(framework.Apply(ctx, hub, framework.NewDeployment(ns, name, "nginx:1.25"), fieldOwner)).To(Succeed())
		Expect(framework.Apply(ctx, hub, framework.NewDeploymentPolicy(ns, name, name, "member1", "member2"), fieldOwner)).To(Succeed())
		Eventually(func() map[string]string { return present(deploymentRef(ns, name)) }, "60s").Should(Equal(inEveryMember("present")))

		By("deleting the namespace on the hub")
		Expect(hub.Delete(ctx, shop.DeepCopy())).To(Succeed())
		Eventually(func() map[string]string { return present(shop) }).Should(Equal(inEveryMember("gone")))
		Expect(present(deploymentRef(ns, name))).To(Equal(inEveryMember("gone")))
		Eventually(func() bool {
			return apierrors.IsNotFound(hub.Get(ctx, client.ObjectKeyFromObject(shop), &corev1.Namespace{}))
		}).Should(
			BeTrue(), "the hub's namespace controller finishes too")
	})
})
