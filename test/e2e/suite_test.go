// Package e2e holds the end-to-end suite: a local fleet of real API servers
// (a hub and three members), federator's controllers running against it,
// and tests that read the member API servers directly. One file per
// behaviour a user relies on. FLEET=kind makes the suite's fleet of kind
// clusters instead; specs that need the local fleet's internals skip then.
package e2e

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/kubernetes"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/federator-dev/federator/pkg/hub"
	"github.com/federator-dev/federator/test/framework"
)

var (
	// env is the suite's fleet and the controllers under test.
	env       *framework.Env
	hubClient client.Client
	members   map[string]client.Client
	memberCS  map[string]kubernetes.Interface
	binDir    string
	// metricsAddr serves the controllers' Prometheus metrics.
	metricsAddr string
	// webhookAddr serves the gate webhook receiver.
	webhookAddr string
	// controllersLog is where the controllers under test log.
	controllersLog string
)

func freeAddress() string {
	GinkgoHelper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	defer l.Close()
	return l.Addr().String()
}

const memberCount = 3

// fleetProvider is what the suite's clusters are: $FLEET, local unless
// told (framework.ProviderLocal or framework.ProviderKind).
var fleetProvider = func() string {
	if p := os.Getenv("FLEET"); p != "" {
		return p
	}
	return framework.ProviderLocal
}()

func TestE2E(t *testing.T) {
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(60 * time.Second)
	SetDefaultEventuallyPollingInterval(200 * time.Millisecond)
	RunSpecs(t, "federator e2e")
}

var _ = BeforeSuite(func() {
	var err error
	binDir, err = framework.BinDir()
	Expect(err).NotTo(HaveOccurred())
	controllersLog = filepath.Join(GinkgoT().TempDir(), "controllers.log")
	logFile, err := os.Create(controllersLog)
	Expect(err).NotTo(HaveOccurred())
	ctrl.SetLogger(zap.New(zap.WriteTo(logFile)))

	if fleetProvider == framework.ProviderKind {
		// Where kind cannot run (CI: Docker refuses privileged containers,
		// no podman, no node image) the suite says why rather than fails.
		if problems := kindProblems(memberCount + 1); len(problems) > 0 {
			Skip("FLEET=kind: kind clusters cannot run on this machine (docs/kind.md): " + strings.Join(problems, "; "))
		}
	}
	o := hub.DefaultOptions()
	o.ClusterStatusInterval = time.Second
	// Chosen once the fleet runs, whose programs take ports of their own.
	chooseAddresses := func(o *hub.Options) {
		metricsAddr, webhookAddr = freeAddress(), freeAddress()
		o.MetricsAddr, o.WebhookAddr = metricsAddr, webhookAddr
	}
	env, err = framework.Start(context.Background(), framework.Options{Dir: GinkgoT().TempDir(), Members: memberCount,
		BinDir: binDir, Log: GinkgoWriter, Controllers: o, ChooseAddresses: chooseAddresses, Provider: fleetProvider, KindPrefix: "federator-e2e"})
	Expect(err).NotTo(HaveOccurred(), "starting the suite's fleet (FLEET=%s; without FLEET the suite runs on the local fleet, which needs neither Docker nor podman)", fleetProvider)
	// Interrupted (Ctrl-C, a signal), Ginkgo gives a cleanup node its
	// NodeTimeout, else 30 s: deleting four kind clusters takes about 50 s,
	// and a cleanup cut short leaves clusters behind.
	DeferCleanup(func(SpecContext) { Expect(env.Stop()).To(Succeed()) }, NodeTimeout(5*time.Minute))
	hubClient, members, memberCS = env.Hub, env.Members, env.MemberCS
})

// A failed spec shows what the controllers were doing when it failed.
var _ = ReportAfterEach(func(r SpecReport) {
	if r.Failed() && controllersLog != "" {
		printLogTail("the controllers' log", controllersLog, 120)
	}
})

// printLogTail writes the last n lines of the log at path, named what, to
// the spec's output; nothing when it cannot be read.
func printLogTail(what, path string, n int) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return
	}
	lines := strings.Split(strings.TrimRight(string(raw), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	GinkgoWriter.Printf("last %d lines of %s:\n%s\n", len(lines), what, strings.Join(lines, "\n"))
}
