package fleet

import (
	"bytes"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// PauseAPIServer freezes the cluster's kube-apiserver (SIGSTOP): connections
// are accepted by the kernel but nothing answers, as with a hung or badly
// overloaded member. ResumeAPIServer lets it go on.
func (c *Cluster) PauseAPIServer() error { return c.signalAPIServer(syscall.SIGSTOP) }

// ResumeAPIServer undoes PauseAPIServer.
func (c *Cluster) ResumeAPIServer() error { return c.signalAPIServer(syscall.SIGCONT) }

func (c *Cluster) signalAPIServer(sig syscall.Signal) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped || !c.apiServerRunning {
		return fmt.Errorf("fleet: %s's kube-apiserver is not running", c.Name)
	}
	pid, err := apiServerPID(c.Config.Host)
	if err != nil {
		return fmt.Errorf("fleet: %s: %w", c.Name, err)
	}
	if err := syscall.Kill(pid, sig); err != nil {
		return fmt.Errorf("fleet: %s: signal %v to kube-apiserver (pid %d): %w", c.Name, sig, pid, err)
	}
	return nil
}

// APIServerPID is the process id of the cluster's kube-apiserver, for
// reading what it costs (/proc/PID/stat).
func (c *Cluster) APIServerPID() (int, error) { return apiServerPID(c.Config.Host) }

// apiServerPID finds the kube-apiserver serving host by its --secure-port
// flag; envtest keeps the process to itself.
func apiServerPID(host string) (int, error) {
	u, err := url.Parse(host)
	if err != nil {
		return 0, err
	}
	want := []byte("--secure-port=" + u.Port())
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		raw, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		args := bytes.Split(raw, []byte{0})
		if filepath.Base(string(args[0])) != "kube-apiserver" {
			continue
		}
		for _, a := range args[1:] {
			if bytes.Equal(a, want) {
				return strconv.Atoi(filepath.Base(filepath.Dir(p)))
			}
		}
	}
	return 0, fmt.Errorf("no kube-apiserver process serves %s", host)
}
