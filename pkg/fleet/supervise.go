package fleet

import (
	"context"
	"sync"
	"time"
)

// Restarts of a program that dies while the fleet runs: a member whose
// kube-scheduler, kwok or controller manager is gone runs no pods or
// deletes no namespace, and nothing else in a local fleet would bring it
// back (a kubelet restarts a real cluster's). After restartLimit restarts
// the program stays down, which the progress log says.
const restartLimit = 5

// The wait before a restart doubles from the first to the most (variables
// for tests).
var (
	restartFirstBackoff = time.Second
	restartMaxBackoff   = 30 * time.Second
)

// supervised is a program the fleet keeps running: started by start, and
// started again, on a port free at that moment, when it exits while the
// fleet runs. Every exit and restart is said on the progress log.
type supervised struct {
	cluster, name string
	start         func(ctx context.Context) (*process, error)
	progress      *progressLog
	// ctx ends restarts in progress when stop is called.
	ctx    context.Context
	cancel context.CancelFunc

	mu       sync.Mutex // guards current and stopped; held while a restart starts the program
	current  *process
	stopped  bool
	restarts int
	done     chan struct{} // closed when the supervising goroutine returns
}

// supervise starts the program with start (ctx bounds that first start)
// and keeps it running until stop. On error nothing is left running.
func supervise(ctx context.Context, cluster, name string, progress *progressLog, start func(ctx context.Context) (*process, error)) (*supervised, error) {
	p, err := start(ctx)
	if err != nil {
		return nil, err
	}
	s := &supervised{cluster: cluster, name: name, start: start, progress: progress, current: p, done: make(chan struct{})}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	go s.run()
	return s, nil
}

func (s *supervised) run() {
	defer close(s.done)
	backoff := restartFirstBackoff
	for {
		s.mu.Lock()
		p := s.current
		s.mu.Unlock()
		<-p.exited
		if p.stopping.Load() {
			return
		}
		if s.restarts >= restartLimit {
			s.progress.alertf("%s: %s exited while the fleet runs (%v); it was restarted %d times and stays down; its log %s ends:%s",
				s.cluster, s.name, p.waitErr, s.restarts, p.logPath, logTail(p.logPath))
			return
		}
		s.restarts++
		s.progress.alertf("%s: %s exited while the fleet runs (%v); restarting it in %s (restart %d of %d); its log %s ends:%s",
			s.cluster, s.name, p.waitErr, backoff, s.restarts, restartLimit, p.logPath, logTail(p.logPath))
		if !s.restartAfter(backoff) {
			return
		}
		backoff = min(2*backoff, restartMaxBackoff)
	}
}

// restartAfter waits delay, then starts the program again, trying until it
// starts or stop is called; it reports false after stop.
func (s *supervised) restartAfter(delay time.Duration) bool {
	for {
		select {
		case <-s.ctx.Done():
			return false
		case <-time.After(delay):
		}
		s.mu.Lock()
		if s.stopped {
			s.mu.Unlock()
			return false
		}
		p, err := s.start(s.ctx)
		if err == nil {
			s.current = p
		}
		s.mu.Unlock()
		if err == nil {
			s.progress.alertf("%s: %s restarted", s.cluster, s.name)
			return true
		}
		if s.ctx.Err() != nil {
			return false
		}
		s.progress.alertf("%s: restarting %s: %v; trying again in %s", s.cluster, s.name, err, delay)
	}
}

// stop stops the program and any restart of it; it returns once nothing
// of it runs. Idempotent.
func (s *supervised) stop() error {
	s.cancel() // a restart under way gives up at once
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		<-s.done
		return nil
	}
	s.stopped = true
	p := s.current
	s.mu.Unlock()
	err := p.stop()
	<-s.done
	return err
}

// pid is the running program's process id, for tests.
func (s *supervised) pid() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.current.cmd.Process.Pid
}
