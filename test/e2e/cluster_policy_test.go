package e2e

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

var _ = Describe("ClusterPropagationPolicy", func() {
	// clusterRoleVerbs is each member's verbs of a ClusterRole, "absent" when missing.
	clusterRoleVerbs := func(name string) map[string]string {
		out := map[string]string{}
		for m, c := range members {
			cr := &rbacv1.ClusterRole{}
			switch err := c.Get(ctx, client.ObjectKey{Name: name}, cr); {
			case apierrors.IsNotFound(err):
				out[m] = "absent"
			case err != nil:
				out[m] = err.Error()
			case len(cr.Rules) > 0:
				out[m] = cr.Rules[0].Verbs[0]
			}
		}
		return out
	}
	configMapData := func(ns, name string) map[string]string {
		out := map[string]string{}
		for m, c := range members {
			cm := &corev1.ConfigMap{}
			switch err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, cm); {
			case apierrors.IsNotFound(err):
				out[m] = "absent"
			case err != nil:
				out[m] = err.Error()
			default:
				out[m] = cm.Data["level"]
			}
		}
		return out
	}

	It("suspends a cluster-scoped resource per cluster, and deletes it while suspended", func() {
		const name = "federator-e2e-reader"
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
		clusterRole("get")
		rolePolicy("")
		Eventually(func() map[string]string { return clusterRoleVerbs(name) }).Should(Equal(everywhere("get")))

		By("suspending member2 and changing the ClusterRole")
		rolePolicy("  suspension: {dispatchingOnClusters: {clusterNames: [member2]}}\n")
		Eventually(func() *metav1.Condition { return dispatching("member2", "ClusterRole", "", name) }).Should(And(
			Not(BeNil()), HaveField("Reason", "SuspendDispatching")))
		clusterRole("list")
		Eventually(func() map[string]string { return clusterRoleVerbs(name) }).Should(Equal(
			map[string]string{"member1": "list", "member2": "get", "member3": "list"}))
		Consistently(func() string { return clusterRoleVerbs(name)["member2"] }, "3s").Should(Equal("get"))

		By("deleting it on the hub while member2 is suspended")
		Expect(hubClient.Delete(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}})).To(Succeed())
		Eventually(func() map[string]string { return clusterRoleVerbs(name) }).Should(Equal(everywhere("absent")))
	})

	It("suspends a namespaced resource in every cluster and releases it on resume", func() {
		const ns, name = "cpp-namespaced", "settings"
		namespace(ns)
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
		mustApply(policy, name, ns, "")
		Eventually(func() map[string]string { return configMapData(ns, name) }).Should(Equal(everywhere("info")))

		mustApply(policy, name, ns, "  suspension: {dispatching: true}\n")
		for m := range members {
			Eventually(func() *metav1.Condition { return dispatching(m, "ConfigMap", ns, name) }).Should(And(
				Not(BeNil()), HaveField("Reason", "SuspendDispatching")), m)
		}
		configMap("debug")
		Consistently(func() map[string]string { return configMapData(ns, name) }, "3s").Should(Equal(everywhere("info")))

		mustApply(policy, name, ns, "")
		Eventually(func() map[string]string { return configMapData(ns, name) }, "20s").Should(Equal(everywhere("debug")))
	})
})
