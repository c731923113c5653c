package e2e

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"

	"github.com/federator-dev/federator/test/framework"
)

var _ = Describe("the suspended.propagation.federator.dev/<cluster> annotation", func() {
	const ns = "suspend-cluster-annotation"

	annotateCluster := func(obj client.Object, cluster string, value *string) {
		GinkgoHelper()
		v := "null"
		if value != nil {
			v = `"` + *value + `"`
		}
		patch := `{"metadata": {"annotations": {"suspended.propagation.federator.dev/` + cluster + `": ` + v + `}}}`
		Expect(hubClient.Patch(ctx, obj, client.RawPatch(types.MergePatchType, []byte(patch)))).To(Succeed())
	}
	reason := "canary looks bad"

	It("holds one cluster of one template, or of a whole policy, without rolling a generation", func() {
		namespace(ns)
		for _, name := range []string{"web", "api"} {
			deployment(ns, name, "nginx:1.25")
			propagationPolicy(ns, name, nil)
			Eventually(func() map[string]string { return imagesEverywhere(ns, name) }).Should(Equal(everywhere("nginx:1.25")), name)
		}
		webOnMember3 := recordMember("member3", deploymentRef(ns, "web"))
		apiOnMember2 := recordMember("member2", deploymentRef(ns, "api"))
		web := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}}
		apiPolicy := &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "api"}}
		Expect(hubClient.Get(ctx, client.ObjectKeyFromObject(apiPolicy), apiPolicy)).To(Succeed())
		policyGeneration := apiPolicy.Generation

		By("annotating the web template for member3 and the api policy for member2")
		annotateCluster(web, "member3", &reason)
		annotateCluster(apiPolicy, "member2", ptrTo("true"))
		Eventually(func() *metav1.Condition { return dispatching("member3", "Deployment", ns, "web") }).Should(
			HaveField("Reason", "SuspendDispatching"))
		Eventually(func() *metav1.Condition { return dispatching("member2", "Deployment", ns, "api") }).Should(
			HaveField("Reason", "SuspendDispatching"))
		Expect(holdMessageOf("member3", ns, "web")).To(Equal(
			`suspended by annotation suspended.propagation.federator.dev/member3 on Deployment suspend-cluster-annotation/web ("canary looks bad"); remove the annotation to resume`))
		for _, m := range []string{"member1", "member2"} {
			Expect(dispatching(m, "Deployment", ns, "web")).To(HaveField("Reason", "Dispatching"), m)
		}
		Expect(dispatching("member3", "Deployment", ns, "api")).To(HaveField("Reason", "Dispatching"))
		Expect(hubClient.Get(ctx, client.ObjectKeyFromObject(apiPolicy), apiPolicy)).To(Succeed())
		Expect(apiPolicy.Generation).To(Equal(policyGeneration), "an annotation rolls no generation")

		By("rolling nginx:1.27: everyone but the held clusters gets it")
		setImage(ns, "web", "nginx:1.27")
		setImage(ns, "api", "nginx:1.27")
		Eventually(func() map[string]string { return imagesEverywhere(ns, "web") }).Should(Equal(
			map[string]string{"member1": "nginx:1.27", "member2": "nginx:1.27", "member3": "nginx:1.25"}))
		Eventually(func() map[string]string { return imagesEverywhere(ns, "api") }).Should(Equal(
			map[string]string{"member1": "nginx:1.27", "member2": "nginx:1.25", "member3": "nginx:1.27"}))
		dispatcherHolds(ns, "web", "nginx:1.27", "member3")
		dispatcherHolds(ns, "api", "nginx:1.27", "member2")

		By("removing the annotations releases them")
		Expect(stored(webOnMember3, framework.Image)).NotTo(ContainElement("nginx:1.27"), "member3 must not get web's new image while held")
		Expect(stored(apiOnMember2, framework.Image)).NotTo(ContainElement("nginx:1.27"), "member2 must not get api's new image while held")
		annotateCluster(web, "member3", nil)
		annotateCluster(apiPolicy, "member2", nil)
		Eventually(func() map[string]string { return imagesEverywhere(ns, "web") }).Should(Equal(everywhere("nginx:1.27")))
		Eventually(func() map[string]string { return imagesEverywhere(ns, "api") }).Should(Equal(everywhere("nginx:1.27")))
		Expect(holdMessageOf("member3", ns, "web")).To(BeEmpty())
	})
})

func ptrTo(s string) *string { return &s }

// holdMessageOf is what the Work of Deployment ns/name for member says
// holds it (its hold-message annotation), "" when nothing does.
func holdMessageOf(member, ns, name string) string {
	works := &workv1alpha1.WorkList{}
	if err := hubClient.List(ctx, works, client.InNamespace("karmada-es-"+member)); err != nil {
		return err.Error()
	}
	for _, w := range works.Items {
		if w.Annotations["resourcebinding.karmada.io/namespace"] == ns && w.Annotations["resourcebinding.karmada.io/name"] == name+"-deployment" {
			return w.Annotations["work.federator.dev/hold-message"]
		}
	}
	return ""
}
