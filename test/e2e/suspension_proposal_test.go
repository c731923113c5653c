package e2e

import (
	"os/exec"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/federator-dev/federator/test/framework"
)

// The walkthrough of Karmada's suspension proposal
// (docs/proposals/dispatch-suspension, "User usage example"), its three
// PropagationPolicies applied verbatim, in the proposal's spelling
// (suspendDispatching, suspendDispatchingOnClusters) and in the spelling
// Karmada released (dispatching, dispatchingOnClusters): both must behave
// the same, also through a client that does not ask for strict field
// validation (which, before the hub knew the aliases, stored `suspension:
// {}` with a mere warning, and the change went to every member).
const (
	proposalPolicy = `apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata:
  name: nginx-propagation
spec:
  resourceSelectors:
    - apiVersion: apps/v1
      kind: Deployment
      name: nginx
  placement:
    clusterAffinity:
      clusterNames:
        - member1
        - member2
        - member3
`
	proposalSuspendAll = proposalPolicy + `  suspension:
    suspendDispatching: true
`
	proposalSuspendMember2And3 = proposalPolicy + `  suspension:
    suspendDispatchingOnClusters:
      clusterNames:
        - member2
        - member3
`
	proposalSuspendMember3 = proposalPolicy + `  suspension:
    suspendDispatchingOnClusters:
      clusterNames:
        - member3
`
)

// released is a proposal policy in Karmada's released spelling.
func released(policy string) string {
	policy = strings.ReplaceAll(policy, "suspendDispatchingOnClusters:", "dispatchingOnClusters:")
	return strings.ReplaceAll(policy, "suspendDispatching:", "dispatching:")
}

// kubectlApply applies a policy as the proposal's reader would: `kubectl
// apply -f` (client-side apply, strict field validation).
func kubectlApply(ns, policy string) {
	GinkgoHelper()
	cmd := exec.Command(filepath.Join(binDir, "kubectl"), "apply", "-n", ns, "-f", "-", "--kubeconfig", hubKubeconfig())
	cmd.Stdin = strings.NewReader(policy)
	r := runCLI(cmd)
	Expect(r.code).To(Equal(0), r.stderr)
	Expect(r.stderr).To(BeEmpty(), "no warning")
}

// looseApply creates or replaces a policy through a client that asks for
// no field validation (the API server then only warns of unknown fields).
func looseApply(ns, policy string) {
	GinkgoHelper()
	u := &unstructured.Unstructured{}
	Expect(yaml.Unmarshal([]byte(policy), &u.Object)).To(Succeed())
	u.SetNamespace(ns)
	current := u.DeepCopy()
	err := hubClient.Get(ctx, client.ObjectKeyFromObject(u), current)
	if apierrors.IsNotFound(err) {
		Expect(hubClient.Create(ctx, u)).To(Succeed())
		return
	}
	Expect(err).NotTo(HaveOccurred())
	u.SetResourceVersion(current.GetResourceVersion())
	Expect(hubClient.Update(ctx, u)).To(Succeed())
}

var _ = Describe("the suspension proposal's walkthrough", func() {
	DescribeTable("behaves the same in either spelling, through either client",
		func(ns string, spell func(string) string, applyPolicy func(ns, policy string)) {
			namespace(ns)
			deployment(ns, "nginx", "nginx:1.25")
			applyPolicy(ns, spell(proposalPolicy))
			Eventually(func() map[string]string { return imagesEverywhere(ns, "nginx") }).Should(Equal(everywhere("nginx:1.25")))
			recorders := recordEverywhere(deploymentRef(ns, "nginx"))

			By("suspending dispatching to every cluster, then updating the image")
			applyPolicy(ns, spell(proposalSuspendAll))
			for m := range members {
				Eventually(func() string { return dispatchingReason(m, ns) }).Should(Equal("SuspendDispatching"), m)
			}
			Expect(bindingSuspension(ns)).To(Equal(map[string]any{"dispatching": true}), "Karmada's spelling in the binding")
			setImage(ns, "nginx", "nginx:1.27")
			for m := range members {
				Eventually(func() string { return workImage(m, ns, "nginx") }).Should(Equal("nginx:1.27"), m)
			}
			allHeld := markEverywhere(recorders)

			By("suspending member2 and member3 only: member1 gets the new version")
			applyPolicy(ns, spell(proposalSuspendMember2And3))
			Eventually(func() map[string]string { return imagesEverywhere(ns, "nginx") }).Should(Equal(
				map[string]string{"member1": "nginx:1.27", "member2": "nginx:1.25", "member3": "nginx:1.25"}))
			Expect(bindingSuspension(ns)).To(Equal(map[string]any{
				"dispatchingOnClusters": map[string]any{"clusterNames": []any{"member2", "member3"}}}))
			member2Held := mark(recorders["member2"])

			By("suspending member3 only: member2 gets it too")
			applyPolicy(ns, spell(proposalSuspendMember3))
			Eventually(func() map[string]string { return imagesEverywhere(ns, "nginx") }).Should(Equal(
				map[string]string{"member1": "nginx:1.27", "member2": "nginx:1.27", "member3": "nginx:1.25"}))

			By("no member stored the new version while it was suspended there")
			for m, r := range recorders {
				Expect(storedBefore(r, allHeld[m], framework.Image)).NotTo(ContainElement("nginx:1.27"), m)
			}
			Expect(storedBefore(recorders["member2"], member2Held, framework.Image)).NotTo(ContainElement("nginx:1.27"))
			Expect(stored(recorders["member3"], framework.Image)).NotTo(ContainElement("nginx:1.27"))

			By("federator get pp tells what the policy suspends, in either spelling")
			r := federatorCLI("get", "pp", "-n", ns)
			Expect(r.code).To(Equal(0), r.stderr)
			Expect(r.stdout).To(MatchRegexp(`(?m)^nginx-propagation\s.*\smember3 \(spec\.suspension\)$`))

			By("the policy is stored as written, in its own spelling")
			Expect(storedSuspension(ns)).To(Equal(map[string]any{
				strings.TrimSuffix(strings.TrimSpace(spell("suspendDispatchingOnClusters:")), ":"): map[string]any{
					"clusterNames": []any{"member3"}}}))
		},
		Entry("the proposal's spelling, kubectl apply", "proposal-kubectl", func(p string) string { return p }, kubectlApply),
		Entry("Karmada's released spelling, kubectl apply", "released-kubectl", released, kubectlApply),
		Entry("the proposal's spelling, a client without strict field validation", "proposal-loose", func(p string) string { return p }, looseApply),
	)
})

// dispatchingReason is the reason of member's Work's Dispatching condition
// for the Deployment nginx.
func dispatchingReason(member, ns string) string {
	if c := dispatching(member, "Deployment", ns, "nginx"); c != nil {
		return c.Reason
	}
	return ""
}

// bindingSuspension is spec.suspension of the nginx Deployment's binding,
// as stored.
func bindingSuspension(ns string) map[string]any {
	return storedField(ns, "work.karmada.io/v1alpha2", "ResourceBinding", "nginx-deployment")
}

// storedSuspension is spec.suspension of the walkthrough's policy, as stored.
func storedSuspension(ns string) map[string]any {
	return storedField(ns, "policy.karmada.io/v1alpha1", "PropagationPolicy", "nginx-propagation")
}

func storedField(ns, apiVersion, kind, name string) map[string]any {
	GinkgoHelper()
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	Expect(hubClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, u)).To(Succeed())
	s, _, err := unstructured.NestedMap(u.Object, "spec", "suspension")
	Expect(err).NotTo(HaveOccurred())
	return s
}
