package scale

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/federator-dev/federator/apis/policy"
	"github.com/federator-dev/federator/config/crds"
	"github.com/federator-dev/federator/pkg/fleet"
	"github.com/federator-dev/federator/pkg/hub"
	"github.com/federator-dev/federator/pkg/membership"
)

// memberCount is the number of member clusters every template reaches.
const memberCount = 2

// env is a running fleet with federator's controllers in this process, and
// the benchmark's own clients.
type env struct {
	fleet *fleet.Fleet
	// hub is the benchmark's client for its own writes (templates, policy
	// patches); ownWrites counts them.
	hub       client.Client
	ownWrites *atomic.Int64
	// hubCS reads the hub API server's /metrics.
	hubCS   kubernetes.Interface
	members map[string]client.Client
	// log receives the controllers' log; it counts error lines.
	log *errorCountingWriter
}

// startEnv starts a hub and memberCount members (envtest API servers from
// bin/ or $KUBEBUILDER_ASSETS), registers the members and runs federator's
// controllers (pkg/hub.Run, default options) in a goroutine, as the e2e
// suite does. Everything is stopped in b's cleanup. The controllers run once
// per process: controller-runtime refuses a second controller of the same
// name, so every size shares this env.
func startEnv(b *testing.B) *env {
	b.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		b.Fatal(err)
	}
	binDir := filepath.Join(root, "bin")
	if v := os.Getenv("KUBEBUILDER_ASSETS"); v != "" {
		binDir = v
	}
	dir := b.TempDir()
	logFile, err := os.Create(filepath.Join(dir, "controllers.log"))
	if err != nil {
		b.Fatal(err)
	}
	e := &env{log: &errorCountingWriter{w: logFile}, ownWrites: &atomic.Int64{}}
	ctrl.SetLogger(zap.New(zap.WriteTo(e.log)))

	crdList, err := crds.CRDs()
	if err != nil {
		b.Fatal(err)
	}
	e.fleet, err = fleet.Start(context.Background(), fleet.Options{
		Dir: filepath.Join(dir, "fleet"), Members: memberCount, BinDir: binDir, CRDs: crdList, Log: logFile})
	if err != nil {
		b.Fatalf("start the fleet (run `make binaries` first): %v", err)
	}
	hubCtx, stopHub := context.WithCancel(context.Background())
	hubDone := make(chan error, 1)
	hubRunning := false
	b.Cleanup(func() {
		stopHub()
		if hubRunning {
			select {
			case err := <-hubDone:
				if err != nil {
					b.Errorf("controllers: %v", err)
				}
			case <-time.After(time.Minute):
				b.Errorf("controllers did not stop within a minute")
			}
		}
		if err := e.fleet.Stop(); err != nil {
			b.Errorf("stop the fleet: %v", err)
		}
		_ = logFile.Close()
	})

	cfg := rest.CopyConfig(e.fleet.Hub.Config)
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { return writeCounter{next: rt, count: e.ownWrites} }
	if e.hub, err = client.New(cfg, client.Options{Scheme: policy.NewScheme()}); err != nil {
		b.Fatal(err)
	}
	if e.hubCS, err = kubernetes.NewForConfig(e.fleet.Hub.Config); err != nil {
		b.Fatal(err)
	}
	e.members = map[string]client.Client{}
	for _, m := range e.fleet.Members {
		if err := membership.Register(context.Background(), e.hub, m.Name, m.Config); err != nil {
			b.Fatalf("register %s: %v", m.Name, err)
		}
		if e.members[m.Name], err = client.New(m.Config, client.Options{Scheme: policy.NewScheme()}); err != nil {
			b.Fatal(err)
		}
	}

	ready := make(chan struct{})
	hubRunning = true
	go func() { hubDone <- hub.Run(hubCtx, e.fleet.Hub.Config, hub.DefaultOptions(), func() { close(ready) }) }()
	select {
	case <-ready:
	case err := <-hubDone:
		hubRunning = false
		b.Fatalf("controllers stopped before they were ready: %v", err)
	case <-time.After(2 * time.Minute):
		b.Fatalf("controllers not ready within 2 minutes")
	}
	return e
}

// errorCountingWriter passes the controllers' JSON log on and counts the
// error lines (reconcile errors, failed writes), keeping the first few.
type errorCountingWriter struct {
	w io.Writer

	mu     sync.Mutex
	errors int
	first  []string
}

func (c *errorCountingWriter) Write(p []byte) (int, error) {
	c.mu.Lock()
	for _, line := range bytes.Split(p, []byte("\n")) {
		if bytes.Contains(line, []byte(`"level":"error"`)) {
			c.errors++
			if len(c.first) < 5 {
				c.first = append(c.first, string(line))
			}
		}
	}
	c.mu.Unlock()
	return c.w.Write(p)
}

// errorCount is how many error lines the controllers logged so far.
func (c *errorCountingWriter) errorCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.errors
}

func (c *errorCountingWriter) firstErrors() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.first...)
}

// rssMB is this process's resident set size (the controllers, the
// benchmark's clients and the test binary) in MB.
func rssMB() (float64, error) {
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for _, line := range bytes.Split(raw, []byte("\n")) {
		if value, ok := bytes.CutPrefix(line, []byte("VmRSS:")); ok {
			var kb float64
			if _, err := fmt.Sscanf(string(bytes.TrimSpace(value)), "%f kB", &kb); err != nil {
				return 0, fmt.Errorf("VmRSS %q: %w", value, err)
			}
			return kb / 1024, nil
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/self/status")
}
