package e2e

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/federator-dev/federator/test/framework"
)

// Karmada's conflictResolution: an object that exists in a member but was
// not written by the hub belongs to someone else. The default (Abort)
// leaves it alone and says why on the Work; Overwrite adopts it.
var _ = Describe("a member object the hub did not create", func() {
	const ns, name = "conflict", "settings"
	level := framework.JSONPath("{.data.level}")
	managed := framework.JSONPath(`{.metadata.labels.karmada\.io/managed}`)

	It("is left alone under the default conflictResolution, and adopted once the policy says Overwrite", func() {
		namespace(ns)
		settings := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}

		By("someone creating the ConfigMap directly in member1")
		theirs := settings.DeepCopy()
		theirs.Data = map[string]string{"level": "member1's own"}
		Expect(members["member1"].Create(ctx, theirs)).To(Succeed())
		inMember1 := recordMember("member1", settings)

		By("the hub placing a ConfigMap of that name on member1 and member2, conflictResolution left out")
		mustApply(`{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": %q, "namespace": %q}, "data": {"level": "from the hub"}}`,
			name, ns)
		mustApply(`
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: %[2]s, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, name: %[2]s}]
  placement: {clusterAffinity: {clusterNames: [member1, member2]}}
`, ns, name)
		Eventually(func() string { return env.MemberValue(ctx, "member2", settings, level) }).Should(Equal("from the hub"),
			"a member without an object of its own gets the hub's")
		Eventually(func() *metav1.Condition { return applied("member1", "ConfigMap", ns, name) }).Should(And(
			Not(BeNil()),
			HaveField("Status", metav1.ConditionFalse),
			HaveField("Reason", "AppliedFailed"),
			HaveField("Message", And(
				ContainSubstring("resource(kind=ConfigMap, conflict/settings) already exists in the cluster member1"),
				ContainSubstring("Karmada will not manage this resource")))))
		// That condition is written by the reconcile that refused to write:
		// anything it wrote would be in member1 by now.
		Expect(inMember1.History(0, mark(inMember1), level)).To(Equal([]string{"EXISTING member1's own"}),
			"member1's object is not written")

		By("the policy saying conflictResolution: Overwrite")
		patchPolicy(ns, name, `{"spec": {"conflictResolution": "Overwrite"}}`)
		Eventually(func() string { return env.MemberValue(ctx, "member1", settings, level) }).Should(Equal("from the hub"))
		Expect(env.MemberValue(ctx, "member1", settings, managed)).To(Equal("true"), "the adopted object is the hub's now")
		Eventually(func() error { return appliedCurrent("member1", "ConfigMap", ns, name) }).Should(Succeed())
	})
})
