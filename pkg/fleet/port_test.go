package fleet

import (
	"errors"
	"testing"
)

// A program that lost its port to another process between the choice and
// its bind is started again on another port; any other failure is final.
func TestStartOnFreePortRetriesATakenPort(t *testing.T) {
	var ports []int
	taken := errors.New("fleet: member18: kube-controller-manager exited during start-up (exit status 1)\n" +
		`listen tcp 127.0.0.1:36315: bind: address already in use`)
	started := &process{name: "kube-controller-manager"}
	p, err := startOnFreePort(func(port int) (*process, error) {
		ports = append(ports, port)
		if len(ports) < 3 {
			return nil, taken
		}
		return started, nil
	})
	if err != nil || p != started {
		t.Fatalf("startOnFreePort = %v, %v; want the third start", p, err)
	}
	if len(ports) != 3 || ports[0] == 0 {
		t.Errorf("ports tried %v, want three free ports", ports)
	}

	ports = nil
	if _, err := startOnFreePort(func(port int) (*process, error) {
		ports = append(ports, port)
		return nil, taken
	}); err == nil || len(ports) != portAttempts {
		t.Errorf("always taken: %v after %d tries, want the error after %d", err, len(ports), portAttempts)
	}

	ports = nil
	other := errors.New("fleet: member1: kube-scheduler not healthy after 1m0s")
	if _, err := startOnFreePort(func(port int) (*process, error) {
		ports = append(ports, port)
		return nil, other
	}); !errors.Is(err, other) || len(ports) != 1 {
		t.Errorf("another failure: %v after %d tries, want it at once", err, len(ports))
	}
}
