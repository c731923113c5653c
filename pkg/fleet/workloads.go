package fleet

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

const (
	// DefaultNodes is the number of simulated nodes a member that runs
	// workloads has unless told otherwise.
	DefaultNodes = 2

	// kwokNodeAnnotation marks the nodes kwok plays the kubelet of
	// (kwok's own convention, as kwokctl creates them).
	kwokNodeAnnotation = "kwok.x-k8s.io/node"
	kwokNodeValue      = "fake"

	// nodeLeaseSeconds is how long a simulated node's Lease lasts: the
	// kubelet's default (nodeLeaseDurationSeconds); kwok renews it every
	// quarter of that.
	nodeLeaseSeconds = 40
)

// NodeAllocatable is what each simulated node offers the scheduler, so
// requests are honoured: a pod asking for more than a node has stays
// Pending, as in a real cluster.
var NodeAllocatable = corev1.ResourceList{
	corev1.ResourceCPU:    resource.MustParse("4"),
	corev1.ResourceMemory: resource.MustParse("8Gi"),
	corev1.ResourcePods:   resource.MustParse("110"),
}

// kwokStages is the pod lifecycle of simulated nodes: Ready at once, except
// images tagged -broken (never Ready) and -crash (restarts in a loop).
//
//go:embed kwok-stages.yaml
var kwokStages []byte

// startWorkloads starts what makes a member run pods: kube-scheduler, the
// simulated nodes and kwok, which plays their kubelets. The programs are
// returned in start order, kept running (supervise); on error nothing is
// left running.
func startWorkloads(ctx context.Context, c *Cluster, bins binaries, nodes int, progress *progressLog) (started []*supervised, err error) {
	defer func() {
		if err != nil {
			for i := len(started) - 1; i >= 0; i-- {
				_ = started[i].stop()
			}
			started = nil
		}
	}()
	kubeconfig := filepath.Join(c.workDir, "workloads.kubeconfig")
	if err := WriteKubeconfig(kubeconfig, c.Name, c.Config); err != nil {
		return nil, fmt.Errorf("fleet: %s: %w", c.Name, err)
	}

	scheduler, err := supervise(ctx, c.Name, "kube-scheduler", progress, func(ctx context.Context) (*process, error) {
		return startOnFreePort(func(port int) (*process, error) {
			return startProcess(ctx, c.Name, c.workDir, bins.scheduler, []string{
				"--kubeconfig=" + kubeconfig,
				"--authentication-kubeconfig=" + kubeconfig,
				"--authorization-kubeconfig=" + kubeconfig,
				"--authentication-skip-lookup=true", // see startControllerManager
				"--leader-elect=false",
				"--bind-address=127.0.0.1",
				"--secure-port=" + strconv.Itoa(port),
			}, localURL("https", port, "/healthz"))
		})
	})
	if err != nil {
		return nil, fmt.Errorf("fleet: %s: kube-scheduler: %w", c.Name, err)
	}
	started = append(started, scheduler)

	if err := createNodes(ctx, c.Config, nodes); err != nil {
		return started, fmt.Errorf("fleet: %s: creating simulated nodes: %w", c.Name, err)
	}
	stages := filepath.Join(c.workDir, "kwok-stages.yaml")
	if err := os.WriteFile(stages, kwokStages, 0o600); err != nil {
		return started, fmt.Errorf("fleet: %s: %w", c.Name, err)
	}
	kwok, err := supervise(ctx, c.Name, "kwok", progress, func(ctx context.Context) (*process, error) {
		return startOnFreePort(func(port int) (*process, error) {
			return startProcess(ctx, c.Name, c.workDir, bins.kwok, []string{
				"--kubeconfig=" + kubeconfig,
				"--config=" + stages,
				"--manage-all-nodes=false",
				"--manage-nodes-with-annotation-selector=" + kwokNodeAnnotation + "=" + kwokNodeValue,
				// Hold each node's Lease in kube-node-lease as a kubelet does
				// (its default: 40 s, renewed every 10 s), so the node lifecycle
				// controller sees them alive within its default grace (50 s).
				// Without it kwok holds no Lease and reports node status only
				// every ~10 minutes (its default node stages), and nodes are
				// taken for dead between reports.
				"--node-lease-duration-seconds=" + strconv.Itoa(nodeLeaseSeconds),
				"--server-address=127.0.0.1:" + strconv.Itoa(port),
			}, localURL("http", port, "/healthz"))
		})
	})
	if err != nil {
		return started, fmt.Errorf("fleet: %s: kwok: %w", c.Name, err)
	}
	return append(started, kwok), nil
}

// createNodes registers n nodes, node1..n, for kwok to play. Their
// allocatable resources are set before kwok initialises them, which keeps
// what it finds.
func createNodes(ctx context.Context, cfg *rest.Config, n int) error {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	allocatablePatch, err := json.Marshal(map[string]any{"status": corev1.NodeStatus{
		Allocatable: NodeAllocatable, Capacity: NodeAllocatable}})
	if err != nil {
		return err
	}
	for i := 1; i <= n; i++ {
		name := "node" + strconv.Itoa(i)
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Annotations: map[string]string{kwokNodeAnnotation: kwokNodeValue},
			Labels: map[string]string{
				corev1.LabelHostname: name, corev1.LabelOSStable: "linux", corev1.LabelArchStable: "amd64",
				"type": "kwok",
			},
		}}
		if _, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
			return err
		}
		// A patch, not an update: the node-lifecycle controller may have
		// written the node already.
		if _, err := cs.CoreV1().Nodes().Patch(ctx, name, types.MergePatchType, allocatablePatch, metav1.PatchOptions{}, "status"); err != nil {
			return err
		}
	}
	return nil
}
