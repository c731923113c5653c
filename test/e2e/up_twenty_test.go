package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"
	corev1 "k8s.io/api/core/v1"
)

// Issue 19's scale of the fleet: `federator up --members 20`, with
// workloads, on the CI machine's 2 cores beside the suite's own fleet.
// docs/performance.md has what such a fleet costs (make fleet-footprint).
//
// Serial: beside two other Ginkgo processes' fleets and specs, its 100
// programs starting at once took the machine to a load of 128 on a slower
// machine: it was not ready within 10 minutes, and the specs it ran
// beside took 5 to 10 times as long. Serial, it runs once the others are
// done, beside the suite's idle fleets.
var _ = Describe("federator up --members 20", func() {
	It("starts twenty members that run workloads, says how long it took, and stops every process on Ctrl-C", Serial, func() {
		const members = 20
		dir := filepath.Join(GinkgoT().TempDir(), "fleet")
		repoBin, err := filepath.Abs("../../bin")
		Expect(err).NotTo(HaveOccurred())
		session, err := gexec.Start(exec.Command(federatorBinary(), "up", "--members", fmt.Sprint(members), "--dir", dir, "--bin-dir", repoBin),
			GinkgoWriter, GinkgoWriter)
		Expect(err).NotTo(HaveOccurred())
		var children []fleetProcess
		DeferCleanup(func() { stopUpSession(session, children) })

		By("printing the ready line with the start-up time")
		ready := regexp.MustCompile(fmt.Sprintf(`(?m)^federator: ready: hub and %d members; kubeconfigs in %s .*; started in (\d+(?:\.\d+)?)s$`,
			members, regexp.QuoteMeta(dir)))
		Eventually(func() string {
			out := string(session.Out.Contents())
			if !ready.MatchString(out) && session.ExitCode() != -1 {
				StopTrying(fmt.Sprintf("federator up exited with code %d before it was ready", session.ExitCode())).Now()
			}
			return out
		}, 10*time.Minute, time.Second).Should(MatchRegexp(ready.String()))
		startup := ready.FindStringSubmatch(string(session.Out.Contents()))[1]
		AddReportEntry("federator up --members 20: start-up seconds", startup)
		// One API server, etcd and kube-controller-manager per cluster;
		// kube-scheduler and kwok per member. A program that died is started
		// again by the fleet (what it said is in the report).
		Eventually(func(g Gomega) {
			children = descendantProcesses(session.Command.Process.Pid)
			var comms []string
			for _, p := range children {
				comms = append(comms, p.comm)
			}
			for comm, want := range map[string]int{"kube-apiserver": members + 1, "etcd": members + 1, "kube-controller": members + 1,
				"kube-scheduler": members, "kwok": members} {
				g.Expect(countOf(comms, comm)).To(Equal(want), "%s processes among federator's children; federator up said:\n%s",
					comm, session.Out.Contents())
			}
		}, 2*time.Minute, 2*time.Second).Should(Succeed())
		By("registering every member as a Ready Cluster")
		hub := upClient(filepath.Join(dir, "hub.kubeconfig"))
		var want []any
		for i := 1; i <= members; i++ {
			want = append(want, clusterReadyWithVersion(fmt.Sprintf("member%d", i), "v1.34.1"))
		}
		Eventually(func(g Gomega) {
			clusters := &clusterv1alpha1.ClusterList{}
			g.Expect(hub.List(ctx, clusters)).To(Succeed())
			g.Expect(clusters.Items).To(ConsistOf(want...))
		}, 5*time.Minute, 2*time.Second).Should(Succeed())

		By("giving the last member simulated nodes that are Ready")
		last := upClient(filepath.Join(dir, fmt.Sprintf("member%d.kubeconfig", members)))
		Eventually(func(g Gomega) {
			nodes := &corev1.NodeList{}
			g.Expect(last.List(ctx, nodes)).To(Succeed())
			g.Expect(nodes.Items).NotTo(BeEmpty())
			for _, n := range nodes.Items {
				g.Expect(n.Status.Conditions).To(ContainElement(And(
					HaveField("Type", corev1.NodeReady), HaveField("Status", corev1.ConditionTrue))), "node %s", n.Name)
			}
		}, 3*time.Minute, 2*time.Second).Should(Succeed())

		if died := regexp.MustCompile(`(?m)^federator: .* exited while the fleet runs .*$`).FindAllString(string(session.Out.Contents()), -1); len(died) > 0 {
			AddReportEntry("federator up --members 20: programs that died and were restarted", strings.Join(died, "\n"))
		}

		By("stopping on Ctrl-C: exit 0, every child gone, no kubeconfig left")
		children = descendantProcesses(session.Command.Process.Pid)
		Expect(session.Command.Process.Signal(os.Interrupt)).To(Succeed())
		Eventually(session, 3*time.Minute).Should(gexec.Exit(0))
		Expect(string(session.Out.Contents())).To(ContainSubstring("federator: fleet stopped"))
		for _, p := range children {
			Eventually(p.alive, "10s").Should(BeFalse(), "%s (pid %d) after federator exited", p.comm, p.pid)
		}
		entries, err := os.ReadDir(dir)
		Expect(err).NotTo(HaveOccurred())
		var left []string
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), ".kubeconfig") {
				left = append(left, e.Name())
			}
		}
		Expect(left).To(BeEmpty(), "kubeconfigs left in %s", dir)
	})
})
