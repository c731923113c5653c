package e2e

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/federator-dev/federator/pkg/fleet"
)

// The image federator/federator (make image: FROM scratch, non-root) run as
// two containers, as two replicas of a Deployment would run, against a
// local fleet's hub: the same takeover as two processes, after `docker
// kill`, and the metrics served.
var _ = Describe("leader election in Docker", func() {
	It("runs the image as two containers: one leads, `docker kill` of the leader mid-suspension hands over within the lease duration, no held version leaks, /metrics served", func() {
		if err := exec.Command("docker", "version").Run(); err != nil {
			Skip("needs a Docker daemon (docker version: " + err.Error() + ")")
		}
		image := buildImage()
		f, hubClient := separateFleet(1, false)
		// The container runs as UID 65532: it reads a copy anyone may read.
		kubeconfig := filepath.Join(GinkgoT().TempDir(), "hub.kubeconfig")
		b, err := os.ReadFile(f.Hub.KubeconfigPath)
		Expect(err).NotTo(HaveOccurred())
		Expect(os.WriteFile(kubeconfig, b, 0o644)).To(Succeed())
		Expect(os.Chmod(filepath.Dir(kubeconfig), 0o755)).To(Succeed())

		leader := containerReplica(f, image, kubeconfig, "a")
		Eventually(leader.out, "60s").Should(ContainSubstring(controllersRunning))
		standby := containerReplica(f, image, kubeconfig, "b")
		killLeaderMidSuspension(f, hubClient, leader, standby)
	})
})

// buildImage builds the image as `make image` does, from this checkout's
// Dockerfile, tagged federator/federator:e2e.
func buildImage() string {
	GinkgoHelper()
	const image = "federator/federator:e2e"
	root, err := filepath.Abs("../..")
	Expect(err).NotTo(HaveOccurred())
	dir := GinkgoT().TempDir()
	Expect(os.Mkdir(filepath.Join(dir, "tmp"), 0o755)).To(Succeed())
	build := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w -X main.version=e2e", "-o", filepath.Join(dir, "federator"), "./cmd/federator")
	build.Dir, build.Env = root, append(os.Environ(), "CGO_ENABLED=0")
	out, err := build.CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), string(out))
	out, err = exec.Command("docker", "build", "-q", "-f", filepath.Join(root, "Dockerfile"), "-t", image, dir).CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), string(out))
	out, err = exec.Command("docker", "run", "--rm", image, "version").CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), string(out))
	Expect(string(out)).To(HavePrefix("federator e2e\n"))
	return image
}

// containerReplica runs image as `federator controller --leader-elect` in
// a container on the host's network, with kubeconfig mounted read-only,
// serving probes and metrics; removed at the end of the spec.
func containerReplica(f *fleet.Fleet, image, kubeconfig, suffix string) replica {
	GinkgoHelper()
	name := fmt.Sprintf("federator-e2e-%d-%s", os.Getpid(), suffix)
	probes, metrics := freeAddress(), freeAddress()
	args := append([]string{"run", "-d", "--name", name, "--network", "host",
		"-v", kubeconfig + ":/etc/federator/hub.kubeconfig:ro", image,
		"controller", "--kubeconfig", "/etc/federator/hub.kubeconfig",
		"--health-probe-bind-address", probes, "--metrics-bind-address", metrics}, leaderElect...)
	out, err := exec.Command("docker", args...).CombinedOutput()
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
