package fleet

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A listener is told apart by the process that holds it: this test's
// own is owned by this process, not by another process that holds none.
func TestListenerOwned(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	if owned, ok := listenerOwned(os.Getpid(), port); !ok || !owned {
		t.Fatalf("listenerOwned(self, %d) = %v, %v; want true, true", port, owned, ok)
	}
	other := exec.Command("sleep", "30")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = other.Process.Kill(); _ = other.Wait() }()
	if owned, ok := listenerOwned(other.Process.Pid, port); !ok || owned {
		t.Fatalf("listenerOwned(another process, %d) = %v, %v; want false, true", port, owned, ok)
	}
	free, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	if owned, _ := listenerOwned(os.Getpid(), free); owned {
		t.Fatalf("listenerOwned(self, %d) with nothing listening there = true", free)
	}
}

// A program whose health check another program answers (it took the port
// the program was told) does not count as started: startProcess stops it
// and says the port is taken, so startOnFreePort tries another.
func TestStartProcessRefusesAPortAnotherProgramHolds(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
	defer other.Close()
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip(err)
	}
	p, err := startProcess(context.Background(), "member1", t.TempDir(), sleep, []string{"30"}, other.URL+"/healthz")
	if err == nil {
		_ = p.stop()
		t.Fatal("startProcess took another program's health answer for the started program's")
	}
	if !strings.Contains(err.Error(), "address already in use") {
		t.Fatalf("the error does not say the port is in use (startOnFreePort retries only then): %v", err)
	}
}

// startRaw runs script as a fleet process, without a health check.
func startRaw(t *testing.T, script string) *process {
	t.Helper()
	dir := t.TempDir()
	logPath := dir + "/kwok.log"
	log, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", script)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &process{cluster: "member2", name: "kwok", cmd: cmd, logPath: logPath, log: log, exited: make(chan struct{})}
	go func() { p.waitErr = cmd.Wait(); close(p.exited) }()
	return p
}

// A program that dies while the fleet runs is said on the progress log,
// with its log's end, and started again; one the fleet stops is neither.
func TestAProgramThatDiesIsSaidAndRestarted(t *testing.T) {
	var out, alerts strings.Builder
	progress := &progressLog{w: &out, alerts: &alerts}
	starts := 0
	s, err := supervise(context.Background(), "member2", "kwok", progress, func(context.Context) (*process, error) {
		starts++
		if starts == 1 {
			return startRaw(t, "sleep 0.2; echo 'F1126 node lease: too many open files'; exit 3"), nil
		}
		return startRaw(t, "sleep 30"), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	first := s.pid()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(progressText(progress, &out), "restarted") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	got := progressText(progress, &out)
	for _, want := range []string{"member2: kwok exited while the fleet runs (exit status 3); restarting it in 1s (restart 1 of 5)",
		"too many open files", "member2: kwok restarted"} {
		if !strings.Contains(got, want) {
			t.Errorf("progress log %q lacks %q", got, want)
		}
	}
	if got := progressText(progress, &alerts); !strings.Contains(got, "member2: kwok exited while the fleet runs") || !strings.Contains(got, "member2: kwok restarted") {
		t.Errorf("the alerts writer (federator up's terminal) did not get the exit and the restart: %q", got)
	}
	second := s.pid()
	if second == first || syscall.Kill(second, 0) != nil {
		t.Fatalf("no new program runs after the restart (pid %d before, %d after)", first, second)
	}

	out.Reset()
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	if syscall.Kill(second, 0) == nil {
		t.Errorf("the restarted program (pid %d) runs after stop", second)
	}
	time.Sleep(100 * time.Millisecond)
	if got := progressText(progress, &out); got != "" {
		t.Errorf("a program the fleet stopped was reported: %q", got)
	}
}

// A program that keeps dying is restarted restartLimit times, then left
// down, which is said.
func TestAProgramThatKeepsDyingStaysDownAfterTheLimit(t *testing.T) {
	defer func(first, most time.Duration) { restartFirstBackoff, restartMaxBackoff = first, most }(restartFirstBackoff, restartMaxBackoff)
	restartFirstBackoff, restartMaxBackoff = 10*time.Millisecond, 20*time.Millisecond
	var out strings.Builder
	progress := &progressLog{w: &out}
	starts := 0
	s, err := supervise(context.Background(), "member2", "kwok", progress, func(context.Context) (*process, error) {
		starts++
		return startRaw(t, "exit 3"), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		t.Fatalf("still restarting after 10s; progress log: %s", progressText(progress, &out))
	}
	if starts != 1+restartLimit {
		t.Errorf("started %d times, want %d (once and %d restarts)", starts, 1+restartLimit, restartLimit)
	}
	if got := progressText(progress, &out); !strings.Contains(got, "member2: kwok exited while the fleet runs (exit status 3); it was restarted 5 times and stays down") {
		t.Errorf("progress log does not say the program stays down: %s", got)
	}
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
}

func progressText(p *progressLog, out *strings.Builder) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return out.String()
}
