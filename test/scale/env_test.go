package scale

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/federator-dev/federator/pkg/hub"
	"github.com/federator-dev/federator/test/framework"
)

// memberCount is the number of member clusters every template reaches.
const memberCount = 2

// env is a running fleet with federator's controllers in this process, and
// the benchmark's own clients: Env.Hub is the client for its own writes
// (templates, policy patches), which ownWrites counts; Env.HubCS and
// Env.MemberCS read the API servers' /metrics.
type env struct {
	*framework.Env
	ownWrites *atomic.Int64
	// log receives the controllers' log; it counts error lines.
	log *errorCountingWriter
}

// startEnv starts a hub and memberCount members (envtest API servers from
// bin/ or $KUBEBUILDER_ASSETS), registers the members and runs federator's
// controllers (default options) in this process, as the e2e suite does.
// Everything is stopped in b's cleanup. The controllers run once per
// process: controller-runtime refuses a second controller of the same
// name, so every size shares this env.
func startEnv(b *testing.B) *env {
	b.Helper()
	dir := b.TempDir()
	logFile, err := os.Create(filepath.Join(dir, "controllers.log"))
	if err != nil {
		b.Fatal(err)
	}
	e := &env{log: &errorCountingWriter{w: logFile}, ownWrites: &atomic.Int64{}}
	ctrl.SetLogger(zap.New(zap.WriteTo(e.log)))

	e.Env, err = framework.Start(context.Background(), framework.Options{
		Dir: filepath.Join(dir, "fleet"), Members: memberCount, Log: logFile, Controllers: hub.DefaultOptions(),
		WrapHubTransport: func(rt http.RoundTripper) http.RoundTripper {
			return framework.WriteCounter{Next: rt, Count: e.ownWrites}
		},
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		started := children()
		if err := e.Stop(); err != nil {
			b.Errorf("stop: %v", err)
		}
		_ = logFile.Close()
		checkStopped(b, started)
	})
	return e
}

// errorCountingWriter passes the controllers' JSON log on and counts the
// error lines (reconcile errors, failed writes) by controller and error,
// with object names left out so that alike errors add up.
type errorCountingWriter struct {
	w io.Writer

	mu     sync.Mutex
	counts map[string]int
}

var quoted = regexp.MustCompile(`"[^"]*"`)

func (c *errorCountingWriter) Write(p []byte) (int, error) {
	c.mu.Lock()
	for _, line := range bytes.Split(p, []byte("\n")) {
		if !bytes.Contains(line, []byte(`"level":"error"`)) {
			continue
		}
		var entry struct{ Msg, Controller, Error string }
		_ = json.Unmarshal(line, &entry)
		msg := entry.Error
		if msg == "" {
			msg = entry.Msg
		}
		msg = strings.ReplaceAll(quoted.ReplaceAllString(msg, `"…"`), "\n", " | ")
		if len(msg) > 160 {
			msg = msg[:160] + "…"
		}
		if c.counts == nil {
			c.counts = map[string]int{}
		}
		c.counts[entry.Controller+": "+msg]++
	}
	c.mu.Unlock()
	return c.w.Write(p)
}

// snapshot is the error counts so far.
func (c *errorCountingWriter) snapshot() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.counts)
}

// errorsSince formats the errors logged since an earlier snapshot, most
// frequent first; "" when there were none.
func (c *errorCountingWriter) errorsSince(earlier map[string]int) (int, string) {
	type row struct {
		what  string
		count int
	}
	var rows []row
	total := 0
	for what, n := range c.snapshot() {
		if d := n - earlier[what]; d > 0 {
			rows = append(rows, row{what, d})
			total += d
		}
	}
	sort.Slice(rows, func(i, j int) bool {
		return rows[i].count > rows[j].count || rows[i].count == rows[j].count && rows[i].what < rows[j].what
	})
	var b strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&b, "\n\t\t%5d  %s", r.count, r.what)
	}
	return total, b.String()
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

// children lists the processes this process started that still run (the
// fleet's kube-apiservers and etcds), as pid → command line.
func children() map[int]string {
	out := map[int]string{}
	self := os.Getpid()
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...; comm may hold spaces, so parse after ')'.
		end := bytes.LastIndexByte(stat, ')')
		if end < 0 {
			continue
		}
		fields := strings.Fields(string(stat[end+1:]))
		if len(fields) < 2 || fields[1] != strconv.Itoa(self) {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		out[pid] = strings.TrimSpace(strings.ReplaceAll(string(cmdline), "\x00", " "))
	}
	return out
}

// processDirs are the directories named by --cert-dir and --data-dir on the
// command lines: the fleet's working directories, which Stop removes.
func processDirs(cmdlines map[int]string) []string {
	var dirs []string
	for _, cmd := range cmdlines {
		for _, arg := range strings.Fields(cmd) {
			for _, flag := range []string{"--cert-dir=", "--data-dir="} {
				if dir, ok := strings.CutPrefix(arg, flag); ok {
					dirs = append(dirs, filepath.Dir(dir))
				}
			}
		}
	}
	return dirs
}

// checkStopped fails b if a process of the fleet, or its directory, is
// still there after Stop.
func checkStopped(b *testing.B, started map[int]string) {
	b.Helper()
	var pids []int
	for pid := range started {
		pids = append(pids, pid)
		if _, err := os.Stat(filepath.Join("/proc", strconv.Itoa(pid))); err == nil {
			b.Errorf("process %d still runs after the fleet stopped: %s", pid, started[pid])
		}
	}
	for _, dir := range processDirs(started) {
		if _, err := os.Stat(dir); err == nil {
			b.Errorf("%s is still there after the fleet stopped", dir)
		}
	}
	sort.Ints(pids)
	b.Logf("fleet stopped: processes %v gone, their directories removed", pids)
}
