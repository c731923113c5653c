package e2e

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/federator-dev/federator/config/install"
	"github.com/federator-dev/federator/config/samples"
	"github.com/federator-dev/federator/pkg/fleet"
	"github.com/federator-dev/federator/pkg/kindfleet"
	"github.com/federator-dev/federator/pkg/yamldocs"
)

// A hub that keeps Deployments as templates cannot run the controller's
// Deployment, so, as Karmada's controllers run beside karmada-apiserver in
// a host cluster, the installed controller runs in another kind cluster
// (here member1, an ordinary cluster) and reaches the kind hub and the
// members across the engine's network.
var _ = Describe("federator install into kind clusters", func() {
	It("runs the image's two replicas in a host cluster against a kind hub, joins members with federator join, and takes the sample's staged rollout through real pods, the leader's pod deleted mid-way", func() {
		if problems := kindProblems(3); len(problems) > 0 {
			Skip("kind clusters cannot run on this machine: " + strings.Join(problems, "; "))
		}
		if missing := kindfleet.MissingDockerImages(ctx, kindfleet.WorkloadImages); len(missing) > 0 {
			Skip("Docker lacks the workload images " + strings.Join(missing, ", ") + " the sample runs on real pods: make workload-image builds them")
		}
		image := buildImage()
		prefix := fmt.Sprintf("e2e-install-%d", GinkgoParallelProcess())
		dir := GinkgoT().TempDir()
		began := time.Now()
		f, err := kindfleet.Start(ctx, kindfleet.Options{Dir: dir, Members: 2, Prefix: prefix}, GinkgoWriter)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() {
			Expect(f.Stop()).To(Succeed())
			for _, name := range kindfleet.FleetNames(2) {
				Expect(engineLeftovers("io.x-k8s.kind.cluster=" + kindfleet.ClusterName(prefix, name))).To(BeEmpty())
			}
		})
		GinkgoWriter.Printf("kind hub and 2 members ready in %s\n", time.Since(began).Round(time.Second))
		host := f.Members[0]
		Expect(f.LoadImages(ctx, host.Name, image)).To(Succeed())

		// What pods of one kind cluster reach another at: the node's
		// address on the engine's network, which this machine reaches too.
		networkKubeconfig := func(e fleet.Endpoint) (path, server string) {
			GinkgoHelper()
			server, err := f.NetworkServer(e.Name)
			Expect(err).NotTo(HaveOccurred())
			cfg := rest.CopyConfig(e.Config)
			cfg.Host = server
			path = filepath.Join(dir, e.Name+"-network.kubeconfig")
			Expect(fleet.WriteKubeconfig(path, e.Name, cfg)).To(Succeed())
			return path, server
		}
		_, hubServer := networkKubeconfig(f.Hub)

		By("installing: the API and the controller's rights on the hub, the Deployment on the host")
		installed := federatorRun(4*time.Minute, "install", "--kubeconfig", f.Hub.KubeconfigPath, "--host-kubeconfig", host.KubeconfigPath,
			"--hub-server", hubServer, "--image", image, "--timeout=3m")
		Expect(installed).To(ContainSubstring("Deployment federator-system/federator-controller applied (host)"))
		Expect(installed).To(ContainSubstring("is Available: 2/2 replicas ready"))
		hub := upClient(f.Hub.KubeconfigPath)
		hostClient := upClient(host.KubeconfigPath)
		Expect(apierrors.IsNotFound(hub.Get(ctx, client.ObjectKey{Namespace: install.Namespace, Name: install.DeploymentName}, &appsv1.Deployment{}))).To(BeTrue(),
			"the hub got the controller's Deployment: it would sit there as a template")

		By("one replica leading through the Lease on the hub, both ready")
		pods := controllerPods(hostClient)
		Expect(pods).To(HaveLen(2))
		leader := holderPod(hub)
		Expect(leader).To(BeElementOf(pods), "the Lease's holder is one of the host's pods")

		By("joining both members at their network addresses")
		for _, m := range f.Members {
			kubeconfig, _ := networkKubeconfig(m)
			joined := federatorRun(3*time.Minute, "join", m.Name, "--kubeconfig", kubeconfig, "--hub-kubeconfig", f.Hub.KubeconfigPath, "--timeout=2m")
			Expect(joined).To(ContainSubstring("cluster " + m.Name + " is Ready"))
		}

		By("running the sample's federator/web:1.25 on real pods in both members")
		sample, err := samples.ForRealContainers(samples.Rollout, kindfleet.WebRepository)
		Expect(err).NotTo(HaveOccurred())
		Expect(yamldocs.Apply(ctx, hub, sample, client.FieldOwner("e2e"))).To(Succeed())
		Expect(yamldocs.Apply(ctx, hub, samples.Stages, client.FieldOwner("e2e"))).To(Succeed())
		members := map[string]client.Client{}
		for _, m := range f.Members {
			members[m.Name] = upClient(m.KubeconfigPath)
		}
		web := func(tag string) string { return kindfleet.WebRepository + ":" + tag }
		for name, c := range members {
			Eventually(func() string { return readyImage(c) }, 4*time.Minute, 2*time.Second).Should(Equal(web("1.25")), "member %s", name)
		}

		By("rolling out federator/web:1.26; deleting the leader's pod once the canary has it")
		Expect(kubectlOn(f.Hub.KubeconfigPath, "-n", "demo", "set", "image", "deployment/web", "web="+web("1.26"))).To(Succeed())
		Eventually(func() string { return readyImage(members["member1"]) }, 2*time.Minute, time.Second).Should(Equal(web("1.26")))
		Expect(readyImage(members["member2"])).To(Equal(web("1.25")), "member2 got 1.26 before the canary's soak")
		Expect(hostClient.Delete(ctx, podNamed(leader))).To(Succeed())
		Eventually(func() string { return holderPod(hub) }, time.Minute, time.Second).Should(And(Not(Equal(leader)), Not(BeEmpty())),
			"the standby takes the Lease the deleted leader released")
		status := federatorRun(4*time.Minute, "rollout", "status", "web", "-n", "demo", "--kubeconfig", f.Hub.KubeconfigPath, "--timeout=3m")
		Expect(status).To(ContainSubstring("Completed (RolloutCompleted): revision 2 reached every stage"))
		// Completed once the last stage is released; its pods then start.
		for name, c := range members {
			Eventually(func() string { return readyImage(c) }, 2*time.Minute, 2*time.Second).Should(Equal(web("1.26")), "member %s", name)
		}

		By("uninstalling from both clusters")
		removed := federatorRun(2*time.Minute, "uninstall", "--kubeconfig", f.Hub.KubeconfigPath, "--host-kubeconfig", host.KubeconfigPath)
		Expect(removed).To(ContainSubstring("Deployment federator-system/federator-controller deleted (host)"))
		Expect(removed).To(ContainSubstring("Secret federator-system/federator-hub-kubeconfig deleted (host)"))
		Expect(apierrors.IsNotFound(hostClient.Get(ctx, client.ObjectKey{Namespace: install.Namespace, Name: install.DeploymentName}, &appsv1.Deployment{}))).To(BeTrue())
	})
})

// federatorRun runs the federator binary with args, waits up to timeout
// for it to exit 0, and returns what it printed.
func federatorRun(timeout time.Duration, args ...string) string {
	GinkgoHelper()
	session, err := gexec.Start(exec.Command(federatorBinary(), args...), GinkgoWriter, GinkgoWriter)
	Expect(err).NotTo(HaveOccurred())
	Eventually(session, timeout).Should(gexec.Exit(), "federator %s", strings.Join(args, " "))
	Expect(session.ExitCode()).To(Equal(0), "federator %s: %s", strings.Join(args, " "), session.Err.Contents())
	return string(session.Out.Contents())
}

// kubectlOn runs bin/kubectl with args against the cluster of kubeconfig.
func kubectlOn(kubeconfig string, args ...string) error {
	out, err := exec.Command(filepath.Join(binDir, "kubectl"), append(args, "--kubeconfig", kubeconfig)...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, out)
	}
	return nil
}

// controllerPods are the names of the controller's running, ready pods.
func controllerPods(c client.Client) []string {
	GinkgoHelper()
	var names []string
	Eventually(func(g Gomega) {
		list := &corev1.PodList{}
		g.Expect(c.List(ctx, list, client.InNamespace(install.Namespace), client.MatchingLabels{"app.kubernetes.io/name": "federator"})).To(Succeed())
		names = nil
		for _, p := range list.Items {
			if p.DeletionTimestamp == nil && slices.ContainsFunc(p.Status.Conditions, func(c corev1.PodCondition) bool {
				return c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue
			}) {
				names = append(names, p.Name)
			}
		}
		g.Expect(names).To(HaveLen(2))
	}, time.Minute, time.Second).Should(Succeed())
	return names
}

// holderPod is the pod holding the controller's Lease on hub, "" when
// none does: controller-runtime's identity is HOSTNAME_UUID, and a pod's
// hostname is its name.
func holderPod(hub client.Client) string {
	pod, _, _ := strings.Cut(leaseHolder(hub)(), "_")
	return pod
}

func podNamed(name string) *corev1.Pod {
	p := &corev1.Pod{}
	p.Namespace, p.Name = install.Namespace, name
	return p
}

// readyImage is the image of the member's demo/web once every replica of
// its current spec is ready there, "" before.
func readyImage(c client.Client) string {
	d := &appsv1.Deployment{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "demo", Name: "web"}, d); err != nil {
		return ""
	}
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	if d.Status.ObservedGeneration < d.Generation || d.Status.UpdatedReplicas != want || d.Status.ReadyReplicas != want || d.Status.Replicas != want {
		return ""
	}
	return d.Spec.Template.Spec.Containers[0].Image
}
