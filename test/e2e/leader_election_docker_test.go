package e2e

import (
	"debug/elf"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/federator-dev/federator/pkg/fleet"
	"github.com/federator-dev/federator/pkg/hub"
)

// The image federator/federator (make image: FROM scratch, non-root) run as
// two containers, as two replicas of a Deployment would run, against a
// local fleet's hub: the same takeover as two processes, after `docker
// kill`, and the metrics served.
var _ = Describe("leader election in Docker", func() {
	It("runs the image as two containers, one with a kubeconfig, one as in a pod: one leads, `docker kill` of the leader mid-suspension hands over within the lease duration, no held version leaks, /metrics served", func() {
		if err := exec.Command("docker", "version").Run(); err != nil {
			Skip("needs a Docker daemon (docker version: " + err.Error() + ")")
		}
		image := buildImage()
		f, hubClient := separateFleet(1, false)
		// The container runs as UID 65532: it reads copies anyone may read.
		dir := GinkgoT().TempDir()
		Expect(os.Chmod(dir, 0o755)).To(Succeed())
		kubeconfig := filepath.Join(dir, "hub.kubeconfig")
		b, err := os.ReadFile(f.Hub.KubeconfigPath)
		Expect(err).NotTo(HaveOccurred())
		Expect(os.WriteFile(kubeconfig, b, 0o644)).To(Succeed())

		leader := containerReplica(image, "a", "-v", kubeconfig+":/etc/federator/hub.kubeconfig:ro",
			"--", "--kubeconfig", "/etc/federator/hub.kubeconfig")
		Eventually(leader.out, controllersStart).Should(ContainSubstring(controllersRunning))
		standby := containerReplica(image, "b", inCluster(f, hubClient, dir)...)
		killLeaderMidSuspension(f, hubClient, leader, standby)
	})
})

// inCluster is what a pod of federator's ServiceAccount in federator-system
// gets, as docker run flags: the Service's address in the environment, and
// the account's token, the cluster CA and the namespace mounted where
// client-go's in-cluster config reads them. The account may do anything.
func inCluster(f *fleet.Fleet, hubClient client.Client, dir string) []string {
	GinkgoHelper()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: hub.Namespace, Name: "federator"}}
	Expect(client.IgnoreAlreadyExists(hubClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: hub.Namespace}}))).To(Succeed())
	Expect(hubClient.Create(ctx, sa)).To(Succeed())
	Expect(hubClient.Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "federator-e2e"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: sa.Namespace, Name: sa.Name}}})).To(Succeed())
	token := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}
	Expect(hubClient.SubResource("token").Create(ctx, sa, token)).To(Succeed())
	account := filepath.Join(dir, "serviceaccount")
	Expect(os.Mkdir(account, 0o755)).To(Succeed())
	for file, content := range map[string][]byte{"token": []byte(token.Status.Token), "ca.crt": f.Hub.Config.CAData, "namespace": []byte(hub.Namespace)} {
		Expect(os.WriteFile(filepath.Join(account, file), content, 0o644)).To(Succeed())
	}
	endpoint, err := url.Parse(f.Hub.Config.Host)
	Expect(err).NotTo(HaveOccurred())
	return []string{"-e", "KUBERNETES_SERVICE_HOST=" + endpoint.Hostname(), "-e", "KUBERNETES_SERVICE_PORT=" + endpoint.Port(),
		"-v", account + ":/var/run/secrets/kubernetes.io/serviceaccount:ro"}
}

// buildImage builds the image as `make image` does, from this checkout's
// Dockerfile, tagged federator/federator:e2e, around the suite's own
// federator binary when it is static (the Makefile builds pure Go), else
// around one built as `make image` builds it: compiling every package
// again with other flags took 18 minutes of the suite's 2 cores beside
// three fleets.
func buildImage() string {
	GinkgoHelper()
	const image = "federator/federator:e2e"
	root, err := filepath.Abs("../..")
	Expect(err).NotTo(HaveOccurred())
	dir := GinkgoT().TempDir()
	Expect(os.Mkdir(filepath.Join(dir, "tmp"), 0o755)).To(Succeed())
	binary := federatorBinary()
	if !static(binary) {
		binary = filepath.Join(dir, "federator")
		build := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", binary, "./cmd/federator")
		build.Dir, build.Env = root, append(os.Environ(), "CGO_ENABLED=0")
		out, err := build.CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), string(out))
	} else {
		b, err := os.ReadFile(binary)
		Expect(err).NotTo(HaveOccurred())
		Expect(os.WriteFile(filepath.Join(dir, "federator"), b, 0o755)).To(Succeed())
	}
	want, err := exec.Command(binary, "version").CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), string(want))
	out, err := exec.Command("docker", "build", "-q", "-f", filepath.Join(root, "Dockerfile"), "-t", image, dir).CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), string(out))
	// The image is the spec's own: leave no image, tagged or dangling,
	// behind (registered before the containers' cleanups, so it runs after them).
	DeferCleanup(func() { _ = exec.Command("docker", "rmi", "-f", image).Run() })
	out, err = exec.Command("docker", "run", "--rm", image, "version").CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), string(out))
	Expect(string(out)).To(Equal(string(want)), "the image runs the binary put in it")
	return image
}

// static is whether the ELF binary at path needs no dynamic loader, so it
// runs in an image FROM scratch.
func static(path string) bool {
	f, err := elf.Open(path)
	if err != nil {
		return false
	}
	defer func() { _ = f.Close() }()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return false
		}
	}
	return true
}

// containerReplica runs image as `federator controller --leader-elect` in
// a container on the host's network, serving probes and metrics, with the
// docker run flags given and, after "--", controller flags; removed at the
// end of the spec.
func containerReplica(image, suffix string, args ...string) replica {
	GinkgoHelper()
	name := fmt.Sprintf("federator-e2e-%d-%s", os.Getpid(), suffix)
	probes, metrics := freeAddress(), freeAddress()
	dockerArgs, controllerArgs := args, []string(nil)
	if i := slices.Index(args, "--"); i >= 0 {
		dockerArgs, controllerArgs = args[:i], args[i+1:]
	}
	run := append(append([]string{"run", "-d", "--name", name, "--network", "host"}, dockerArgs...), image, "controller",
		"--health-probe-bind-address", probes, "--metrics-bind-address", metrics)
	out, err := exec.Command("docker", append(append(run, leaderElect...), controllerArgs...)...).CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), string(out))
	DeferCleanup(func() {
		logs, _ := exec.Command("docker", "logs", name).CombinedOutput()
		if CurrentSpecReport().Failed() {
			fmt.Fprintf(GinkgoWriter, "container %s:\n%s\n", name, logs)
		}
		_ = exec.Command("docker", "rm", "-f", name).Run()
	})
	Eventually(httpStatus(metrics, "/metrics"), "60s").Should(Equal(http.StatusOK), "container %s serves /metrics", name)
	return replica{name: "container " + suffix, probes: probes,
		out: func() string {
			// docker logs: the container's stdout on stdout.
			out, _ := exec.Command("docker", "logs", name).Output()
			return string(out)
		},
		kill: func() {
			out, err := exec.Command("docker", "kill", name).CombinedOutput()
			Expect(err).NotTo(HaveOccurred(), string(out))
		}}
}
