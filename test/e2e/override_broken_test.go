package e2e

import (
	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/federator-dev/federator/test/framework"
)

// Bad input in an override policy: the cluster it cannot be applied to
// keeps its last good version, nothing is deleted, and the binding and
// that cluster's Work say which policy and rule, and why.
var _ = Describe("a broken override", func() {
	It("keeps the member's last good version and says why on the binding and the Work", func() {
		const ns, name = "override-broken", "web"
		const why = "OverridePolicy override-broken/canary spec.overrideRules[1] cannot be applied: "
		propagatedEverywhere(ns, name)
		member1 := recordMember("member1", deploymentRef(ns, name))
		mustApply(`
apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata: {name: canary, namespace: %s}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  overrideRules:
  - targetCluster: {clusterNames: [member1]}
    overriders:
      imageOverrider: [{component: Tag, operator: replace, value: 1.27-canary}]
`, ns)
		Eventually(func() string { return memberImage("member1", ns, name) }).Should(Equal("nginx:1.27-canary"))
		lastGood := mark(member1)

		By("a new canary tag together with a rule whose JSON patch names a missing path, and a new template image")
		patchOverridePolicy(ns, "canary", `[
  {"op": "replace", "path": "/spec/overrideRules/0/overriders/imageOverrider/0/value", "value": "1.28-canary"},
  {"op": "add", "path": "/spec/overrideRules/-", "value": {"targetCluster": {"clusterNames": ["member1"]},
    "overriders": {"plaintext": [{"path": "/spec/nothing/here", "operator": "remove"}]}}}]`)
		setImage(ns, name, "nginx:1.26")
		Eventually(func() map[string]string { return imagesEverywhere(ns, name) }).Should(Equal(
			map[string]string{"member1": "nginx:1.27-canary", "member2": "nginx:1.26", "member3": "nginx:1.26"}),
			"the clusters the broken rule does not target follow the template")
		Eventually(func() string {
			w, err := env.Work(ctx, "member1", "Deployment", ns, name)
			if err != nil {
				return err.Error()
			}
			return w.Annotations["work.federator.dev/override-failed"]
		}).Should(And(HavePrefix(why), ContainSubstring(`"/spec/nothing/here"`)))
		Eventually(func() *metav1.Condition { return bindingCondition(ns, name+"-deployment", "WorksSynced") }).Should(And(
			Not(BeNil()), HaveField("Status", metav1.ConditionFalse), HaveField("Reason", "SyncWorkFailed"),
			HaveField("Message", And(HavePrefix("cluster member1: "+why),
				HaveSuffix("(its Work keeps the last manifest that could be built)")))))
		Expect(workImage("member1", ns, name)).To(Equal("nginx:1.27-canary"), "the Work keeps its last good manifest")
		// Writes that keep the version (status, where members run their own
		// controllers) may come; none with another image, and no deletion.
		Expect(member1.History(lastGood, mark(member1), framework.Image)).NotTo(ContainElement(Not(Equal("MODIFIED nginx:1.27-canary"))),
			"member1 stored no other version and deleted nothing")

		By("fixing the policy brings member1 the new tag and clears the reports")
		patchOverridePolicy(ns, "canary", `[{"op": "remove", "path": "/spec/overrideRules/1"}]`)
		Eventually(func() string { return memberImage("member1", ns, name) }).Should(Equal("nginx:1.28-canary"))
		Eventually(func() *metav1.Condition { return bindingCondition(ns, name+"-deployment", "WorksSynced") }).Should(
			HaveField("Status", metav1.ConditionTrue))
		w, err := env.Work(ctx, "member1", "Deployment", ns, name)
		Expect(err).NotTo(HaveOccurred())
		Expect(w.Annotations).NotTo(HaveKey("work.federator.dev/override-failed"))
	})
})

// bindingCondition is a condition of the ResourceBinding ns/name, nil
// when it or the binding is missing.
func bindingCondition(ns, name, conditionType string) *metav1.Condition {
	rb := &workv1alpha2.ResourceBinding{}
	if err := hubClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, rb); err != nil {
		return nil
	}
	return meta.FindStatusCondition(rb.Status.Conditions, conditionType)
}

// patchOverridePolicy JSON-patches an OverridePolicy, as `kubectl patch
// --type json` does.
func patchOverridePolicy(ns, name, jsonPatch string) {
	GinkgoHelper()
	Expect(hubClient.Patch(ctx, &policyv1alpha1.OverridePolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}},
		client.RawPatch("application/json-patch+json", []byte(jsonPatch)))).To(Succeed())
}
