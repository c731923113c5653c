package e2e

import (
	"os/exec"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"

	"github.com/federator-dev/federator/test/framework"
)

// A per-cluster suspension annotation naming no registered Cluster (a
// typo) fails safe as a suspension list does; a value that reads as "not
// suspended" is refused at admission.
var _ = Describe("a per-cluster suspension annotation naming a cluster that does not exist", func() {
	const ns, name = "suspend-annotation-unknown", "web"

	It("holds every cluster, naming the typo, until the annotation is fixed", func() {
		propagatedEverywhere(ns, name)
		recorders := recordEverywhere(deploymentRef(ns, name))
		pp := &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}

		By("annotating the policy for 'membr2', a typo of member2, then updating the image")
		Expect(hubClient.Patch(ctx, pp, client.RawPatch(types.MergePatchType,
			[]byte(`{"metadata": {"annotations": {"suspended.propagation.federator.dev/membr2": "canary bad"}}}`)))).To(Succeed())
		for m := range members {
			Eventually(func() *metav1.Condition { return dispatching(m, "Deployment", ns, name) }).Should(And(
				Not(BeNil()), HaveField("Reason", "SuspendDispatching")), m)
			Expect(holdMessageOf(m, ns, name)).To(Equal("annotation suspended.propagation.federator.dev/membr2 on PropagationPolicy "+
				"suspend-annotation-unknown/web names \"membr2\", which is no registered Cluster; every cluster is held until the "+
				"annotation names a registered Cluster or is removed (`federator resume --clusters NAME`), or such a cluster joins"), m)
		}
		Eventually(func() *metav1.Condition { return clustersKnown(ns, name) }).Should(And(
			HaveField("Status", metav1.ConditionFalse), HaveField("Reason", "UnknownSuspendedCluster"),
			HaveField("Message", ContainSubstring(`metadata.annotations: "suspended.propagation.federator.dev/membr2" name no registered Cluster`))))
		newVersionHeldEverywhere(ns, name, "nginx:1.27", recorders)

		By("fixing the name: only member2 stays held")
		Expect(hubClient.Patch(ctx, pp, client.RawPatch(types.MergePatchType, []byte(`{"metadata": {"annotations": {`+
			`"suspended.propagation.federator.dev/membr2": null, "suspended.propagation.federator.dev/member2": "canary bad"}}}`)))).To(Succeed())
		Eventually(func() map[string]string { return imagesEverywhere(ns, name) }).Should(Equal(
			map[string]string{"member1": "nginx:1.27", "member2": "nginx:1.25", "member3": "nginx:1.27"}))
		Expect(stored(recorders["member2"], framework.Image)).NotTo(ContainElement("nginx:1.27"))
		Eventually(func() *metav1.Condition { return clustersKnown(ns, name) }).Should(HaveField("Status", metav1.ConditionTrue))
	})

	It("refuses \"false\", \"0\" and \"no\" as values at admission, saying to remove the annotation instead", func() {
		namespace(ns)
		for _, c := range []struct{ key, value string }{
			{"propagation.federator.dev/suspended", "false"},
			{"suspended.propagation.federator.dev/member2", "0"},
			{"propagation.federator.dev/suspended", "No"},
		} {
			manifest := `apiVersion: apps/v1
kind: Deployment
metadata:
  name: refused
  annotations:
    ` + c.key + `: "` + c.value + `"
spec:
  selector: {matchLabels: {app: refused}}
  template:
    metadata: {labels: {app: refused}}
    spec: {containers: [{name: web, image: "nginx:1.25"}]}
`
			cmd := exec.Command(filepath.Join(binDir, "kubectl"), "apply", "-n", ns, "-f", "-", "--kubeconfig", hubKubeconfig())
			cmd.Stdin = strings.NewReader(manifest)
			r := runCLI(cmd)
			Expect(r.code).NotTo(BeZero(), "%s: %s accepted", c.key, c.value)
			Expect(r.stderr).To(And(ContainSubstring("federator-suspension-annotations"),
				ContainSubstring(`metadata.annotations[`+c.key+`]: Invalid value: "`+c.value+`"`),
				ContainSubstring("to resume, remove the annotation instead")), c.key)
		}
		err := hubClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "refused"}, &appsv1.Deployment{})
		Expect(client.IgnoreNotFound(err)).To(Succeed())
		Expect(err).To(HaveOccurred(), "nothing stored")

		By("a reason is accepted")
		d := framework.NewDeployment(ns, "accepted", "nginx:1.25")
		d.Annotations = map[string]string{"propagation.federator.dev/suspended": "incident 42: not false"}
		Expect(framework.Apply(ctx, hubClient, d, fieldOwner)).To(Succeed())
	})
})
