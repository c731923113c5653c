package e2e

import (
	"fmt"
	"time"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1alpha1 "github.com/federator-dev/federator/apis/rollouts/v1alpha1"
	"github.com/federator-dev/federator/pkg/yamldocs"
	"github.com/federator-dev/federator/test/framework"
)

// Issue 28: the leader killed mid-rollout. A ConfigMap (healthy once
// applied, so the members need no workloads) rolls out through a canary
// stage and a stage that pauses until promoted; the leader dies while the
// second stage waits. The standby takes over, keeps the stage held, and
// completes it once promoted; member1 is written once with the change.
var _ = Describe("leader election during a rollout", func() {
	It("after SIGKILL of the leader while a stage waits for promotion, the standby keeps it held and completes it once promoted", func() {
		f, hubClient := separateFleet(2, false)
		// --v=1: every reconcile's decision (held and why, applied) is in
		// the spec's output when it fails.
		leader := processReplica(f, "process a", "--v=1")
		Eventually(leader.out, controllersStart).Should(ContainSubstring(controllersRunning))
		standby := processReplica(f, "process b", "--v=1")
		first := leaseHolder(hubClient)()
		Expect(first).NotTo(BeEmpty())
		inMembers := joinMembers(f, hubClient)
		// Both members schedulable before the template is placed: a member
		// placed after the first revision completed is a newly placed
		// cluster, staged (member2 would wait at its pause for level 1).
		for _, m := range f.Members {
			Eventually(func() bool {
				c := &clusterv1alpha1.Cluster{}
				return hubClient.Get(ctx, client.ObjectKey{Name: m.Name}, c) == nil &&
					meta.IsStatusConditionTrue(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
			}, "60s").Should(BeTrue(), m.Name+" Ready")
		}

		const ns, name = "leader-rollout", "conf"
		Expect(hubClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
		level := framework.JSONPath("{.data.level}")
		conf := func(value string) {
			GinkgoHelper()
			Expect(framework.Apply(ctx, hubClient, &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: map[string]string{"level": value}}, fieldOwner)).To(Succeed())
		}
		conf("1")
		for _, yaml := range []string{`
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {namespace: %[2]s, name: %[1]s}
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, name: %[1]s}]
  placement: {clusterAffinity: {clusterNames: [member1, member2]}}`, `
apiVersion: rollouts.federator.dev/v1alpha1
kind: Rollout
metadata: {namespace: %[2]s, name: %[1]s}
spec:
  policyRef: {name: %[1]s}
  stages:
  - {name: canary, clusters: [member1]}
  - {name: second, clusters: [member2], pause: true}`} {
			Expect(yamldocs.Apply(ctx, hubClient, []byte(fmt.Sprintf(yaml, name, ns)), client.FieldOwner(fieldOwner), client.ForceOwnership)).To(Succeed())
		}
		levelOn := func(member string) func() string {
			return func() string {
				cm := &corev1.ConfigMap{}
				if err := inMembers[member].Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, cm); err != nil {
					return ""
				}
				return cm.Data["level"]
			}
		}
		// On a failure, what the hub says of each cluster's copy.
		whyNot := func(m string) func() string {
			return func() string {
				return m + "\n" + cliOn(f.Hub.KubeconfigPath, "get", "works", "-n", ns, "-o", "wide").stdout +
					cliOn(f.Hub.KubeconfigPath, "get", "rollout", name, "-n", ns).stdout
			}
		}
		for _, m := range []string{"member1", "member2"} {
			Eventually(levelOn(m), "60s").Should(Equal("1"), whyNot(m))
		}
		rollout := func() *rolloutsv1alpha1.Rollout {
			ro := &rolloutsv1alpha1.Rollout{}
			Expect(hubClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, ro)).To(Succeed())
			return ro
		}
		Eventually(func() int64 { return rollout().Status.Revision }, "60s").Should(Equal(int64(1)))
		recorders := map[string]*framework.Recorder{}
		for _, m := range f.Members {
			dyn, err := dynamic.NewForConfig(m.Config)
			Expect(err).NotTo(HaveOccurred())
			r, err := framework.Record(ctx, dyn, inMembers[m.Name], &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}, m.Name)
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(r.Stop)
			recorders[m.Name] = r
		}

		By("a new level reaches the canary; the second stage waits for promotion")
		conf("2")
		Eventually(levelOn("member1"), "60s").Should(Equal("2"))
		Eventually(func() string { return rollout().Status.CurrentStage }, "60s").Should(Equal("second"))
		paused := "Paused (WaitingForPromotion): stage 'second' pauses until promoted"
		Expect(cliOn(f.Hub.KubeconfigPath, "rollout", "status", name, "-n", ns, "--watch=false").stdout).To(ContainSubstring(paused))

		By("killing the leader; the standby takes the Lease and runs the controllers")
		leader.kill()
		Eventually(leaseHolder(hubClient), leaseDuration+10*time.Second, 200*time.Millisecond).ShouldNot(Equal(first))
		Eventually(standby.out, controllersStart).Should(ContainSubstring(controllersRunning))
		// The new leader has read the Rollout and written its status again.
		Eventually(func() string {
			return cliOn(f.Hub.KubeconfigPath, "rollout", "status", name, "-n", ns, "--watch=false").stdout
		}, "30s").Should(ContainSubstring(paused))

		By("promoting: member2 gets the level only now, and member1 was written once")
		beforePromote := mark(recorders["member2"])
		promote := cliOn(f.Hub.KubeconfigPath, "rollout", "promote", name, "-n", ns)
		Expect(promote.code).To(Equal(0), promote.stderr)
		Eventually(levelOn("member2"), "60s").Should(Equal("2"))
		Expect(storedBefore(recorders["member2"], beforePromote, level)).NotTo(ContainElement("2"),
			"member2 stored level 2 before its stage was promoted, across the takeover")
		Expect(recorders["member1"].History(0, mark(recorders["member1"]), level)).To(Equal([]string{"EXISTING 1", "MODIFIED 2"}),
			"member1 was written once with the change: the takeover wrote nothing again")
		done := cliOn(f.Hub.KubeconfigPath, "rollout", "status", name, "-n", ns, "--timeout", "30s")
		Expect(done.code).To(Equal(0), done.stdout+done.stderr)
	})
})
