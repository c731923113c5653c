package e2e

import (
	"os/exec"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	"github.com/onsi/gomega/gexec"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// `federator get`: the rollout view with a member's refusal in it, its
// --watch, and the kubectl-style listings beside it.
var _ = Describe("federator get (cli)", func() {
	const ns = "cli-get-rollout"

	It("states Failed with the member's error, refreshes with --watch, and lists policies, bindings, works and clusters", func() {
		namespace(ns)
		By("member2 already has a Deployment web the hub did not create: it refuses to hand it over")
		Expect(members["member2"].Create(ctx, &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
			Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](1),
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx:local"}}}}},
		})).To(Succeed())
		deployment(ns, "web", "nginx:1.25")
		mustApply(`
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: %s}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement:
    clusterAffinity: {clusterNames: [member1, member2, member3]}
`, ns)
		Eventually(func() map[string]string { return rolloutStates(ns, "web") }).Should(Equal(
			map[string]string{"member1": "Applied", "member2": "Failed", "member3": "Applied"}))
		failed := rolloutOf(ns, "web")["member2"]
		Expect(failed.Reason).To(Equal("AppliedFailed"))
		Expect(failed.Message).To(ContainSubstring("already exists in the cluster member2"))
		Expect(memberImage("member2", ns, "web")).To(Equal("nginx:local"))

		table := federatorCLI("get", "rollout", "-n", ns)
		Expect(table.code).To(Equal(0), table.stderr)
		Expect(table.stdout).To(MatchRegexp(`^TEMPLATE\s+CLUSTER\s+STATE\s+GENERATION\s+READY\s+IMAGES\s+MESSAGE\n`))
		Expect(table.stdout).To(MatchRegexp(`(?m)^Deployment/web\s+member1\s+Applied\s+\d+\s+\S+\s+nginx:1\.25\s+-$`))
		Expect(table.stdout).To(MatchRegexp(`(?m)^Deployment/web\s+member2\s+Failed\s+-\s+\S+\s+-\s+.*already exists in the cluster member2`))
		wide := federatorCLI("get", "rollout", "-A", "-o", "wide")
		Expect(wide.code).To(Equal(0), wide.stderr)
		Expect(wide.stdout).To(MatchRegexp(`(?m)^cli-get-rollout\s+Deployment/web\s+member3\s+Applied\s+.*PropagationPolicy/web\s+karmada-es-member3/web-\S+\s+AppliedSuccessful\s+-$`))

		By("--watch prints again when member1 is suspended")
		watch, err := gexec.Start(exec.Command(federatorBinary(), "get", "rollout", "web", "-n", ns, "--watch", "--interval", "300ms",
			"--kubeconfig", hubKubeconfig()), GinkgoWriter, GinkgoWriter)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { watch.Kill().Wait("10s") })
		Eventually(watch.Out).Should(gbytes.Say(`member1\s+Applied`))
		r := federatorCLI("suspend", "deployment", "web", "-n", ns, "--clusters", "member1", "-m", "watch this")
		Expect(r.code).To(Equal(0), r.stderr)
		Eventually(watch.Out).Should(gbytes.Say(`member1\s+Held\s+.*\("watch this"\)`))
		watch.Interrupt()
		Eventually(watch, "10s").Should(gexec.Exit(0))

		By("the kubectl-style listings")
		for args, want := range map[string]string{
			"policies":         `(?m)^pp/web\s+Abort\s+0\s+\S+\s+-$`,
			"pp -o wide":       `(?m)^web\s+Abort\s+0\s+\S+\s+Deployment/web\s+member1,member2,member3\s+-$`,
			"bindings":         `(?m)^rb/web-deployment\s+Deployment/web\s+member1,member2,member3\s+True\s+False\s+\S+$`,
			"works":            `(?m)^member1\s+web-\S+\s+Deployment/web\s+SuspendDispatching\s+True\s+\S+$`,
			"clusters -o wide": `(?m)^member1\s+v1\.\d+\.\d+\s+Push\s+True\s+-\s+\S+\s+https://127\.0\.0\.1:\d+\s+\d+\s+[1-9]\d*$`,
		} {
			r := federatorCLI(append(append([]string{"get"}, strings.Fields(args)...), "-n", ns)...)
			Expect(r.code).To(Equal(0), "get %s: %s", args, r.stderr)
			Expect(r.stdout).To(MatchRegexp(want), "get %s", args)
		}
		r = federatorCLI("get", "pp", "web", "-n", ns, "-o", "yaml")
		Expect(r.code).To(Equal(0), r.stderr)
		Expect(r.stdout).To(HavePrefix("apiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\n"))
		Expect(r.stdout).NotTo(ContainSubstring("managedFields"))
	})
})
