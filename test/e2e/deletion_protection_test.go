package e2e

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/federator-dev/federator/test/framework"
)

var _ = Describe("deletion protection (resourcetemplate.karmada.io/deletion-protected)", func() {
	const ns, name = "deletion-protection", "web"

	It("refuses deleting a protected template with Karmada's message, and allows it once the label is removed", func() {
		propagatedEverywhere(ns, name)
		label := func(value string) {
			GinkgoHelper()
			patch := `{"metadata": {"labels": {"resourcetemplate.karmada.io/deletion-protected": ` + value + `}}}`
			Expect(hubClient.Patch(ctx, deploymentRef(ns, name), client.RawPatch(types.MergePatchType, []byte(patch)))).To(Succeed())
		}
		label(`"Always"`)
		onMember1 := recordMember("member1", deploymentRef(ns, name))

		err := hubClient.Delete(ctx, deploymentRef(ns, name))
		Expect(err).To(HaveOccurred())
		Expect(apierrors.IsForbidden(err) || apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(ContainSubstring("This resource is protected, please make sure to remove the label: resourcetemplate.karmada.io/deletion-protected"))
		Expect(hubClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &appsv1.Deployment{})).To(Succeed())

		By("removing the label: the delete goes through, and the members lose it")
		label("null")
		Expect(hubClient.Delete(ctx, deploymentRef(ns, name))).To(Succeed())
		Eventually(func() string { return memberImage("member1", ns, name) }).Should(BeEmpty())
		Expect(stored(onMember1, framework.Image)).To(ContainElement("nginx:1.25"))
	})
})
