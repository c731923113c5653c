package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// runningLine is what `federator controller` prints once its controllers run.
const runningLine = "controllers running against"

// controller is one replica of bin/federator controller (or a Pull
// member's `federator agent`, agent.go), run as its own process in its
// own process group (a Ctrl-C at the terminal reaches this program, which
// stops it), restarted after every kill; every run of it appends to its
// own log.
type controller struct {
	name    string // replica-1, replica-2, ...; agent-member3, ...
	member  string // the Pull member an agent serves; "" for a replica
	binary  string
	logPath string
	// args follow the binary: the command (controller, agent) and its flags.
	args []string
	// ready is what a run prints once it runs (runningLine for a replica).
	ready string

	cmd    *exec.Cmd
	exited chan struct{}
	starts int
}

func (c *controller) start() error {
	log, err := os.OpenFile(c.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	cmd := exec.Command(c.binary, c.args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		log.Close()
		return fmt.Errorf("starting %s %s: %w", c.binary, c.args[0], err)
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

// waitRunning waits until the current run has printed its ready line.
func (c *controller) waitRunning(ctx context.Context, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		raw, _ := os.ReadFile(c.logPath)
		if bytes.Count(raw, []byte(c.ready)) >= c.starts {
			return nil
		}
		if !c.running() {
			return fmt.Errorf("federator %s (%s) exited before running; its log: %s", c.args[0], c.name, c.logPath)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("federator %s (%s) not running after %s; its log: %s", c.args[0], c.name, limit, c.logPath)
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

// killFor kills the process and starts it again after down, and says
// when it was killed.
func (c *controller) killFor(down time.Duration) (time.Time, error) {
	from := time.Now()
	c.kill()
	time.Sleep(down)
	return from, c.start()
}

// replicas are the controller's replicas, as a Deployment of two runs
// them: each takes part in leader election, so one leads and the others
// stand by; a killed or exited one is started again, as a kubelet would.
// The Pull members' agents are kept running the same way (agent.go).
type replicas []*controller

func newReplicas(n int, binary, kubeconfig, dir string, args []string) replicas {
	rs := make(replicas, n)
	for i := range rs {
		name := fmt.Sprintf("replica-%d", i+1)
		rs[i] = &controller{name: name, binary: binary, logPath: filepath.Join(dir, "federator-"+name+".log"),
			args: append([]string{"controller", "--kubeconfig", kubeconfig}, args...), ready: runningLine}
	}
	return rs
}

// startAll starts every replica and waits until one leads: the first
// starts alone, so it takes the Lease, and the others then stand by.
func (rs replicas) startAll(ctx context.Context) error {
	if err := rs[0].start(); err != nil {
		return err
	}
	if err := rs[0].waitRunning(ctx, 2*time.Minute); err != nil {
		return err
	}
	for _, c := range rs[1:] {
		if err := c.start(); err != nil {
			return err
		}
	}
	return nil
}

// restartExited starts again every replica that has exited by itself (a
// leader that could not renew its Lease, while the hub was down, exits),
// and returns their names.
func (rs replicas) restartExited() ([]string, error) {
	var names []string
	for _, c := range rs {
		if c.cmd != nil && !c.running() {
			if err := c.start(); err != nil {
				return names, err
			}
			names = append(names, c.name)
		}
	}
	return names, nil
}

func (rs replicas) killAll() {
	for _, c := range rs {
		c.kill()
	}
}

// logs reads every replica's log, each line prefixed with the replica's
// name, replica after replica.
func (rs replicas) logs() []string {
	var lines []string
	for _, c := range rs {
		raw, err := os.ReadFile(c.logPath)
		if err != nil {
			continue
		}
		for _, l := range strings.Split(strings.TrimRight(string(raw), "\n"), "\n") {
			if l != "" {
				lines = append(lines, c.name+": "+l)
			}
		}
	}
	return lines
}
