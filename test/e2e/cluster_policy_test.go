package e2e

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"

	"github.com/federator-dev/federator/test/framework"
)

var _ = Describe("ClusterPropagationPolicy", func() {
	verb := framework.JSONPath("{.rules[0].verbs[0]}")
	level := framework.JSONPath("{.data.level}")
	// deleteAfterSpec removes a cluster-scoped policy the spec applied, so
	// it selects nothing in later specs.
	deleteAfterSpec := func(name string) {
		DeferCleanup(func() {
			Expect(client.IgnoreNotFound(hubClient.Delete(ctx, &policyv1alpha1.ClusterPropagationPolicy{
				ObjectMeta: metav1.ObjectMeta{Name: name}}))).To(Succeed())
		})
	}

	It("suspends a cluster-scoped resource per cluster, and deletes it while suspended", func() {
		const name = "federator-e2e-reader"
		role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}}
		clusterRole := func(verb string) {
			mustApply(`{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": %q},
"rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": [%q]}]}`, name, verb)
		}
		// rolePolicy applies a ClusterPropagationPolicy for the ClusterRole,
		// with extraSpec (indented YAML) added to its spec.
		rolePolicy := func(extraSpec string) {
			mustApply(`
apiVersion: policy.karmada.io/v1alpha1
kind: ClusterPropagationPolicy
metadata: {name: %[1]s}
spec:
  resourceSelectors: [{apiVersion: rbac.authorization.k8s.io/v1, kind: ClusterRole, name: %[1]s}]
%[2]s`, name, extraSpec)
		}
		deleteAfterSpec(name)
		clusterRole("get")
		rolePolicy("")
		Eventually(func() map[string]string { return env.MemberValues(ctx, role, verb) }).Should(Equal(everywhere("get")))
		member2 := recordMember("member2", role)

		By("suspending member2 and changing the ClusterRole")
		rolePolicy("  suspension: {dispatchingOnClusters: {clusterNames: [member2]}}\n")
		Eventually(func() *metav1.Condition { return dispatching("member2", "ClusterRole", "", name) }).Should(And(
			Not(BeNil()), HaveField("Reason", "SuspendDispatching")))
		clusterRole("list")
		Eventually(func() map[string]string { return env.MemberValues(ctx, role, verb) }).Should(Equal(
			map[string]string{"member1": "list", "member2": "get", "member3": "list"}))
		// Time for member2's dispatcher to act on its changed Work.
		Consistently(func() []string { return member2.Values(verb) }, "3s").ShouldNot(ContainElement("list"))

		By("deleting it on the hub while member2 is suspended")
		Expect(hubClient.Delete(ctx, role.DeepCopy())).To(Succeed())
		Eventually(func() map[string]string { return env.MemberValues(ctx, role, verb) }).Should(Equal(everywhere(framework.Absent)))
		Expect(stored(member2, verb)).NotTo(ContainElement("list"), "member2 stored the change it was suspended for")
	})

	It("suspends a namespaced resource in every cluster and releases it on resume", func() {
		const ns, name = "cpp-namespaced", "settings"
		namespace(ns)
		settings := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		configMap := func(level string) {
			mustApply(`{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": %q, "namespace": %q}, "data": {"level": %q}}`,
				name, ns, level)
		}
		configMap("info")
		policy := `
apiVersion: policy.karmada.io/v1alpha1
kind: ClusterPropagationPolicy
metadata: {name: %[1]s}
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, namespace: %[2]s, name: %[1]s}]
%[3]s`
		deleteAfterSpec(name)
		mustApply(policy, name, ns, "")
		Eventually(func() map[string]string { return env.MemberValues(ctx, settings, level) }).Should(Equal(everywhere("info")))
		recorders := recordEverywhere(settings)

		mustApply(policy, name, ns, "  suspension: {dispatching: true}\n")
		for m := range members {
			Eventually(func() *metav1.Condition { return dispatching(m, "ConfigMap", ns, name) }).Should(And(
				Not(BeNil()), HaveField("Reason", "SuspendDispatching")), m)
		}
		configMap("debug")
		for m := range members {
			Eventually(func() string { return env.WorkValue(ctx, m, "ConfigMap", ns, name, level) }).Should(Equal("debug"), m)
			// The dispatcher saw the changed Work and held it.
			Eventually(func() bool { return env.HeldByDispatcher(ctx, m, "ConfigMap", ns, name) }).Should(BeTrue(), m)
		}
		held := markEverywhere(recorders)

		mustApply(policy, name, ns, "")
		Eventually(func() map[string]string { return env.MemberValues(ctx, settings, level) }, "20s").Should(Equal(everywhere("debug")))
		for m, r := range recorders {
			Expect(storedBefore(r, held[m], level)).NotTo(ContainElement("debug"), "%s stored the change while suspended", m)
		}
	})
})
