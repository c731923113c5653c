package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/rest"
)

// cliRun is one run of the federator binary: what it printed, and how it
// exited.
type cliRun struct {
	stdout, stderr string
	code           int
}

// hubKubeconfig is the suite's hub kubeconfig file and hubConfig its admin
// access: the one place the CLI specs read the suite's fleet.
func hubKubeconfig() string   { return env.HubEndpoint.KubeconfigPath }
func hubConfig() *rest.Config { return env.HubEndpoint.Config }

// federatorCLI runs `federator ARGS --kubeconfig HUB` as a person would,
// with the binary the suite built.
func federatorCLI(args ...string) cliRun {
	GinkgoHelper()
	return cliOn(hubKubeconfig(), args...)
}

// cliOn runs `federator ARGS --kubeconfig KUBECONFIG`: the CLI against a
// hub other than the suite's (a spec's own fleet).
func cliOn(kubeconfig string, args ...string) cliRun {
	GinkgoHelper()
	return runCLI(exec.Command(federatorBinary(), append(args, "--kubeconfig", kubeconfig)...))
}

// runCLI runs cmd to its end (a minute at most) and logs it for a failed
// spec's report.
func runCLI(cmd *exec.Cmd) cliRun {
	GinkgoHelper()
	c, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	run := exec.CommandContext(c, cmd.Path, cmd.Args[1:]...)
	run.Env, run.Dir, run.Stdin = cmd.Env, cmd.Dir, cmd.Stdin
	var out, errOut bytes.Buffer
	run.Stdout, run.Stderr = io.MultiWriter(&out, GinkgoWriter), io.MultiWriter(&errOut, GinkgoWriter)
	fmt.Fprintf(GinkgoWriter, "$ %s\n", strings.Join(cmd.Args, " "))
	err := run.Run()
	r := cliRun{stdout: out.String(), stderr: errOut.String()}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		r.code = exit.ExitCode()
	case err != nil:
		Fail(fmt.Sprintf("running %v: %v", cmd.Args, err))
	}
	return r
}

// rolloutCluster is one cluster of `federator get rollout -o json`, as a
// script reads it.
type rolloutCluster struct {
	Cluster    string   `json:"cluster"`
	State      string   `json:"state"`
	Generation int64    `json:"generation"`
	Images     []string `json:"images"`
	// RunningImages and WantedImages: what the member still runs while
	// its copy waits, and what it waits for.
	RunningImages []string `json:"runningImages"`
	WantedImages  []string `json:"wantedImages"`
	Reason        string   `json:"reason"`
	Message       string   `json:"message"`
}

// rolloutOf is `federator get rollout NAME -n NS -o json` as cluster →
// state, for the one template named.
func rolloutOf(ns, name string) map[string]rolloutCluster {
	GinkgoHelper()
	r := federatorCLI("get", "rollout", name, "-n", ns, "-o", "json")
	if r.code != 0 {
		return map[string]rolloutCluster{"error": {Message: r.stderr}}
	}
	var doc struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Items      []struct {
			Template struct {
				Generation int64 `json:"generation"`
			} `json:"template"`
			Clusters []rolloutCluster `json:"clusters"`
		} `json:"items"`
	}
	Expect(json.Unmarshal([]byte(r.stdout), &doc)).To(Succeed(), r.stdout)
	Expect(doc.APIVersion + " " + doc.Kind).To(Equal("cli.federator.dev/v1alpha1 RolloutList"))
	Expect(doc.Items).To(HaveLen(1), r.stdout)
	out := map[string]rolloutCluster{}
	for _, c := range doc.Items[0].Clusters {
		out[c.Cluster] = c
	}
	return out
}

// rolloutStates is rolloutOf as cluster → state.
func rolloutStates(ns, name string) map[string]string {
	out := map[string]string{}
	for cluster, c := range rolloutOf(ns, name) {
		out[cluster] = c.State
	}
	return out
}
