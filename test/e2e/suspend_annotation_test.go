package e2e

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
)

var _ = Describe("the propagation.federator.dev/suspended annotation", func() {
	const ns = "suspend-annotation"

	annotate := func(obj client.Object, value *string) {
		GinkgoHelper()
		patch := `{"metadata": {"annotations": {"propagation.federator.dev/suspended": null}}}`
		if value != nil {
			patch = `{"metadata": {"annotations": {"propagation.federator.dev/suspended": "` + *value + `"}}}`
		}
		Expect(hubClient.Patch(ctx, obj, client.RawPatch(types.MergePatchType, []byte(patch)))).To(Succeed())
	}
	reason := "incident 4711"

	It("suspends every cluster for a policy or for a single template, and resumes when removed", func() {
		namespace(ns)
		for _, name := range []string{"web", "api"} {
			deployment(ns, name, "nginx:1.25")
			propagationPolicy(ns, name, nil)
		}
		for _, name := range []string{"web", "api"} {
			Eventually(func() map[string]string { return imagesEverywhere(ns, name) }).Should(Equal(everywhere("nginx:1.25")), name)
		}

		By("annotating one template: only its Works are held")
		annotate(&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}}, &reason)
		for m := range members {
			Eventually(func() *metav1.Condition { return dispatching(m, "Deployment", ns, "web") }).Should(
				HaveField("Reason", "SuspendDispatching"), m)
			Expect(dispatching(m, "Deployment", ns, "api")).To(HaveField("Reason", "Dispatching"), m)
		}
		Eventually(func() []string { return templateEvents(ns, "Deployment", "web") }).Should(ContainElement(
			"DispatchingSuspended: dispatching suspended to every cluster (policy suspend-annotation/web): incident 4711"))
		setImage(ns, "web", "nginx:1.27")
		setImage(ns, "api", "nginx:1.27")
		Eventually(func() map[string]string { return imagesEverywhere(ns, "api") }).Should(Equal(everywhere("nginx:1.27")))
		Eventually(func() string { return workImage("member1", ns, "web") }).Should(Equal("nginx:1.27"))
		Expect(imagesEverywhere(ns, "web")).To(Equal(everywhere("nginx:1.25")))

		By("annotating the api policy: api is held too")
		annotate(&policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "api"}}, &reason)
		for m := range members {
			Eventually(func() *metav1.Condition { return dispatching(m, "Deployment", ns, "api") }).Should(
				HaveField("Reason", "SuspendDispatching"), m)
		}

		By("removing the annotations resumes both")
		annotate(&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}}, nil)
		annotate(&policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "api"}}, nil)
		Eventually(func() map[string]string { return imagesEverywhere(ns, "web") }, "20s").Should(Equal(everywhere("nginx:1.27")))
		Eventually(func() []string { return templateEvents(ns, "Deployment", "web") }).Should(ContainElement(
			"DispatchingResumed: dispatching resumed to every cluster (policy suspend-annotation/web)"))
		for m := range members {
			Eventually(func() *metav1.Condition { return dispatching(m, "Deployment", ns, "api") }).Should(
				HaveField("Reason", "Dispatching"), m)
		}
	})
})
