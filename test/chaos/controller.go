package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// runningLine is what `federator controller` prints once its controllers run.
const runningLine = "controllers running against"

// controller is bin/federator controller, run as its own process in its
// own process group (a Ctrl-C at the terminal reaches this program, which
// stops it), restarted after every kill; every run appends to one log.
type controller struct {
	binary     string
	kubeconfig string
	logPath    string
	args       []string

	cmd    *exec.Cmd
	exited chan struct{}
	starts int
}

func (c *controller) start() error {
	log, err := os.OpenFile(c.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	cmd := exec.Command(c.binary, append([]string{"controller", "--kubeconfig", c.kubeconfig}, c.args...)...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		log.Close()
		return fmt.Errorf("starting %s controller: %w", c.binary, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); log.Close(); close(exited) }()
	c.cmd, c.exited = cmd, exited
	c.starts++
	return nil
}

// running reports whether the process is alive.
func (c *controller) running() bool {
	if c.cmd == nil {
		return false
	}
	select {
	case <-c.exited:
		return false
	default:
		return true
	}
}

// waitRunning waits until the current run has printed runningLine.
func (c *controller) waitRunning(ctx context.Context, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		raw, _ := os.ReadFile(c.logPath)
		if bytes.Count(raw, []byte(runningLine)) >= c.starts {
			return nil
		}
		if !c.running() {
			return fmt.Errorf("federator controller exited before running; its log: %s", c.logPath)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("federator controller not running after %s; its log: %s", limit, c.logPath)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// kill ends the process group with SIGKILL (what a crash or an OOM kill
// does: no cleanup, no lease released) and waits for it.
func (c *controller) kill() {
	if !c.running() {
		return
	}
	_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
	<-c.exited
}
