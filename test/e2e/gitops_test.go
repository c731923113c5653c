package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"time"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/federator-dev/federator/test/framework"
)

// The GitOps loop as Flux's kustomize-controller runs it, with kubectl:
// a directory stands for the Git repository, and every sync applies it with
// server-side apply under the controller's field manager and prunes, through
// an ApplySet (the inventory), what the directory no longer has. Holds are
// set the way an operator sets them during a sync loop: with the CLI, on
// objects Git also owns.
var _ = Describe("a GitOps applier syncing the hub (server-side apply and prune)", func() {
	const ns, name = "default", "gitops-web"
	const delay = 30 * time.Second

	It("never releases a held version nor skips a deletion delay through a prune and re-apply; kstatus and Argo CD see holds as holds", func() {
		w := useWorkloadFleet()
		repo := GinkgoT().TempDir()
		write := func(file, content string) {
			GinkgoHelper()
			Expect(os.WriteFile(filepath.Join(repo, file), []byte(content), 0o600)).To(Succeed())
		}
		sync := func() string {
			GinkgoHelper()
			cmd := exec.Command(filepath.Join(binDir, "kubectl"), "--kubeconfig", w.f.Hub.KubeconfigPath,
				"apply", "--server-side", "--force-conflicts", "--field-manager", "kustomize-controller",
				"-n", ns, "--prune", "--applyset", "configmaps/"+name, "-f", repo)
			cmd.Env = append(os.Environ(), "KUBECTL_APPLYSET=true")
			out, err := cmd.CombinedOutput()
			GinkgoWriter.Printf("kubectl apply --prune:\n%s", out)
			Expect(err).NotTo(HaveOccurred(), "%s", out)
			return string(out)
		}
		template := func(image string) string {
			return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ` + name + `
  annotations:
    federator.dev/deletion-delay: ` + delay.String() + `
spec:
  replicas: 1
  selector: {matchLabels: {app: ` + name + `}}
  template:
    metadata: {labels: {app: ` + name + `}}
    spec: {containers: [{name: web, image: "` + image + `"}]}
`
		}
		write("policy.yaml", `apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata:
  name: `+name+`
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: `+name+`}]
  placement: {clusterAffinity: {clusterNames: [member1, member2, member3]}}
`)
		write("rollout.yaml", `apiVersion: rollouts.federator.dev/v1alpha1
kind: Rollout
metadata:
  name: `+name+`
spec:
  policyRef: {name: `+name+`}
  stages:
  - {name: canary, clusters: [member1]}
  - {name: rest, clusters: [member2, member3]}
`)
		write("deployment.yaml", template("nginx:1.25"))
		s := stagedRollout{w: w, ns: ns, name: name}
		rollout, binding := rolloutRef(ns, name), bindingRef(ns, name)
		policy := &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		DeferCleanup(func() {
			for _, obj := range []client.Object{rollout, policy, deploymentRef(ns, name)} {
				Expect(client.IgnoreNotFound(w.hub.Delete(ctx, obj))).To(Succeed())
			}
		})

		By("the first sync: the rollout takes in what Git has, everything reads Current and Healthy")
		sync()
		s.completedAt(1)
		for m := range w.inMembers {
			s.memberImageIs(m, "nginx:1.25")
		}
		readsAs(w.hub, rollout, "Current/Healthy")
		readsAs(w.hub, binding, "Current/Healthy")
		Eventually(func(g Gomega) string { return kstatusOf(g, w.hub, policy) }).Should(Equal("Current"))
		recorders := s.recordMembers()

		By("an operator suspends the policy with the CLI; Git moves on to nginx:1.26 and syncs")
		r := cliOn(w.f.Hub.KubeconfigPath, "suspend", "pp", name, "-n", ns, "-m", "change freeze")
		Expect(r.code).To(Equal(0), r.stderr)
		write("deployment.yaml", template("nginx:1.26"))
		sync()
		for _, m := range []string{"member1", "member2", "member3"} {
			Eventually(func() string { return workImageOn(w.hub, m, ns, name) }).Should(Equal("nginx:1.26"), m)
		}
		Expect(w.hub.Get(ctx, client.ObjectKeyFromObject(policy), policy)).To(Succeed())
		Expect(policy.Annotations).To(HaveKeyWithValue("propagation.federator.dev/suspended", "change freeze"),
			"server-side apply removed the annotation it does not own")
		readsAs(w.hub, rollout, "Current/Suspended")
		readsAs(w.hub, binding, "Current/Suspended", "member1", "member2", "member3", "change freeze")

		By("Git drops the template: the prune deletes it on the hub, and the members' copies count down")
		Expect(os.Remove(filepath.Join(repo, "deployment.yaml"))).To(Succeed())
		Expect(sync()).To(ContainSubstring("deployment.apps/" + name + " pruned"))
		pruned := time.Now()
		annotations := func(g Gomega, member string) map[string]string {
			d := &appsv1.Deployment{}
			g.Expect(w.inMembers[member].Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, d)).To(Succeed())
			return d.Annotations
		}
		for m := range w.inMembers {
			Eventually(func(g Gomega) map[string]string { return annotations(g, m) }).Should(HaveKey(timestampKey), "%s counts down", m)
		}

		By("Git has it back before the delay ends: the next sync re-creates it, and the countdowns are taken back")
		write("deployment.yaml", template("nginx:1.26"))
		sync()
		for m := range w.inMembers {
			Eventually(func(g Gomega) map[string]string { return annotations(g, m) }).ShouldNot(HaveKey(timestampKey), "%s still counts down", m)
		}
		Expect(time.Now()).To(BeTemporally("<", pruned.Add(delay)), "re-applied too late to prove anything; the machine is loaded")
		readsAs(w.hub, binding, "Current/Suspended", "change freeze")
		for m, rec := range recorders {
			Expect(rec.History(0, mark(rec), framework.Image)).NotTo(ContainElement(HavePrefix("DELETED")), "%s deleted its copy", m)
			Expect(stored(rec, framework.Image)).NotTo(ContainElement("nginx:1.26"), "%s stored the held version", m)
		}

		By("the operator resumes: the rollout walks nginx:1.26 through its stages, and everything reads Current and Healthy again")
		r = cliOn(w.f.Hub.KubeconfigPath, "resume", "pp", name, "-n", ns)
		Expect(r.code).To(Equal(0), r.stderr)
		for m := range w.inMembers {
			s.memberImageIs(m, "nginx:1.26")
		}
		Eventually(func(g Gomega) string { r, _ := gitOpsReads(g, w.hub, rollout); return r }, "2m").Should(Equal("Current/Healthy"))
		readsAs(w.hub, binding, "Current/Healthy")

		By("Git drops the template for good: each member keeps its copy for the whole delay, then deletes it")
		Expect(os.Remove(filepath.Join(repo, "deployment.yaml"))).To(Succeed())
		Expect(sync()).To(ContainSubstring("deployment.apps/" + name + " pruned"))
		due := time.Now().Add(delay)
		for _, rec := range recorders {
			notDeletedBefore(rec, due)
		}
		for _, rec := range recorders {
			deletedOnTime(rec, due)
		}
	})
})

// kstatusOf is Flux's kstatus of obj as the hub stores it now.
func kstatusOf(g Gomega, hub client.Client, obj client.Object) string {
	res, err := status.Compute(storedOnHub(g, hub, obj))
	g.Expect(err).NotTo(HaveOccurred())
	return string(res.Status)
}
