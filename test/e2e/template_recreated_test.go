package e2e

import (
	"encoding/json"
	"strconv"

	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	"github.com/karmada-io/karmada/pkg/util/names"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/federator-dev/federator/test/framework"
)

// A template deleted and created again while its binding is still being
// deleted (found by the chaos checker, seed 31: the hub's API server had
// just come back and the binding controller's cache was behind, so the
// binding's finalizer stayed a few seconds). The detector wrote the new
// template into the binding that was going away; once it was gone nothing
// created it again, and the members deleted their copies when the delay
// ended although the template was there.
var _ = Describe("a template created again while its binding is being deleted", func() {
	It("gets a binding of its own once the old one is gone, and the members keep their objects", func() {
		const ns, name, lingering = "recreate-terminating", "web", "e2e.federator.dev/linger"
		namespace(ns)
		delayedDeployment(ns, name, "nginx:1.25", "")
		pp := framework.NewDeploymentPolicy(ns, name, name, env.MemberNames()...)
		pp.Annotations = map[string]string{delayKey: "20s"}
		Expect(framework.Apply(ctx, hubClient, pp, fieldOwner)).To(Succeed())
		Eventually(func() map[string]string { return imagesEverywhere(ns, name) }).Should(Equal(everywhere("nginx:1.25")))
		recorders := recordEverywhere(deploymentRef(ns, name))

		By("keeping the binding in its deletion with a finalizer of the spec's own")
		bindingKey := client.ObjectKey{Namespace: ns, Name: names.GenerateBindingName("Deployment", name)}
		linger := func(finalizers ...string) {
			patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"finalizers": finalizers}})
			Expect(err).NotTo(HaveOccurred())
			rb := &workv1alpha2.ResourceBinding{}
			Expect(hubClient.Get(ctx, bindingKey, rb)).To(Succeed())
			Expect(hubClient.Patch(ctx, rb, client.RawPatch(types.MergePatchType, patch))).To(Succeed())
		}
		rb := &workv1alpha2.ResourceBinding{}
		Expect(hubClient.Get(ctx, bindingKey, rb)).To(Succeed())
		linger(append(rb.Finalizers, lingering)...)
		old := rb.UID

		Expect(hubClient.Delete(ctx, deploymentRef(ns, name))).To(Succeed())
		Eventually(func() []string {
			Expect(hubClient.Get(ctx, bindingKey, rb)).To(Succeed())
			return rb.Finalizers
		}).Should(Equal([]string{lingering}), "the binding controller has let its Works go")
		delayedDeployment(ns, name, "nginx:1.26", "")
		template := &appsv1.Deployment{}
		Expect(hubClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, template)).To(Succeed())
		By("letting the old binding go")
		linger()

		Eventually(func() []string {
			fresh := &workv1alpha2.ResourceBinding{}
			if err := hubClient.Get(ctx, bindingKey, fresh); err != nil {
				return []string{err.Error()}
			}
			return []string{strconv.FormatBool(fresh.UID != old), string(fresh.Spec.Resource.UID)}
		}).Should(Equal([]string{"true", string(template.UID)}), "a binding of its own, for the template as it is now")
		Eventually(func() map[string]string { return imagesEverywhere(ns, name) }).Should(Equal(everywhere("nginx:1.26")))
		for m, r := range recorders {
			Expect(stored(r, framework.Image)).NotTo(ContainElement(HavePrefix("DELETED")),
				"%s kept its object: the countdown was taken back", m)
		}
	})
})
