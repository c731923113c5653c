package fleet

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// HubControllers are what the hub runs: like Karmada's control plane, no
// workload controllers, so a Deployment there stays a template. namespace
// lets namespaces be deleted, garbage-collector cascades owner references,
// and serviceaccount-token fills ServiceAccount token Secrets, which tools
// that impersonate through a hub ServiceAccount wait for. A kind fleet's hub
// (pkg/kindfleet) runs the same list.
var HubControllers = []string{
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
	"node-lifecycle-controller",
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

func startControllerManager(ctx context.Context, spec controllerManagerSpec) (*process, error) {
	p, err := startOnFreePort(func(port int) (*process, error) {
		return startProcess(ctx, spec.cluster, spec.workDir, spec.binary, []string{
			"--kubeconfig=" + spec.kubeconfig,
			"--authentication-kubeconfig=" + spec.kubeconfig,
			"--authorization-kubeconfig=" + spec.kubeconfig,
			// envtest's API server has no request-header CA, which the lookup
			// would complain about forever; /healthz needs no client CA.
			"--authentication-skip-lookup=true",
			"--controllers=" + strings.Join(spec.controllers, ","),
			"--service-account-private-key-file=" + spec.saKeyFile,
			"--root-ca-file=" + spec.rootCAFile,
			"--leader-elect=false",
			"--bind-address=127.0.0.1",
			"--secure-port=" + strconv.Itoa(port),
			// Deleting a namespace with many objects should not be throttled
			// by the client defaults (20 QPS).
			"--kube-api-qps=100",
			"--kube-api-burst=200",
			// The node lifecycle controller keeps its default grace (50 s):
			// kwok renews the simulated nodes' Leases (startWorkloads).
		}, localURL("https", port, "/healthz"))
	})
	if err != nil {
		return nil, fmt.Errorf("fleet: %s: kube-controller-manager: %w", spec.cluster, err)
	}
	return p, nil
}
