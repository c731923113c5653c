package fleet

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// hubControllers are what the hub runs: like Karmada's control plane, no
// workload controllers, so a Deployment there stays a template. namespace
// lets namespaces be deleted, garbage-collector cascades owner references,
// and serviceaccount-token fills ServiceAccount token Secrets, which tools
// that impersonate through a hub ServiceAccount wait for.
var hubControllers = []string{
	"namespace-controller",
	"garbage-collector-controller",
	"serviceaccount-token-controller",
}

// memberControllers are what a real cluster runs for its workloads and
// service accounts, minus what needs nodes' kubelets, clouds or volumes:
// `karmadactl join` waits for a token Secret (serviceaccount-token), pods
// mount kube-root-ca.crt (root-ca-certificate-publisher), a Deployment needs
// the ReplicaSet controller to get pods, a Job's finished pods are cleaned
// by ttl-after-finished and pod-garbage-collector, and Services get
// endpoints.
var memberControllers = []string{
	"namespace-controller",
	"garbage-collector-controller",
	"serviceaccount-controller",
	"serviceaccount-token-controller",
	"root-ca-certificate-publisher-controller",
	"deployment-controller",
	"replicaset-controller",
	"replicationcontroller-controller",
	"statefulset-controller",
	"daemonset-controller",
	"job-controller",
	"cronjob-controller",
	"ttl-after-finished-controller",
	"pod-garbage-collector-controller",
	"disruption-controller",
	"endpoints-controller",
	"endpointslice-controller",
}

// controllerManagerSpec says what one kube-controller-manager runs and with
// which service-account signing key.
type controllerManagerSpec struct {
	cluster     string
	binary      string
	kubeconfig  string
	workDir     string
	controllers []string
	// saKeyFile is the private key the cluster's API server verifies
	// ServiceAccount tokens with (the pair of its --service-account-key-file).
	saKeyFile string
	// rootCAFile is the CA of the API server's serving certificate; it goes
	// into token Secrets and kube-root-ca.crt ConfigMaps as ca.crt.
	rootCAFile string
}

// controllerManager is a running kube-controller-manager.
type controllerManager struct {
	cluster string
	cmd     *exec.Cmd
	logPath string
	log     *os.File
	exited  chan struct{} // closed when the process has exited
	waitErr error         // valid once exited is closed
}

func startControllerManager(ctx context.Context, spec controllerManagerSpec) (*controllerManager, error) {
	cluster := spec.cluster
	// A secure port (rather than --secure-port=0) gives a /healthz to wait on,
	// so a controller manager that cannot start fails Start instead of
	// leaving namespaces that never finish deleting.
	port, err := freePort()
	if err != nil {
		return nil, fmt.Errorf("fleet: %s: choosing a port for kube-controller-manager: %w", cluster, err)
	}
	logPath := filepath.Join(spec.workDir, "kube-controller-manager.log")
	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("fleet: %s: %w", cluster, err)
	}
	cmd := exec.Command(spec.binary,
		"--kubeconfig="+spec.kubeconfig,
		"--authentication-kubeconfig="+spec.kubeconfig,
		"--authorization-kubeconfig="+spec.kubeconfig,
		// envtest's API server has no request-header CA, which the lookup
		// would complain about forever; /healthz needs no client CA.
		"--authentication-skip-lookup=true",
		"--controllers="+strings.Join(spec.controllers, ","),
		"--service-account-private-key-file="+spec.saKeyFile,
		"--root-ca-file="+spec.rootCAFile,
		"--leader-elect=false",
		"--bind-address=127.0.0.1",
		"--secure-port="+strconv.Itoa(port),
		// Deleting a namespace with many objects should not be throttled
		// by the client defaults (20 QPS).
		"--kube-api-qps=100",
		"--kube-api-burst=200",
	)
	cmd.Stdout = log
	cmd.Stderr = log
	// Its own process group, so stop reaches anything it spawns.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		_ = log.Close()
		return nil, fmt.Errorf("fleet: %s: starting kube-controller-manager: %w", cluster, err)
	}
	m := &controllerManager{cluster: cluster, cmd: cmd, logPath: logPath, log: log, exited: make(chan struct{})}
	go func() {
		m.waitErr = cmd.Wait()
		close(m.exited)
	}()
	if err := m.waitHealthy(ctx, net.JoinHostPort("127.0.0.1", strconv.Itoa(port))); err != nil {
		tail := logTail(logPath)
		return nil, errors.Join(fmt.Errorf("%w%s", err, tail), m.stop())
	}
	return m, nil
}

func (m *controllerManager) waitHealthy(ctx context.Context, hostPort string) error {
	client := &http.Client{
		Timeout: 2 * time.Second,
		// The serving certificate is self-signed in memory; only liveness matters here.
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, //nolint:gosec
	}
	defer client.CloseIdleConnections()
	deadline := time.NewTimer(processStartTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		if resp, err := client.Get("https://" + hostPort + "/healthz"); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-m.exited:
			return fmt.Errorf("fleet: %s: kube-controller-manager exited during start-up (%v)", m.cluster, m.waitErr)
		case <-deadline.C:
			return fmt.Errorf("fleet: %s: kube-controller-manager not healthy after %s", m.cluster, processStartTimeout)
		case <-ctx.Done():
			return fmt.Errorf("fleet: %s: waiting for kube-controller-manager: %w", m.cluster, ctx.Err())
		case <-tick.C:
		}
	}
}

// stop terminates the process group, killing it if it does not exit in time.
func (m *controllerManager) stop() error {
	defer m.log.Close()
	pgid := m.cmd.Process.Pid
	select {
	case <-m.exited:
		return nil
	default:
	}
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-m.exited:
		return nil
	case <-time.After(processStopTimeout):
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	<-m.exited
	return fmt.Errorf("fleet: %s: kube-controller-manager did not stop within %s and was killed", m.cluster, processStopTimeout)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
