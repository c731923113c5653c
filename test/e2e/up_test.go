package e2e

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/federator-dev/federator/apis/policy"
	"github.com/federator-dev/federator/test/framework"
)

// The newcomer's path: `federator up --sample` from the README, the commands
// it prints, and Ctrl-C (SIGTERM here) leaving nothing behind. It runs the
// real binary as a subprocess beside the suite's own fleet.
var _ = Describe("federator up", Ordered, func() {
	var federator, repoBin string

	BeforeAll(func() {
		root, err := filepath.Abs("../..")
		Expect(err).NotTo(HaveOccurred())
		repoBin = filepath.Join(root, "bin")
		federator = federatorBinary()
	})

	// member2 is a Pull member, served by its agent: the sample's Rollout
	// holds it there, and its recorder proves it never stores the broken
	// version (docs/pull-mode.md); everything a newcomer sees is as with
	// `make up`, but for the ready line naming it.
	It("starts a fleet with the sample rollout, prints how to watch it, and stops every process on SIGTERM", func() {
		dir := GinkgoT().TempDir()
		args := []string{"up", "--members", "2", "--pull-members", "1", "--dir", dir, "--sample", "--bin-dir", repoBin, "--v=1"}
		// As `make up` does where Debian's prometheus is installed: the
		// canary is judged by an analysis too, and step 6 shows it fail.
		_, lookErr := exec.LookPath("prometheus")
		withPrometheus := lookErr == nil
		if withPrometheus {
			args = append(args, "--prometheus")
		} else {
			AddReportEntry("prometheus not found (apt-get install prometheus): the sample runs without its analysis, and step 6 is not run")
		}
		session, err := gexec.Start(exec.Command(federator, args...), GinkgoWriter, GinkgoWriter)
		Expect(err).NotTo(HaveOccurred())
		var children []fleetProcess
		// Run after the stop below: federator up prints nothing before its
		// ready line, and its log says how far it got.
		DeferCleanup(func() {
			if CurrentSpecReport().Failed() {
				printLogTail("federator up's log", filepath.Join(dir, "federator.log"), 80)
			}
		})
		DeferCleanup(func() { stopUpSession(session, children) })

		By("waiting for the ready line and the help that follows it")
		Eventually(func() string {
			out := string(session.Out.Contents())
			if !strings.Contains(out, "set image") && session.ExitCode() != -1 {
				StopTrying(fmt.Sprintf("federator up exited with code %d before it was ready", session.ExitCode())).Now()
			}
			return out
		}, 3*time.Minute, time.Second).Should(And(
			MatchRegexp(`(?m)^federator: ready: hub and 2 members \(member2 in Pull mode, each served by its agent\); kubeconfigs in %s `,
				regexp.QuoteMeta(dir)),
			MatchRegexp(`(?m)^  kubectl --kubeconfig %s -n demo set image deploy/web web=nginx:1\.26$`,
				regexp.QuoteMeta(filepath.Join(dir, "hub.kubeconfig"))),
			ContainSubstring("rollout resume web -n demo"),
			MatchRegexp(`(?m)^  for m in member1 member2; do `)))
		// Recorded now, while all is up, so that the cleanup can reach them
		// even if a later step fails.
		children = descendantProcesses(session.Command.Process.Pid)

		By("printing commands a shell accepts as they are")
		for _, line := range strings.Split(string(session.Out.Contents()), "\n") {
			if !strings.HasPrefix(line, "  ") {
				continue
			}
			syntax, err := exec.Command("bash", "-n", "-c", line).CombinedOutput()
			Expect(err).NotTo(HaveOccurred(), "printed command %q: %s", line, syntax)
		}

		By("writing a kubeconfig for the hub and each member, and none for a third member")
		hubClient := upClient(filepath.Join(dir, "hub.kubeconfig"))
		member1 := upClient(filepath.Join(dir, "member1.kubeconfig"))
		member2 := upClient(filepath.Join(dir, "member2.kubeconfig"))
		Expect(filepath.Join(dir, "member3.kubeconfig")).NotTo(BeAnExistingFile())

		By("registering member1 and member2 as Ready Clusters reporting their Kubernetes version, member2 by its agent in Pull mode")
		Eventually(func(g Gomega) {
			clusters := &clusterv1alpha1.ClusterList{}
			g.Expect(hubClient.List(ctx, clusters)).To(Succeed())
			g.Expect(clusters.Items).To(ConsistOf(
				And(clusterReadyWithVersion("member1", "v1.34.1"), HaveField("Spec.SyncMode", clusterv1alpha1.Push)),
				And(clusterReadyWithVersion("member2", "v1.34.1"), HaveField("Spec.SyncMode", clusterv1alpha1.Pull))))
		}, 2*time.Minute).Should(Succeed())
		clusters, err := exec.Command(federator, "get", "clusters", "--kubeconfig", filepath.Join(dir, "hub.kubeconfig")).CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), "%s", clusters)
		Expect(string(clusters)).To(And(MatchRegexp(`(?m)^member1 +v1\.34\.1 +Push +True `), MatchRegexp(`(?m)^member2 +v1\.34\.1 +Pull +True `)),
			"get clusters shows each member's mode")

		image := func(c client.Client) func() string {
			return func() string {
				d := &appsv1.Deployment{}
				if err := c.Get(ctx, client.ObjectKey{Namespace: "demo", Name: "web"}, d); err != nil {
					return err.Error()
				}
				return d.Spec.Template.Spec.Containers[0].Image
			}
		}
		out := string(session.Out.Contents())
		// printed returns the command printed on the line after the one
		// matching title; run runs a printed command as a newcomer would,
		// in a shell that ran the printed PATH line first.
		printed := func(title string) string {
			GinkgoHelper()
			m := regexp.MustCompile(`(?m)^` + title + `\n  (.+)$`).FindStringSubmatch(out)
			Expect(m).To(HaveLen(2), "a printed command after %q", title)
			return m[1]
		}
		pathLine := printed("The commands below run the kubectl that `make binaries` built; put it first on your PATH:")
		Expect(pathLine).To(Equal("export PATH=" + repoBin + `:"$PATH"`))
		run := func(command string) string {
			GinkgoHelper()
			output, err := exec.Command("bash", "-c", pathLine+"\n"+command).CombinedOutput()
			Expect(err).NotTo(HaveOccurred(), "printed command %q: %s", command, output)
			return string(output)
		}
		watchImages := func() string {
			return run(regexp.MustCompile(`(?m)^  (for m in .*)$`).FindStringSubmatch(out)[1])
		}
		watchWorks := func() string {
			return run(regexp.MustCompile(`(?m)^  (kubectl .* get works .*)$`).FindStringSubmatch(out)[1])
		}
		watchRollout := func() string {
			return run(regexp.MustCompile(`(?m)^  (\S+ get rollout web -n demo --fleet .*)$`).FindStringSubmatch(out)[1])
		}
		// runExit runs a printed command and returns its output and exit
		// code (rollout status exits 1 when the rollout failed).
		runExit := func(command string) (string, int) {
			GinkgoHelper()
			output, err := exec.Command("bash", "-c", pathLine+"\n"+command).CombinedOutput()
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				return string(output), exit.ExitCode()
			}
			Expect(err).NotTo(HaveOccurred(), "printed command %q: %s", command, output)
			return string(output), 0
		}
		// rolloutRow matches get rollout's row of member: state, READY and
		// images.
		rolloutRow := func(member, state, ready, images string) OmegaMatcher {
			return MatchRegexp(`(?m)^Deployment/web +%s +%s +\S+ +%s +%s +`, member, state, regexp.QuoteMeta(ready), regexp.QuoteMeta(images))
		}

		By("dispatching the sample Deployment to every member, as the printed watch command shows")
		Eventually(image(member1), 2*time.Minute).Should(Equal("nginx:1.25"))
		Eventually(image(member2), 2*time.Minute).Should(Equal("nginx:1.25"))
		Expect(watchImages()).To(Equal("member1: nginx:1.25\nmember2: nginx:1.25\n"))
		Eventually(watchRollout, 2*time.Minute).Should(And(
			rolloutRow("member1", "Applied", "2/2", "nginx:1.25"), rolloutRow("member2", "Applied", "2/2", "nginx:1.25")))
		statusOnce := regexp.MustCompile(`(?m)^  (\S+ rollout status web -n demo --fleet .* --watch=false)$`).FindStringSubmatch(out)[1]
		Eventually(func() string { o, _ := runExit(statusOnce); return o }, 2*time.Minute).Should(
			ContainSubstring("Completed (RolloutCompleted): revision 1 reached every stage"))

		// Every version member2 stores: it never gets the broken one, and
		// nothing while the rollout is paused before it.
		dyn2, err := dynamic.NewForConfig(upConfig(filepath.Join(dir, "member2.kubeconfig")))
		Expect(err).NotTo(HaveOccurred())
		member2Record, err := framework.Record(ctx, dyn2, member2, deploymentRef("demo", "web"), "member2")
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(member2Record.Stop)
		dyn1, err := dynamic.NewForConfig(upConfig(filepath.Join(dir, "member1.kubeconfig")))
		Expect(err).NotTo(HaveOccurred())
		member1Record, err := framework.Record(ctx, dyn1, member1, deploymentRef("demo", "web"), "member1")
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(member1Record.Stop)

		By("step 1: nginx:1.26 walks through the stages by itself; status waits and exits 0")
		step1 := printedLines(out, `1\. Roll out nginx:1\.26; it walks through the stages by itself \(status waits until it completes, about a minute\):`)
		Expect(step1).To(HaveLen(2))
		run(step1[0])
		Expect(run(step1[1])).To(ContainSubstring("Completed (RolloutCompleted): revision 2 reached every stage"))
		Expect(watchImages()).To(Equal("member1: nginx:1.26\nmember2: nginx:1.26\n"))

		By("step 2: nginx:1.27-broken fails at the canary, which goes back to nginx:1.26; status exits 1")
		step2 := printedLines(out, `2\. Roll out nginx:1\.27-broken; only member1 gets it, .*`)
		Expect(step2).To(HaveLen(2))
		run(step2[0])
		said, code := runExit(step2[1])
		Expect(code).To(Equal(1), said)
		Expect(said).To(ContainSubstring("Rollout demo/web failed at revision 3: stage 'canary' failed"))
		Eventually(image(member1), time.Minute).Should(Equal("nginx:1.26"))
		Expect(said).To(MatchRegexp(`(?m)^member1 +canary +RolledBack +2 `))
		Expect(stored(member2Record, framework.Image)).NotTo(ContainElement("nginx:1.27-broken"), "member2 got the broken version")

		By("step 3: undo writes nginx:1.26 back; it rolls out again and completes")
		step3 := printedLines(out, `3\. Undo: the template goes back to nginx:1\.26 as the last revision had it, and rolls out again:`)
		Expect(step3).To(HaveLen(2))
		Expect(run(step3[0])).To(ContainSubstring("Deployment demo/web written back as revision 2 had them"))
		Expect(run(step3[1])).To(ContainSubstring("Completed (RolloutCompleted): revision 4 reached every stage"))

		By("step 4: nginx:1.28, paused while the canary soaks: member2 stays on nginx:1.26")
		step4 := printedLines(out, `4\. Roll out nginx:1\.28 and pause it while member1 soaks; .*`)
		Expect(step4).To(HaveLen(3))
		run(step4[0])
		Eventually(func() string { o, _ := runExit(statusOnce); return o }, time.Minute).Should(
			ContainSubstring("StageSoaking"), "the canary soaks")
		Expect(run(step4[1])).To(ContainSubstring(`Rollout demo/web paused: "checking the canary"`))
		Expect(run(step4[2])).To(ContainSubstring("Paused (Suspended)"))
		Eventually(watchWorks, time.Minute).Should(MatchRegexp(`(?m)^karmada-es-member2 +web-\S+ +RolloutStage$`))
		By("logging, at --v=1, that member2's Work is held by the Rollout")
		Eventually(func() string {
			raw, _ := os.ReadFile(filepath.Join(dir, "federator.log"))
			return string(raw)
		}).Should(MatchRegexp(`"msg":"held: RolloutStage: held by Rollout demo/web: .*"controller":"dispatch-member2"`))
		// Longer than the soak: paused, the soak clock stands still.
		time.Sleep(35 * time.Second)
		Expect(watchImages()).To(Equal("member1: nginx:1.28\nmember2: nginx:1.26\n"))

		By("step 5: resume; the soak goes on and member2 gets nginx:1.28")
		step5 := printedLines(out, `5\. Resume: the soak goes on where it stopped, then member2 follow:`)
		Expect(step5).To(HaveLen(2))
		Expect(run(step5[0])).To(ContainSubstring("Rollout demo/web resumed"))
		Expect(run(step5[1])).To(ContainSubstring("Completed (RolloutCompleted): revision 5 reached every stage"))
		Eventually(watchRollout, 2*time.Minute).Should(And(
			rolloutRow("member1", "Applied", "2/2", "nginx:1.28"), rolloutRow("member2", "Applied", "2/2", "nginx:1.28")))
		Expect(stored(member2Record, framework.Image)).NotTo(ContainElement("nginx:1.27-broken"))

		if withPrometheus {
			By("step 6: nginx:1.29 becomes ready in member1 but serves 20% errors: the canary's analysis on the fleet's Prometheus fails, member1 goes back to nginx:1.28, member2 never stores it")
			step6 := printedLines(out, `6\. Make nginx:1\.29 fail 20% of its requests in member1 .*`)
			Expect(step6).To(HaveLen(4))
			run(step6[0])
			run(step6[1])
			run(step6[2])
			said, code := runExit(step6[3])
			Expect(code).To(Equal(1), said)
			Expect(said).To(ContainSubstring("Rollout demo/web failed at revision 6: stage 'canary' failed"))
			// Its ANALYSIS column: the verdict, by the real Prometheus's value.
			Expect(said).To(MatchRegexp(`(?m)^member1 +canary +RolledBack +5 +\S+ +Failed 0 ok 1 failed 0 inconclusive, last Failed \[0\.(19|2)\d*\] `))
			// Its message keeps why it failed.
			Expect(said).To(ContainSubstring("it had failed: analysis failed at revision 6"))
			Eventually(image(member1), time.Minute).Should(Equal("nginx:1.28"))
			Expect(stored(member1Record, framework.Image)).To(ContainElement("nginx:1.29"), "member1 never ran the version its analysis judged")
			Expect(stored(member2Record, framework.Image)).NotTo(ContainElement("nginx:1.29"), "member2 got the version that failed the canary's analysis")
		}

		By("running kube-apiserver, etcd and kube-controller-manager as federator's children, one per cluster")
		var comms []string
		for _, p := range children {
			comms = append(comms, p.comm)
		}
		// /proc/PID/comm keeps 15 characters: kube-controller-manager reads
		// "kube-controller".
		for _, comm := range []string{"kube-apiserver", "etcd", "kube-controller"} {
			Expect(countOf(comms, comm)).To(Equal(3), "%s processes among %v (hub, member1, member2)", comm, comms)
		}

		By("stopping on SIGTERM: exit 0, every child gone, kubeconfigs removed")
		session.Terminate()
		Eventually(session, time.Minute).Should(gexec.Exit(0))
		Expect(string(session.Out.Contents())).To(ContainSubstring("federator: fleet stopped"))
		for _, p := range children {
			Eventually(p.alive, "5s").Should(BeFalse(), "%s (pid %d) after federator exited", p.comm, p.pid)
		}
		for _, name := range []string{"hub", "member1", "member2"} {
			Expect(filepath.Join(dir, name+".kubeconfig")).NotTo(BeAnExistingFile())
		}
	})

	It("refuses a fleet without members, naming the flag, and starts nothing", func() {
		for _, n := range []string{"0", "-1"} {
			dir := filepath.Join(GinkgoT().TempDir(), "fleet")
			session, err := gexec.Start(exec.Command(federator, "up", "--members", n, "--dir", dir, "--bin-dir", repoBin),
				GinkgoWriter, GinkgoWriter)
			Expect(err).NotTo(HaveOccurred())
			Eventually(session, 30*time.Second).Should(gexec.Exit())
			Expect(session.ExitCode()).NotTo(Equal(0), "--members %s", n)
			Expect(string(session.Err.Contents())).To(ContainSubstring("--members"))
			Expect(dir).NotTo(BeADirectory(), "--members %s", n)
		}
	})
})

func upClient(kubeconfig string) client.Client {
	GinkgoHelper()
	c, err := client.New(upConfig(kubeconfig), client.Options{Scheme: policy.NewScheme()})
	Expect(err).NotTo(HaveOccurred())
	return c
}

func upConfig(kubeconfig string) *rest.Config {
	GinkgoHelper()
	Expect(kubeconfig).To(BeAnExistingFile())
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	Expect(err).NotTo(HaveOccurred())
	return cfg
}

// printedLines are the commands printed under the step titled title.
func printedLines(out, title string) []string {
	GinkgoHelper()
	m := regexp.MustCompile(`(?m)^` + title + `\n((?:  .+\n)+)`).FindStringSubmatch(out)
	Expect(m).To(HaveLen(2), "printed commands after %q", title)
	var lines []string
	for _, l := range strings.Split(strings.TrimRight(m[1], "\n"), "\n") {
		lines = append(lines, strings.TrimPrefix(l, "  "))
	}
	return lines
}

func clusterReadyWithVersion(name, version string) OmegaMatcher {
	return And(
		HaveField("ObjectMeta.Name", name),
		HaveField("Status.KubernetesVersion", version),
		WithTransform(func(c clusterv1alpha1.Cluster) bool {
			return meta.IsStatusConditionTrue(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
		}, BeTrue()))
}

func countOf(items []string, item string) int {
	n := 0
	for _, i := range items {
		if i == item {
			n++
		}
	}
	return n
}

// fleetProcess identifies a process beyond its pid: a pid can be reused,
// its start time (in clock ticks since boot) tells the reuse apart.
type fleetProcess struct {
	pid   int
	comm  string
	start string
}

func (p fleetProcess) alive() bool {
	_, start, ok := readProcStat(p.pid)
	return ok && start == p.start
}

// readProcStat reads a process's parent pid and start time from
// /proc/PID/stat.
func readProcStat(pid int) (ppid int, start string, ok bool) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, "", false
	}
	// "pid (comm) state ppid ...": comm may hold spaces and parentheses.
	s := string(data)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	// fields[0] is stat field 3 (state); ppid is field 4, starttime field 22.
	if len(fields) < 20 {
		return 0, "", false
	}
	ppid, err = strconv.Atoi(fields[1])
	if err != nil {
		return 0, "", false
	}
	return ppid, fields[19], true
}

// descendantProcesses are root's children, their children, and so on.
func descendantProcesses(root int) []fleetProcess {
	GinkgoHelper()
	entries, err := os.ReadDir("/proc")
	Expect(err).NotTo(HaveOccurred())
	children := map[int][]int{}
	starts := map[int]string{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, start, ok := readProcStat(pid); ok {
			children[ppid] = append(children[ppid], pid)
			starts[pid] = start
		}
	}
	var out []fleetProcess
	queue := append([]int(nil), children[root]...)
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
		if err != nil {
			continue // exited meanwhile
		}
		out = append(out, fleetProcess{pid: pid, comm: strings.TrimSpace(string(comm)), start: starts[pid]})
		queue = append(queue, children[pid]...)
	}
	return out
}

// stopUpSession is the safety net when a spec fails midway: federator gets
// the same SIGTERM a user sends; only if it does not stop are the processes
// it started killed, so none outlives the suite.
func stopUpSession(session *gexec.Session, children []fleetProcess) {
	if session.ExitCode() == -1 {
		session.Terminate()
		select {
		case <-session.Exited:
		case <-time.After(90 * time.Second):
		}
	}
	if session.ExitCode() == -1 {
		children = append(children, descendantProcesses(session.Command.Process.Pid)...)
		session.Kill().Wait(10 * time.Second)
	}
	for _, p := range children {
		if p.alive() {
			_ = syscall.Kill(p.pid, syscall.SIGKILL)
		}
	}
}
