// Package e2e holds the end-to-end suite: a local fleet of real API servers
// (a hub and three members), federator's controllers running against it,
// and tests that read the member API servers directly. One file per
// behaviour a user relies on.
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

	"github.com/federator-dev/federator/apis/policy"
	"github.com/federator-dev/federator/config/crds"
	"github.com/federator-dev/federator/pkg/fleet"
	"github.com/federator-dev/federator/pkg/hub"
	"github.com/federator-dev/federator/pkg/membership"
)

var (
	theFleet  *fleet.Fleet
	hubClient client.Client
	members   map[string]client.Client
	memberCS  map[string]kubernetes.Interface
	stopHub   context.CancelFunc
	hubDone   chan error
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

func TestE2E(t *testing.T) {
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(60 * time.Second)
	SetDefaultEventuallyPollingInterval(200 * time.Millisecond)
	RunSpecs(t, "federator e2e")
}

var _ = BeforeSuite(func() {
	root, err := filepath.Abs("../..")
	Expect(err).NotTo(HaveOccurred())
	binDir = filepath.Join(root, "bin")
	if v := os.Getenv("KUBEBUILDER_ASSETS"); v != "" {
		binDir = v
	}
	controllersLog = filepath.Join(GinkgoT().TempDir(), "controllers.log")
	logFile, err := os.Create(controllersLog)
	Expect(err).NotTo(HaveOccurred())
	ctrl.SetLogger(zap.New(zap.WriteTo(logFile)))

	crdList, err := crds.CRDs()
	Expect(err).NotTo(HaveOccurred())
	theFleet, err = fleet.Start(context.Background(), fleet.Options{
		Dir: GinkgoT().TempDir(), Members: memberCount, BinDir: binDir, CRDs: crdList, Log: GinkgoWriter})
	Expect(err).NotTo(HaveOccurred(), "start the fleet (run `make binaries` first)")
	DeferCleanup(func() {
		if stopHub != nil {
			stopHub()
			Eventually(hubDone).Should(Receive())
		}
		Expect(theFleet.Stop()).To(Succeed())
	})

	hubClient, err = client.New(theFleet.Hub.Config, client.Options{Scheme: policy.NewScheme()})
	Expect(err).NotTo(HaveOccurred())
	members = map[string]client.Client{}
	memberCS = map[string]kubernetes.Interface{}
	for _, m := range theFleet.Members {
		Expect(membership.Register(context.Background(), hubClient, m.Name, m.Config)).To(Succeed())
		members[m.Name], err = client.New(m.Config, client.Options{Scheme: policy.NewScheme()})
		Expect(err).NotTo(HaveOccurred())
		memberCS[m.Name], err = kubernetes.NewForConfig(m.Config)
		Expect(err).NotTo(HaveOccurred())
	}

	var ctx context.Context
	ctx, stopHub = context.WithCancel(context.Background())
	hubDone = make(chan error, 1)
	ready := make(chan struct{})
	o := hub.DefaultOptions()
	o.ClusterStatusInterval = time.Second
	metricsAddr = freeAddress()
	o.MetricsAddr = metricsAddr
	webhookAddr = freeAddress()
	o.WebhookAddr = webhookAddr
	go func() { hubDone <- hub.Run(ctx, theFleet.Hub.Config, o, func() { close(ready) }) }()
	Eventually(ready).Should(BeClosed())
})

// A failed spec shows what the controllers were doing when it failed.
var _ = ReportAfterEach(func(r SpecReport) {
	if !r.Failed() || controllersLog == "" {
		return
	}
	raw, err := os.ReadFile(controllersLog)
	if err != nil {
		return
	}
	lines := strings.Split(strings.TrimRight(string(raw), "\n"), "\n")
	const tail = 120
	if len(lines) > tail {
		lines = lines[len(lines)-tail:]
	}
	GinkgoWriter.Printf("last %d lines of the controllers' log:\n%s\n", len(lines), strings.Join(lines, "\n"))
})
