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
	free, err := freePort()
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
// with its log's end; one the fleet stops is not.
func TestAProcessThatDiesIsSaid(t *testing.T) {
	var out strings.Builder
	progress := &progressLog{w: &out}
	dies := startRaw(t, "echo 'F1126 node lease: too many open files'; exit 3")
	dies.watch(progress)
	<-dies.exited
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(progressText(progress, &out), "exited") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	got := progressText(progress, &out)
	for _, want := range []string{"member2: kwok exited while the fleet runs (exit status 3)", "too many open files"} {
		if !strings.Contains(got, want) {
			t.Errorf("progress log %q lacks %q", got, want)
		}
	}

	out.Reset()
	stopped := startRaw(t, "sleep 30")
	stopped.watch(progress)
	if err := stopped.stop(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	if got := progressText(progress, &out); got != "" {
		t.Errorf("a process the fleet stopped was reported: %q", got)
	}
}

func progressText(p *progressLog, out *strings.Builder) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return out.String()
}
