package fleet

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// process is a program the fleet runs beside a cluster's API server
// (kube-controller-manager, kube-scheduler, kwok), logging into the
// cluster's work directory, in a process group of its own.
type process struct {
	cluster string
	name    string // the program, as errors name it
	cmd     *exec.Cmd
	logPath string
	log     *os.File
	exited  chan struct{} // closed when the process has exited
	waitErr error         // valid once exited is closed
	// stopping is set by stop: an exit after it is no news.
	stopping atomic.Bool
}

// startProcess runs binary with args and returns once healthURL answers
// 200. A health check (rather than no serving port) makes a program that
// cannot start fail Start, instead of leaving a cluster that silently never
// deletes a namespace or schedules a pod. On error nothing is left running.
func startProcess(ctx context.Context, cluster, workDir, binary string, args []string, healthURL string) (*process, error) {
	name := filepath.Base(binary)
	logPath := filepath.Join(workDir, name+".log")
	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("fleet: %s: %w", cluster, err)
	}
	cmd := exec.Command(binary, args...)
	cmd.Stdout = log
	cmd.Stderr = log
	// Its own process group, so stop reaches anything it spawns.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		_ = log.Close()
		return nil, fmt.Errorf("fleet: %s: starting %s: %w", cluster, name, err)
	}
	p := &process{cluster: cluster, name: name, cmd: cmd, logPath: logPath, log: log, exited: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	if err := p.waitHealthy(ctx, healthURL); err != nil {
		tail := logTail(logPath)
		return nil, errors.Join(fmt.Errorf("%w%s", err, tail), p.stop())
	}
	// Healthy may mean another program answered on the port this one was
	// told (it took the port first; this one then exits): seen as one of
	// twenty kube-schedulers gone a moment after a fleet was ready.
	if u, err := url.Parse(healthURL); err == nil {
		if port, err := strconv.Atoi(u.Port()); err == nil {
			if owned, ok := listenerOwned(cmd.Process.Pid, port); ok && !owned {
				return nil, errors.Join(fmt.Errorf("fleet: %s: %s: port %d is held by another program (address already in use)",
					cluster, name, port), p.stop())
			}
		}
	}
	return p, nil
}

func (p *process) waitHealthy(ctx context.Context, url string) error {
	client := &http.Client{
		Timeout: 2 * time.Second,
		// Serving certificates are self-signed in memory; only liveness matters here.
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, //nolint:gosec
	}
	defer client.CloseIdleConnections()
	deadline := time.NewTimer(processStartTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		if resp, err := client.Get(url); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-p.exited:
			return fmt.Errorf("fleet: %s: %s exited during start-up (%v)", p.cluster, p.name, p.waitErr)
		case <-deadline.C:
			return fmt.Errorf("fleet: %s: %s not healthy after %s", p.cluster, p.name, processStartTimeout)
		case <-ctx.Done():
			return fmt.Errorf("fleet: %s: waiting for %s: %w", p.cluster, p.name, ctx.Err())
		case <-tick.C:
		}
	}
}

// stop terminates the process group, killing it if it does not exit in time.
func (p *process) stop() error {
	p.stopping.Store(true)
	defer p.log.Close()
	pgid := p.cmd.Process.Pid
	select {
	case <-p.exited:
		return nil
	default:
	}
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-p.exited:
		return nil
	case <-time.After(processStopTimeout):
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	<-p.exited
	return fmt.Errorf("fleet: %s: %s did not stop within %s and was killed", p.cluster, p.name, processStopTimeout)
}

// localURL is http(s)://127.0.0.1:port/path.
func localURL(scheme string, port int, path string) string {
	return scheme + "://" + net.JoinHostPort("127.0.0.1", fmt.Sprint(port)) + path
}

// portAttempts is how many ports a program that serves on one is tried
// with before its start fails.
const portAttempts = 3

// startOnFreePort starts a program that serves on a port it is told:
// start gets a port free a moment ago. Between that moment and the
// program's bind another process may take it (twenty members start at
// once); then the program exits with "address already in use" and is
// started again on another port.
func startOnFreePort(start func(port int) (*process, error)) (*process, error) {
	var err error
	for range portAttempts {
		var port int
		if port, err = FreePort(); err != nil {
			return nil, fmt.Errorf("choosing a port: %w", err)
		}
		var p *process
		if p, err = start(port); err == nil || !strings.Contains(err.Error(), "address already in use") {
			return p, err
		}
	}
	return nil, err
}

// FreePort is a TCP port on the loopback nothing listens on now (another
// program may take it before the caller does: callers start what binds it
// at once).
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
