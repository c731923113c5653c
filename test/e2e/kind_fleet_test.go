package e2e

import (
	"context"
	"errors"
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
	"github.com/onsi/gomega/gbytes"
	"github.com/onsi/gomega/gexec"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/federator-dev/federator/pkg/kindfleet"
)

// noEngineNeeded ends every line `federator up --provider kind` prints
// about what the machine lacks.
const noEngineNeeded = "or run `federator up` without --provider kind, which needs neither Docker nor podman"

// engineLeftovers lists containers and images with label, as docker and
// podman (those installed) print them.
func engineLeftovers(label string) string {
	GinkgoHelper()
	var out []string
	for _, engine := range []string{"docker", "podman"} {
		if _, err := exec.LookPath(engine); err != nil {
			continue
		}
		for _, list := range [][]string{{"ps", "--all"}, {"images"}} {
			got, err := exec.Command(engine, append(list, "--quiet", "--filter", "label="+label)...).CombinedOutput()
			if engine == "docker" && err != nil && strings.Contains(string(got), "Cannot connect") {
				continue // no daemon: nothing of it left
			}
			Expect(err).NotTo(HaveOccurred(), "%s %s: %s", engine, list[0], got)
			if s := strings.TrimSpace(string(got)); s != "" {
				out = append(out, engine+" "+list[0]+": "+s)
			}
		}
	}
	return strings.Join(out, "; ")
}

// kindProblems are what kind clusters of clusters clusters lack on this
// machine (nothing where they run), as `federator up --provider kind`
// finds them: the engine it picks, the node image it would use.
func kindProblems(clusters int) []string {
	GinkgoHelper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	engine, _, err := kindfleet.ChooseEngine(ctx, kindfleet.EngineAuto)
	if err == nil {
		err = kindfleet.Preflight(ctx, engine, kindfleet.ResolveNodeImage(ctx, engine, ""), clusters)
	}
	if err == nil {
		return nil
	}
	var preflight *kindfleet.PreflightError
	Expect(errors.As(err, &preflight)).To(BeTrue(), "preflight failed otherwise: %v", err)
	return preflight.Problems
}

var _ = Describe("federator up --provider kind", func() {
	var federator string
	BeforeEach(func() {
		federator = federatorBinary()
	})

	// upKind runs `federator up --provider kind` with args and env and
	// waits for it to exit.
	upKind := func(env []string, args ...string) *gexec.Session {
		GinkgoHelper()
		cmd := exec.Command(federator, append([]string{"up", "--provider", "kind"}, args...)...)
		cmd.Env = append(os.Environ(), env...)
		session, err := gexec.Start(cmd, GinkgoWriter, GinkgoWriter)
		Expect(err).NotTo(HaveOccurred())
		Eventually(session, 5*time.Minute).Should(gexec.Exit())
		return session
	}

	It("with --engine docker, says that no Docker daemon answers, in one line, and leaves nothing", func() {
		if _, err := exec.LookPath("docker"); err != nil {
			Skip("no docker command on PATH")
		}
		dir := filepath.Join(GinkgoT().TempDir(), "fleet")
		session := upKind([]string{"DOCKER_HOST=unix://" + filepath.Join(GinkgoT().TempDir(), "absent.sock")},
			"--members", "2", "--dir", dir, "--engine", "docker")
		Expect(session.ExitCode()).To(Equal(1))
		lines := strings.Split(strings.TrimSuffix(string(session.Err.Contents()), "\n"), "\n")
		Expect(lines[0]).To(Equal("federator: --provider kind cannot run on this machine:"))
		Expect(lines[1:]).NotTo(BeEmpty())
		Expect(lines[1]).To(MatchRegexp(
			`^  no Docker daemon answers \(docker version: [^\n]*absent\.sock[^\n]*\); start Docker or point DOCKER_HOST at a daemon, %s$`,
			regexp.QuoteMeta(noEngineNeeded)))
		// What else this machine lacks for kind (no /lib/modules, too few
		// inotify instances while other fleets run) follows, a line each;
		// the daemon is said once.
		for _, l := range lines[2:] {
			Expect(l).To(And(HavePrefix("  "), HaveSuffix(noEngineNeeded), Not(ContainSubstring("Docker daemon"))))
		}
		Expect(dir).NotTo(BeAnExistingFile())
	})

	// Serial: what the machine lacks includes inotify instances, which
	// the fleets of other parallel processes take and give back meanwhile.
	It("says what this machine lacks for kind, one line each, and leaves nothing", Serial, func() {
		problems := kindProblems(3)
		if len(problems) == 0 {
			Skip("kind clusters run here: the kind fleet spec covers this machine")
		}
		dir := filepath.Join(GinkgoT().TempDir(), "fleet")
		session := upKind(nil, "--members", "2", "--dir", dir)
		Expect(session.ExitCode()).To(Equal(1))
		want := []string{"federator: --provider kind cannot run on this machine:"}
		for _, p := range problems {
			Expect(p).To(HaveSuffix(noEngineNeeded), "every problem says that the local fleet needs no Docker")
			want = append(want, "  "+p)
		}
		Expect(strings.Split(strings.TrimSuffix(string(session.Err.Contents()), "\n"), "\n")).To(Equal(want),
			"a heading, then each problem on a line of its own")
		By("leaving no directory, probe container or image, and no kind node")
		Expect(dir).NotTo(BeAnExistingFile())
		Expect(engineLeftovers("dev.federator.preflight")).To(BeEmpty())
		Expect(engineLeftovers("io.x-k8s.kind.cluster=federator-hub")).To(BeEmpty())
	})

	It("makes a fleet of kind clusters whose hub keeps Deployments as templates, runs the sample's staged rollout on real pods, and deletes it on SIGTERM", func() {
		if problems := kindProblems(4); len(problems) > 0 {
			Skip("kind clusters cannot run on this machine: " + strings.Join(problems, "; "))
		}
		prefix := fmt.Sprintf("e2e-up-%d", GinkgoParallelProcess())
		dir := GinkgoT().TempDir()
		began := time.Now()
		session, err := gexec.Start(exec.Command(federator, "up", "--provider", "kind", "--members", "3", "--dir", dir,
			"--kind-prefix", prefix, "--sample"), GinkgoWriter, GinkgoWriter)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() {
			if session.ExitCode() == -1 {
				session.Terminate().Wait(5 * time.Minute)
			}
			// Whatever happened, no kind node of this fleet may remain.
			for _, name := range kindfleet.FleetNames(3) {
				Expect(engineLeftovers("io.x-k8s.kind.cluster=" + kindfleet.ClusterName(prefix, name))).To(BeEmpty())
			}
		})
		Eventually(session.Out, 15*time.Minute).Should(gbytes.Say(`federator: ready: hub and 3 members`))
		GinkgoWriter.Printf("kind fleet of a hub and 3 members ready in %s\n", time.Since(began).Round(time.Second))

		hub := upClient(filepath.Join(dir, "hub.kubeconfig"))
		By("registering member1..3 as Ready Clusters")
		Eventually(func(g Gomega) {
			clusters := &clusterv1alpha1.ClusterList{}
			g.Expect(hub.List(ctx, clusters)).To(Succeed())
			g.Expect(clusters.Items).To(HaveLen(3))
			for _, c := range clusters.Items {
				g.Expect(c.Status.Conditions).To(ContainElement(And(
					HaveField("Type", clusterv1alpha1.ClusterConditionReady), HaveField("Status", metav1.ConditionTrue))))
			}
		}, 2*time.Minute).Should(Succeed())

		By("keeping a Deployment on the hub a template: its kube-controller-manager runs no deployment controller")
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kind-template"}}
		Expect(hub.Create(ctx, ns)).To(Succeed())
		labels := map[string]string{"app": "web"}
		deploy := &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "web"},
			Spec: appsv1.DeploymentSpec{
				Replicas: ptr.To[int32](1),
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "registry.invalid/web:v1"}}},
				},
			},
		}
		Expect(hub.Create(ctx, deploy)).To(Succeed())
		// The member's own controllers make ReplicaSets within seconds; the
		// hub's never do.
		member1 := upClient(filepath.Join(dir, "member1.kubeconfig"))
		memberDeploy := deploy.DeepCopy()
		memberDeploy.ResourceVersion = ""
		// The hub's namespace sync may have made it already.
		Expect(client.IgnoreAlreadyExists(member1.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns.Name}}))).To(Succeed())
		Expect(member1.Create(ctx, memberDeploy)).To(Succeed())
		Eventually(func() ([]appsv1.ReplicaSet, error) {
			list := &appsv1.ReplicaSetList{}
			return list.Items, member1.List(ctx, list, client.InNamespace(ns.Name))
		}, time.Minute).ShouldNot(BeEmpty())
		hubReplicaSets := &appsv1.ReplicaSetList{}
		Expect(hub.List(ctx, hubReplicaSets, client.InNamespace(ns.Name))).To(Succeed())
		Expect(hubReplicaSets.Items).To(BeEmpty())

		out := string(session.Out.Contents())
		if !strings.Contains(out, "loading "+strings.Join(kindfleet.WorkloadImages, ", ")) {
			By("skipping the staged rollout: Docker has not every workload image (make workload-image)")
		} else {
			kindStagedRollout(out)
		}

		By("deleting every kind cluster of the fleet on SIGTERM")
		session.Terminate()
		Eventually(session, 5*time.Minute).Should(gexec.Exit(0))
		for _, name := range kindfleet.FleetNames(3) {
			Expect(engineLeftovers("io.x-k8s.kind.cluster=" + kindfleet.ClusterName(prefix, name))).To(BeEmpty())
		}
		Expect(filepath.Join(dir, "hub.kubeconfig")).NotTo(BeAnExistingFile())
	})
})

// kindStagedRollout follows the first two printed steps of the sample's
// staged rollout on kind members, whose nodes run federator/web for real:
// a good version walks through the stages with every pod ready; a -broken
// one fails at the canary because its pods' readiness probe fails, the
// canary is rolled back, and the other members never get it.
func kindStagedRollout(out string) {
	GinkgoHelper()
	root, err := filepath.Abs("../..")
	Expect(err).NotTo(HaveOccurred())
	// The printed kubectl commands run the kubectl of make binaries.
	path := "PATH=" + filepath.Join(root, "bin") + ":" + os.Getenv("PATH")
	run := func(command string) (string, int) {
		GinkgoHelper()
		cmd := exec.Command("bash", "-c", command)
		cmd.Env = append(os.Environ(), path)
		output, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return string(output), exit.ExitCode()
		}
		Expect(err).NotTo(HaveOccurred(), "printed command %q: %s", command, output)
		return string(output), 0
	}
	getRollout := regexp.MustCompile(`(?m)^  (\S+ get rollout web -n demo --fleet .*)$`).FindStringSubmatch(out)
	Expect(getRollout).To(HaveLen(2), "a printed get rollout command")
	rolloutRow := func(member, state, ready, image string) OmegaMatcher {
		return MatchRegexp(`(?m)^Deployment/web +%s +%s +\S+ +%s +%s +`, member, state, regexp.QuoteMeta(ready), regexp.QuoteMeta(image))
	}
	web := func(tag string) string { return kindfleet.WebRepository + ":" + tag }

	By("running the sample's federator/web:1.25 with every pod ready in every member")
	Eventually(func() string { o, _ := run(getRollout[1]); return o }, 3*time.Minute, 2*time.Second).Should(And(
		rolloutRow("member1", "Applied", "2/2", web("1.25")), rolloutRow("member2", "Applied", "2/2", web("1.25")),
		rolloutRow("member3", "Applied", "2/2", web("1.25"))))

	By("step 1: federator/web:1.26 walks through the stages; status waits and exits 0")
	step1 := printedLines(out, `1\. Roll out `+regexp.QuoteMeta(web("1.26"))+`; it walks through the stages by itself .*`)
	Expect(step1).To(HaveLen(2))
	began := time.Now()
	run(step1[0])
	said, code := run(step1[1])
	Expect(code).To(Equal(0), said)
	Expect(said).To(ContainSubstring("Completed (RolloutCompleted): revision 2 reached every stage"))
	GinkgoWriter.Printf("step 1 (a good version through both stages, 30 s soak) took %s\n", time.Since(began).Round(time.Second))
	Eventually(func() string { o, _ := run(getRollout[1]); return o }, time.Minute, 2*time.Second).Should(And(
		rolloutRow("member1", "Applied", "2/2", web("1.26")), rolloutRow("member3", "Applied", "2/2", web("1.26"))))

	By("step 2: federator/web:1.27-broken never becomes ready at the canary; the rollout fails and puts member1 back")
	step2 := printedLines(out, `2\. Roll out `+regexp.QuoteMeta(web("1.27-broken"))+`; only member1 gets it, .*`)
	Expect(step2).To(HaveLen(2))
	began = time.Now()
	run(step2[0])
	said, code = run(step2[1])
	Expect(code).To(Equal(1), said)
	Expect(said).To(ContainSubstring("Rollout demo/web failed at revision 3: stage 'canary' failed"))
	Expect(said).To(MatchRegexp(`(?m)^member1 +canary +RolledBack +2 `))
	GinkgoWriter.Printf("step 2 (a broken version failed and rolled back at the canary) took %s\n", time.Since(began).Round(time.Second))
	By("member1 back on federator/web:1.26 with every pod ready; member2 and member3 never left it")
	watchImages := regexp.MustCompile(`(?m)^  (for m in .*)$`).FindStringSubmatch(out)
	Expect(watchImages).To(HaveLen(2), "a printed command that shows each member's image")
	Eventually(func() string { o, _ := run(watchImages[1]); return o }, time.Minute, 2*time.Second).Should(Equal(
		"member1: " + web("1.26") + "\nmember2: " + web("1.26") + "\nmember3: " + web("1.26") + "\n"))
	// The template holds the broken version the rollout stopped, so get
	// rollout shows no applied image; READY is still the member's own count.
	ready := func(member string) OmegaMatcher {
		return MatchRegexp(`(?m)^Deployment/web +%s +\S+ +\S+ +2/2 `, member)
	}
	Eventually(func() string { o, _ := run(getRollout[1]); return o }, 2*time.Minute, 2*time.Second).Should(And(
		ready("member1"), ready("member2"), ready("member3")))
}
