package e2e

import (
	"os"
	"os/exec"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// Installed as kubectl-federator (what `make install` links), federator is
// a kubectl plugin: kubectl finds it on PATH.
var _ = Describe("kubectl federator (cli plugin)", func() {
	const ns = "cli-plugin"

	It("answers `kubectl federator get rollout` through kubectl's plugin lookup", func() {
		propagatedEverywhere(ns, "web")
		plugins := GinkgoT().TempDir()
		Expect(os.Symlink(federatorBinary(), filepath.Join(plugins, "kubectl-federator"))).To(Succeed())
		kubectl := func(args ...string) cliRun {
			GinkgoHelper()
			cmd := exec.Command(filepath.Join(binDir, "kubectl"), args...)
			cmd.Env = append(os.Environ(), "PATH="+plugins+string(os.PathListSeparator)+os.Getenv("PATH"))
			return runCLI(cmd)
		}

		r := kubectl("plugin", "list")
		Expect(r.stdout).To(ContainSubstring(filepath.Join(plugins, "kubectl-federator")))

		r = kubectl("federator", "get", "rollout", "-n", ns, "--kubeconfig", hubKubeconfig())
		Expect(r.code).To(Equal(0), r.stderr)
		for m := range members {
			Expect(r.stdout).To(MatchRegexp(`(?m)^Deployment/web\s+%s\s+Applied\s+\d+\s+\S+\s+nginx:1\.25\s+-$`, m))
		}

		By("its help and errors speak of `kubectl federator`")
		r = kubectl("federator", "get", "--help")
		Expect(r.stdout).To(ContainSubstring("kubectl federator get policies|bindings|works|clusters|gates|rollout"))
		r = kubectl("federator", "get", "deployments", "--kubeconfig", hubKubeconfig())
		Expect(r.code).NotTo(Equal(0))
		Expect(r.stderr).To(HavePrefix("kubectl federator: get deployments: unknown kind of object"))
	})
})
