package e2e

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"

	rolloutsv1alpha1 "github.com/federator-dev/federator/apis/rollouts/v1alpha1"
	"github.com/federator-dev/federator/test/framework"
)

// A ClusterRollout over a ClusterPropagationPolicy, on the suite's bare
// members (a ConfigMap is healthy once applied): a stage that pauses holds
// its clusters, and the implicit last stage, until `federator rollout
// promote`; the revisions are kept in federator-system.
var _ = Describe("ClusterRollout", func() {
	It("holds a stage that pauses until promoted from the CLI, then the remaining clusters follow", func() {
		const ns, name = "cluster-rollout", "conf"
		namespace(ns)
		level := framework.JSONPath("{.data.level}")
		conf := func(value string) {
			mustApply(`{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"namespace": %q, "name": %q}, "data": {"level": %q}}`, ns, name, value)
		}
		conf("1")
		mustApply(`
apiVersion: policy.karmada.io/v1alpha1
kind: ClusterPropagationPolicy
metadata: {name: %[1]s}
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, namespace: %[2]s, name: %[1]s}]
  placement: {clusterAffinity: {clusterNames: [member1, member2, member3]}}`, name, ns)
		mustApply(`
apiVersion: rollouts.federator.dev/v1alpha1
kind: ClusterRollout
metadata: {name: %[1]s}
spec:
  policyRef: {name: %[1]s}
  stages:
  - {name: canary, clusters: [member1]}
  - {name: second, clusters: [member2], pause: true}`, name)
		DeferCleanup(func() {
			for _, o := range []client.Object{&rolloutsv1alpha1.ClusterRollout{ObjectMeta: metav1.ObjectMeta{Name: name}},
				&policyv1alpha1.ClusterPropagationPolicy{ObjectMeta: metav1.ObjectMeta{Name: name}}} {
				Expect(client.IgnoreNotFound(hubClient.Delete(ctx, o))).To(Succeed())
			}
		})
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		Eventually(func() map[string]string { return env.MemberValues(ctx, cm, level) }).Should(Equal(everywhere("1")))
		rollout := func() *rolloutsv1alpha1.ClusterRollout {
			GinkgoHelper()
			ro := &rolloutsv1alpha1.ClusterRollout{}
			Expect(hubClient.Get(ctx, client.ObjectKey{Name: name}, ro)).To(Succeed())
			return ro
		}
		Eventually(func() int64 { return rollout().Status.Revision }).Should(Equal(int64(1)))
		recorders := recordEverywhere(cm)

		By("a new level reaches the canary; the second stage waits for promotion, and the remaining stage after it")
		conf("2")
		Eventually(func() map[string]string { return env.MemberValues(ctx, cm, level) }).Should(Equal(
			map[string]string{"member1": "2", "member2": "1", "member3": "1"}))
		Eventually(func(g Gomega) {
			ro := rollout()
			g.Expect(ro.Status.Revision).To(Equal(int64(2)))
			g.Expect(ro.Status.CurrentStage).To(Equal("second"))
			states := map[string]string{}
			for _, c := range ro.Status.Clusters {
				states[c.Name] = c.Stage + "/" + c.State
			}
			g.Expect(states).To(Equal(map[string]string{"member1": "canary/Healthy", "member2": "second/Pending",
				"member3": rolloutsv1alpha1.RemainingStage + "/Pending"}))
		}).Should(Succeed())
		status := federatorCLI("rollout", "status", "clusterrollout/"+name, "--watch=false")
		Expect(status.code).To(Equal(0), status.stderr)
		Expect(status.stdout).To(ContainSubstring("Paused (WaitingForPromotion): stage 'second' pauses until promoted"))
		for _, m := range []string{"member2", "member3"} {
			Expect(stored(recorders[m], level)).NotTo(ContainElement("2"), "%s got level 2 before its stage was promoted", m)
		}

		By("promoting the stage from the CLI; every member gets the new level")
		promote := federatorCLI("rollout", "promote", "clusterrollout/"+name)
		Expect(promote.code).To(Equal(0), promote.stderr)
		Eventually(func() map[string]string { return env.MemberValues(ctx, cm, level) }).Should(Equal(everywhere("2")))
		done := federatorCLI("rollout", "status", "clusterrollout/"+name, "--timeout", "30s")
		Expect(done.code).To(Equal(0), done.stdout+done.stderr)

		By("keeping the revisions in federator-system")
		var revs appsv1.ControllerRevisionList
		Expect(hubClient.List(ctx, &revs, client.InNamespace(rolloutsv1alpha1.HistoryNamespace),
			client.MatchingLabels{rolloutsv1alpha1.RolloutUIDLabel: string(rollout().UID)})).To(Succeed())
		Expect(revs.Items).To(HaveLen(2))
	})
})
