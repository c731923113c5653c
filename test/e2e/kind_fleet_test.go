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

// noDockerNeeded ends every line `federator up --provider kind` prints
// about what the machine lacks.
const noDockerNeeded = "or run `federator up` without --provider kind, which needs no Docker"

// dockerLeftovers lists containers and images with label, as docker prints them.
func dockerLeftovers(label string) string {
	GinkgoHelper()
	var out []string
	for _, list := range [][]string{{"ps", "--all"}, {"images"}} {
		got, err := exec.Command("docker", append(list, "--quiet", "--filter", "label="+label)...).CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), "docker %s: %s", list[0], got)
		if s := strings.TrimSpace(string(got)); s != "" {
			out = append(out, list[0]+": "+s)
		}
	}
	return strings.Join(out, "; ")
}

// kindProblems are what kind clusters lack on this machine (nothing where
// they run), as kindfleet's preflight finds them for kind's default image.
func kindProblems() []string {
	GinkgoHelper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	err := kindfleet.Preflight(ctx, kindfleet.ResolveNodeImage(ctx, ""))
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
		if _, err := exec.LookPath("docker"); err != nil {
			Skip("no docker command on PATH: kind fleets need Docker")
		}
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

	It("says that no Docker daemon answers, in one line, and leaves nothing", func() {
		dir := filepath.Join(GinkgoT().TempDir(), "fleet")
		session := upKind([]string{"DOCKER_HOST=unix://" + filepath.Join(GinkgoT().TempDir(), "absent.sock")},
			"--members", "2", "--dir", dir)
		Expect(session.ExitCode()).To(Equal(1))
		Expect(string(session.Err.Contents())).To(MatchRegexp(
			`^federator: --provider kind cannot run on this machine:\n  no Docker daemon answers \(docker version: [^\n]*absent\.sock[^\n]*\); start Docker or point DOCKER_HOST at a daemon, %s\n$`,
			regexp.QuoteMeta(noDockerNeeded)))
		Expect(dir).NotTo(BeAnExistingFile())
	})

	It("says what this machine's Docker lacks, one line each, and leaves nothing", func() {
		if out, err := exec.Command("docker", "version", "--format", "{{.Server.Version}}").CombinedOutput(); err != nil {
			Skip(fmt.Sprintf("no Docker daemon answers (%s): the spec above covers that", strings.TrimSpace(string(out))))
		}
		problems := kindProblems()
		if len(problems) == 0 {
			Skip("kind clusters run here: the kind fleet spec covers this machine")
		}
		dir := filepath.Join(GinkgoT().TempDir(), "fleet")
		session := upKind(nil, "--members", "2", "--dir", dir)
		Expect(session.ExitCode()).To(Equal(1))
		want := []string{"federator: --provider kind cannot run on this machine:"}
		for _, p := range problems {
			Expect(p).To(HaveSuffix(noDockerNeeded), "every problem says that the local fleet needs no Docker")
			want = append(want, "  "+p)
		}
		Expect(strings.Split(strings.TrimSuffix(string(session.Err.Contents()), "\n"), "\n")).To(Equal(want),
			"a heading, then each problem on a line of its own")
		By("leaving no directory, probe container or image, and no kind node")
		Expect(dir).NotTo(BeAnExistingFile())
		Expect(dockerLeftovers("dev.federator.preflight")).To(BeEmpty())
		Expect(dockerLeftovers("io.x-k8s.kind.cluster=federator-hub")).To(BeEmpty())
	})

	It("makes a fleet of kind clusters whose hub keeps Deployments as templates, and deletes it on SIGTERM", func() {
		if problems := kindProblems(); len(problems) > 0 {
			Skip("kind clusters cannot run on this machine: " + strings.Join(problems, "; "))
		}
		prefix := fmt.Sprintf("e2e-up-%d", GinkgoParallelProcess())
		dir := GinkgoT().TempDir()
		session, err := gexec.Start(exec.Command(federator, "up", "--provider", "kind", "--members", "2", "--dir", dir,
			"--kind-prefix", prefix), GinkgoWriter, GinkgoWriter)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() {
			if session.ExitCode() == -1 {
				session.Terminate().Wait(5 * time.Minute)
			}
			// Whatever happened, no kind node of this fleet may remain.
			Expect(dockerLeftovers("io.x-k8s.kind.cluster=" + prefix + "-hub")).To(BeEmpty())
		})
		Eventually(session.Out, 15*time.Minute).Should(gbytes.Say(`federator: ready: hub and 2 members`))

		hub := upClient(filepath.Join(dir, "hub.kubeconfig"))
		By("registering member1 and member2 as Ready Clusters")
		Eventually(func(g Gomega) {
			clusters := &clusterv1alpha1.ClusterList{}
			g.Expect(hub.List(ctx, clusters)).To(Succeed())
			g.Expect(clusters.Items).To(HaveLen(2))
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
		Expect(member1.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns.Name}})).To(Succeed())
		Expect(member1.Create(ctx, memberDeploy)).To(Succeed())
		Eventually(func() ([]appsv1.ReplicaSet, error) {
			list := &appsv1.ReplicaSetList{}
			return list.Items, member1.List(ctx, list, client.InNamespace(ns.Name))
		}, time.Minute).ShouldNot(BeEmpty())
		hubReplicaSets := &appsv1.ReplicaSetList{}
		Expect(hub.List(ctx, hubReplicaSets, client.InNamespace(ns.Name))).To(Succeed())
		Expect(hubReplicaSets.Items).To(BeEmpty())

		By("deleting every kind cluster of the fleet on SIGTERM")
		session.Terminate()
		Eventually(session, 5*time.Minute).Should(gexec.Exit(0))
		for _, name := range kindfleet.FleetNames(2) {
			Expect(dockerLeftovers("io.x-k8s.kind.cluster=" + kindfleet.ClusterName(prefix, name))).To(BeEmpty())
		}
		Expect(filepath.Join(dir, "hub.kubeconfig")).NotTo(BeAnExistingFile())
	})
})
