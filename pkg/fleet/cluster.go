package fleet

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

const (
	// adminUserName is the client-certificate user every kubeconfig holds.
	adminUserName = "federator-admin"

	// Several API servers start at once on a small machine, so each gets far
	// longer than envtest's 20s default before it counts as failed.
	processStartTimeout = 2 * time.Minute
	processStopTimeout  = 30 * time.Second
	crdServedTimeout    = time.Minute

	// envtestSAKeyFile is the service-account signing key envtest writes
	// into the API server's CertDir (controller-runtime's
	// pkg/internal/testing/controlplane); its API server verifies tokens
	// with the matching sa-signer.crt.
	envtestSAKeyFile = "sa-signer.key"

	// Clients of a local fleet should never be held back by client-side rate
	// limits; the API server is the resource being measured.
	adminQPS   = 1000
	adminBurst = 2000
)

// Cluster is one running local cluster: an etcd and a kube-apiserver, and a
// kube-controller-manager when the fleet was started with one.
type Cluster struct {
	Name string // "hub", "member1", ...
	// Config holds admin (system:masters) client-certificate credentials.
	Config *rest.Config
	// KubeconfigPath is the kubeconfig Start wrote, current context Name.
	KubeconfigPath string

	env               *envtest.Environment
	workDir           string // everything of this cluster's processes, removed by stop
	apiServerLogPath  string
	logs              []*os.File
	controllerManager *supervised
	workloads         []*supervised // kube-scheduler and kwok, in start order

	mu               sync.Mutex // serialises StopAPIServer, StartAPIServer and stop
	apiServerRunning bool
	etcdRunning      bool // false after StopEtcd
	stopped          bool
}

type clusterSpec struct {
	name              string
	bins              binaries
	kubeconfigPath    string
	crds              []*apiextensionsv1.CustomResourceDefinition
	controllerManager bool
	// nodes > 0 runs workloads: kube-scheduler, kwok and this many nodes.
	nodes    int
	progress *progressLog
}

// startCluster starts one cluster; on error it has stopped what it started.
func startCluster(ctx context.Context, spec clusterSpec) (c *Cluster, err error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("fleet: %s not started: %w", spec.name, err)
	}
	spec.progress.printf("starting %s ...", spec.name)
	began := time.Now()

	workDir, err := os.MkdirTemp("", "federator-fleet-"+spec.name+"-")
	if err != nil {
		return nil, fmt.Errorf("fleet: %s: creating a temporary directory: %w", spec.name, err)
	}
	c = &Cluster{Name: spec.name, workDir: workDir}
	defer func() {
		if err != nil {
			err = errors.Join(err, c.stop())
			c = nil
		}
	}()

	// envtest removes directories it made itself whenever a process stops,
	// including the API server's certificates and service-account signing
	// key. Directories of our own survive StopAPIServer, which is what lets
	// StartAPIServer come back with the same certificates.
	certDir := filepath.Join(workDir, "kube-apiserver")
	dataDir := filepath.Join(workDir, "etcd")
	for _, d := range []string{certDir, dataDir} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return c, fmt.Errorf("fleet: %s: %w", spec.name, err)
		}
	}
	c.apiServerLogPath = filepath.Join(workDir, "kube-apiserver.log")
	apiServerLog, err := c.openLog(c.apiServerLogPath)
	if err != nil {
		return c, err
	}
	etcdLog, err := c.openLog(filepath.Join(workDir, "etcd.log"))
	if err != nil {
		return c, err
	}

	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, crd := range spec.crds {
		crds = append(crds, crd.DeepCopy()) // envtest writes into what it creates
	}
	c.env = &envtest.Environment{
		ControlPlane: envtest.ControlPlane{
			// Paths are set explicitly: envtest would otherwise let
			// $KUBEBUILDER_ASSETS override Options.BinDir.
			APIServer: apiServer(spec.bins.apiServer, certDir, apiServerLog),
			Etcd: &envtest.Etcd{
				Path:    spec.bins.etcd,
				DataDir: dataDir,
				Out:     etcdLog,
				Err:     etcdLog,
			},
			KubectlPath: filepath.Join(filepath.Dir(spec.bins.apiServer), "kubectl"), // never run
		},
		CRDs:                     crds,
		CRDInstallOptions:        envtest.CRDInstallOptions{MaxTime: crdServedTimeout},
		ControlPlaneStartTimeout: processStartTimeout,
		ControlPlaneStopTimeout:  processStopTimeout,
	}
	// Start returns once the API server is healthy, the default namespace
	// exists and every CRD is served (served implies Established).
	if _, err := c.env.Start(); err != nil {
		return c, fmt.Errorf("fleet: starting %s: %w%s", spec.name, err, logTail(c.apiServerLogPath))
	}
	c.apiServerRunning, c.etcdRunning = true, true

	admin, err := c.env.ControlPlane.AddUser(envtest.User{
		Name:   adminUserName,
		Groups: []string{"system:masters"},
	}, &rest.Config{QPS: adminQPS, Burst: adminBurst})
	if err != nil {
		return c, fmt.Errorf("fleet: %s: provisioning the admin user: %w", spec.name, err)
	}
	c.Config = rest.CopyConfig(admin.Config())
	c.Config.Host = strings.TrimSuffix(c.Config.Host, "/")

	c.KubeconfigPath = spec.kubeconfigPath
	if err := WriteKubeconfig(c.KubeconfigPath, c.Name, c.Config); err != nil {
		return c, fmt.Errorf("fleet: %s: writing kubeconfig: %w", spec.name, err)
	}

	if spec.controllerManager {
		cm := controllerManagerSpec{
			cluster:     c.Name,
			binary:      spec.bins.controllerManager,
			kubeconfig:  filepath.Join(workDir, "controller-manager.kubeconfig"),
			workDir:     workDir,
			controllers: memberControllers,
			// envtest generates the pair in the directory we gave it and
			// passes the public half as --service-account-key-file.
			saKeyFile:  filepath.Join(certDir, envtestSAKeyFile),
			rootCAFile: filepath.Join(workDir, "ca.crt"),
		}
		if spec.name == HubName {
			cm.controllers = HubControllers
		}
		if err := WriteKubeconfig(cm.kubeconfig, c.Name, c.Config); err != nil {
			return c, fmt.Errorf("fleet: %s: writing kube-controller-manager kubeconfig: %w", spec.name, err)
		}
		if err := os.WriteFile(cm.rootCAFile, c.Config.CAData, 0o600); err != nil {
			return c, fmt.Errorf("fleet: %s: %w", spec.name, err)
		}
		if _, err := os.Stat(cm.saKeyFile); err != nil {
			return c, fmt.Errorf("fleet: %s: the API server's service-account signing key: %w", spec.name, err)
		}
		c.controllerManager, err = supervise(ctx, c.Name, "kube-controller-manager", spec.progress,
			func(ctx context.Context) (*process, error) { return startControllerManager(ctx, cm) })
		if err != nil {
			return c, err
		}
	}
	if spec.nodes > 0 {
		if c.workloads, err = startWorkloads(ctx, c, spec.bins, spec.nodes, spec.progress); err != nil {
			return c, err
		}
	}
	if err := ctx.Err(); err != nil {
		return c, fmt.Errorf("fleet: %s: %w", spec.name, err)
	}
	spec.progress.printf("%s ready at %s (%s)", spec.name, c.Config.Host, time.Since(began).Round(100*time.Millisecond))
	return c, nil
}

// apiServer configures a kube-apiserver. Open watches (member informers,
// kubectl get -w) would otherwise hold a stopping API server for its whole
// request timeout (60s): it ends them after a short grace period instead.
func apiServer(path, certDir string, log io.Writer) *envtest.APIServer {
	s := &envtest.APIServer{Path: path, CertDir: certDir, Out: log, Err: log}
	s.Configure().Set("shutdown-watch-termination-grace-period", "2s")
	return s
}

// APIEndpoint is the cluster's API server URL, https://127.0.0.1:PORT.
func (c *Cluster) APIEndpoint() string { return c.Config.Host }

// StopAPIServer stops only the cluster's kube-apiserver; etcd keeps running
// with its data. It simulates an outage of the cluster.
func (c *Cluster) StopAPIServer() error {
	return c.switchProcess(&c.apiServerRunning, false, func() error {
		if err := c.env.ControlPlane.APIServer.Stop(); err != nil {
			return fmt.Errorf("fleet: stopping %s's kube-apiserver: %w", c.Name, err)
		}
		return nil
	})
}

// StartAPIServer starts the cluster's kube-apiserver again after
// StopAPIServer, on the same address and port with the same serving
// certificate, client CA and service-account signing key, so kubeconfigs and
// registered member tokens stay valid. It returns once the server is healthy.
func (c *Cluster) StartAPIServer() error {
	return c.switchProcess(&c.apiServerRunning, true, func() error {
		if err := c.env.ControlPlane.APIServer.Start(); err != nil {
			return fmt.Errorf("fleet: restarting %s's kube-apiserver: %w%s", c.Name, err, logTail(c.apiServerLogPath))
		}
		return nil
	})
}

// StopEtcd stops only the cluster's etcd, as a crashed etcd does; its data
// stays on disk and the API server keeps running (its requests fail until
// StartEtcd).
func (c *Cluster) StopEtcd() error {
	return c.switchProcess(&c.etcdRunning, false, func() error {
		if err := c.env.ControlPlane.Etcd.Stop(); err != nil {
			return fmt.Errorf("fleet: stopping %s's etcd: %w", c.Name, err)
		}
		return nil
	})
}

// StartEtcd starts the cluster's etcd again after StopEtcd, on the same
// address with the same data, so the API server reconnects to it. It
// returns once etcd is healthy.
func (c *Cluster) StartEtcd() error {
	return c.switchProcess(&c.etcdRunning, true, func() error {
		if err := c.env.ControlPlane.Etcd.Start(); err != nil {
			return fmt.Errorf("fleet: restarting %s's etcd: %w", c.Name, err)
		}
		return nil
	})
}

// switchProcess runs change, which starts or stops one of the cluster's
// processes, under the cluster's lock, and records that *running is now
// want; it does nothing when *running is want already (envtest would start
// a second process and lose track of the first) and refuses on a stopped
// cluster.
func (c *Cluster) switchProcess(running *bool, want bool, change func() error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return fmt.Errorf("fleet: %s is stopped", c.Name)
	}
	if *running == want {
		return nil
	}
	if err := change(); err != nil {
		return err
	}
	*running = want
	return nil
}

// stop stops the cluster's processes and removes its files. Idempotent.
func (c *Cluster) stop() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return nil
	}
	c.stopped = true

	var errs []error
	for i := len(c.workloads) - 1; i >= 0; i-- {
		if err := c.workloads[i].stop(); err != nil {
			errs = append(errs, err)
		}
	}
	if c.controllerManager != nil {
		if err := c.controllerManager.stop(); err != nil {
			errs = append(errs, err)
		}
	}
	if c.env != nil {
		// Stops kube-apiserver first, then etcd.
		if err := c.env.Stop(); err != nil {
			errs = append(errs, fmt.Errorf("fleet: stopping %s: %w", c.Name, err))
		}
	}
	c.apiServerRunning = false
	for _, f := range c.logs {
		_ = f.Close()
	}
	if c.KubeconfigPath != "" {
		if err := os.Remove(c.KubeconfigPath); err != nil && !os.IsNotExist(err) {
			errs = append(errs, fmt.Errorf("fleet: %s: removing kubeconfig: %w", c.Name, err))
		}
	}
	if err := os.RemoveAll(c.workDir); err != nil {
		errs = append(errs, fmt.Errorf("fleet: %s: removing %s: %w", c.Name, c.workDir, err))
	}
	return errors.Join(errs...)
}

func (c *Cluster) openLog(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("fleet: %s: %w", c.Name, err)
	}
	c.logs = append(c.logs, f)
	return f, nil
}

// WriteKubeconfig writes cfg's credentials (admin ones, as the fleet has
// them, or a token) for cluster name with a context of the same name as the
// current context.
func WriteKubeconfig(path, name string, cfg *rest.Config) error {
	user := name + "-admin"
	kc := clientcmdapi.NewConfig()
	kc.Clusters[name] = &clientcmdapi.Cluster{
		Server:                   cfg.Host,
		CertificateAuthorityData: cfg.CAData,
	}
	kc.AuthInfos[user] = &clientcmdapi.AuthInfo{
		ClientCertificateData: cfg.CertData,
		ClientKeyData:         cfg.KeyData,
		// Or a ServiceAccount's token (an agent's, of limited rights).
		Token: cfg.BearerToken,
		// Acting as another user (a test's user of limited rights).
		Impersonate: cfg.Impersonate.UserName,
	}
	kc.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: user}
	kc.CurrentContext = name
	return clientcmd.WriteToFile(*kc, path)
}

// logTail returns the last lines of a process log, formatted to follow an
// error message, so a failed start explains itself after the log is gone.
func logTail(path string) string {
	const maxBytes, maxLines = 4096, 15
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	if info, err := f.Stat(); err == nil && info.Size() > maxBytes {
		_, _ = f.Seek(-maxBytes, io.SeekEnd)
	}
	data, _ := io.ReadAll(f)
	lines := bytes.Split(bytes.TrimSpace(data), []byte("\n"))
	if len(lines) > maxLines {
		lines = lines[len(lines)-maxLines:]
	}
	if len(lines) == 0 || len(lines[0]) == 0 {
		return ""
	}
	return fmt.Sprintf("\nlast lines of %s:\n%s", filepath.Base(path), bytes.Join(lines, []byte("\n")))
}
