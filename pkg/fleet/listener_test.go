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
	"testing"
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
