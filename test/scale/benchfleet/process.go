package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The processes a run measures: federator's controller, and its CPU and
// memory read from /proc.

// controller is bin/federator controller, run as its own process.
type controller struct {
	cmd  *exec.Cmd
	done chan error
}

func startController(ctx context.Context, binary, kubeconfig, logPath string, args []string) (*controller, error) {
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(binary, append([]string{"controller", "--kubeconfig", kubeconfig}, args...)...)
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = io.MultiWriter(logFile, pw), logFile
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, err
	}
	c := &controller{cmd: cmd, done: make(chan error, 1)}
	go func() { c.done <- cmd.Wait(); logFile.Close(); pw.Close() }()
	running := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(pr)
		signalled := false
		for sc.Scan() {
			if !signalled && strings.Contains(sc.Text(), "controllers running against") {
				close(running)
				signalled = true
			}
		}
	}()
	select {
	case <-running:
		return c, nil
	case err := <-c.done:
		return nil, fmt.Errorf("federator controller exited before running (%v); its log: %s", err, logPath)
	case <-time.After(2 * time.Minute):
	case <-ctx.Done():
	}
	return nil, errors.Join(fmt.Errorf("federator controller did not start (log: %s)", logPath), c.stop())
}

func (c *controller) pid() int { return c.cmd.Process.Pid }

// stop ends the controller with SIGTERM, then SIGKILL after 10 s.
func (c *controller) stop() error {
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.done:
	case <-time.After(10 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.done
	}
	return nil
}

func freeAddress() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// cpuSeconds is the user + system CPU time of pid so far.
func cpuSeconds(pid int) float64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// Fields after the command (which may hold spaces) in parentheses.
	fields := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+2:]))
	if len(fields) < 13 {
		return 0
	}
	utime, _ := strconv.ParseFloat(fields[11], 64)
	stime, _ := strconv.ParseFloat(fields[12], 64)
	return (utime + stime) / 100 // USER_HZ
}

// peakRSSMB is pid's peak resident set (VmHWM), in MB.
func peakRSSMB(pid int) float64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}
