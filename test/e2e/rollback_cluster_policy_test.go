package e2e

import (
	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/federator-dev/federator/test/framework"
)

// The same promise as rollback_test.go, held by a ClusterPropagationPolicy:
// its suspension travels through a ClusterResourceBinding for a
// cluster-scoped template, and through a ResourceBinding for a namespaced
// one.
var _ = Describe("rollback on the hub while a cluster is suspended by a ClusterPropagationPolicy", func() {
	// clusterPolicy applies a ClusterPropagationPolicy placing the template
	// selector selects on every member, and deletes it after the spec.
	clusterPolicy := func(name string, selector policyv1alpha1.ResourceSelector) *policyv1alpha1.ClusterPropagationPolicy {
		GinkgoHelper()
		cpp := &policyv1alpha1.ClusterPropagationPolicy{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: policyv1alpha1.PropagationSpec{
				ResourceSelectors: []policyv1alpha1.ResourceSelector{selector},
				Placement: policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{
					ClusterNames: env.MemberNames()}},
			},
		}
		Expect(framework.Apply(ctx, hubClient, cpp, fieldOwner)).To(Succeed())
		DeferCleanup(func() { Expect(client.IgnoreNotFound(hubClient.Delete(ctx, cpp))).To(Succeed()) })
		return cpp
	}

	It("never lets the suspended cluster see a bad ClusterRole, and does not rewrite it on resume", func() {
		const name = "federator-e2e-rollback"
		role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}}
		writeRole := func(verb string) {
			GinkgoHelper()
			r := role.DeepCopy()
			r.Rules = []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{verb}}}
			Expect(framework.Apply(ctx, hubClient, r, fieldOwner)).To(Succeed())
		}
		r := rollout{
			template: role,
			policy: clusterPolicy(name, policyv1alpha1.ResourceSelector{
				APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: name}),
			version: framework.JSONPath("{.rules[0].verbs[0]}"),
			write:   writeRole,
		}
		writeRole("get")
		// Cleanups run last first: the ClusterRole goes before its policy,
		// so its deletion reaches every member.
		DeferCleanup(func() { Expect(client.IgnoreNotFound(hubClient.Delete(ctx, role.DeepCopy()))).To(Succeed()) })
		Eventually(r.memberVersions).Should(Equal(everywhere("get")))
		rollbackWhileSuspended(r, "get", "delete")
	})

	It("never lets the suspended cluster see a bad Deployment, and does not rewrite it on resume", func() {
		const ns, name = "rollback-cluster-policy", "web"
		namespace(ns)
		deployment(ns, name, "nginx:1.25")
		r := rollout{
			template: deploymentRef(ns, name),
			policy: clusterPolicy(ns+"-"+name, policyv1alpha1.ResourceSelector{
				APIVersion: "apps/v1", Kind: "Deployment", Namespace: ns, Name: name}),
			version: framework.Image,
			write:   func(image string) { setImage(ns, name, image) },
		}
		Eventually(r.memberVersions).Should(Equal(everywhere("nginx:1.25")))
		rollbackWhileSuspended(r, "nginx:1.25", "nginx:bad")
	})
})
