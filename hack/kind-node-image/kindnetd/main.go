// Command kindnetd is the node image's stand-in for kind's kindnetd
// (docker.io/kindest/kindnetd), whose source is not on the Go module proxy
// (kind keeps it outside its module), so it cannot be built here. It does
// the part of kindnetd a kind cluster needs, with the same DaemonSet
// (kind's default-cni.yaml: hostNetwork, HOST_IP, POD_SUBNET, the host's
// /etc/cni/net.d mounted):
//
//   - writes /etc/cni/net.d/10-kindnet.conflist for its node's PodCIDRs
//     (ptp + host-local + portmap, the plugins the node image carries);
//   - routes every other node's PodCIDRs via that node's InternalIP;
//   - masquerades traffic from the pod subnet to anywhere outside it.
//
// Its node is the Node whose InternalIP is HOST_IP. It re-syncs every 10
// seconds. Network policy and NRI, which newer kindnetd also does, are not.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

const cniConfigPath = "/etc/cni/net.d/10-kindnet.conflist"

func main() {
	hostIP := os.Getenv("HOST_IP")
	if hostIP == "" {
		log.Fatal("kindnetd: HOST_IP is not set")
	}
	cfg, err := rest.InClusterConfig()
	if err != nil {
		log.Fatalf("kindnetd: %v", err)
	}
	client := kubernetes.NewForConfigOrDie(cfg)
	subnets := splitList(os.Getenv("POD_SUBNET"))
	for {
		if err := sync(context.Background(), client, hostIP, subnets); err != nil {
			log.Printf("kindnetd: %v", err)
		}
		time.Sleep(10 * time.Second)
	}
}

func sync(ctx context.Context, client kubernetes.Interface, hostIP string, subnets []string) error {
	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("listing nodes: %w", err)
	}
	for _, s := range subnets {
		if err := ensureMasquerade(s); err != nil {
			return err
		}
	}
	for i := range nodes.Items {
		n := &nodes.Items[i]
		ip := internalIP(n)
		cidrs := n.Spec.PodCIDRs
		if len(cidrs) == 0 && n.Spec.PodCIDR != "" {
			cidrs = []string{n.Spec.PodCIDR}
		}
		if ip == "" || len(cidrs) == 0 {
			continue
		}
		if ip == hostIP {
			if err := writeCNIConfig(cidrs); err != nil {
				return err
			}
			continue
		}
		for _, c := range cidrs {
			if err := run("ip", "route", "replace", c, "via", ip); err != nil {
				return err
			}
		}
	}
	return nil
}

func internalIP(n *corev1.Node) string {
	for _, a := range n.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			return a.Address
		}
	}
	return ""
}

// conflist is the CNI configuration kindnetd writes, for cidrs.
func conflist(cidrs []string) ([]byte, error) {
	var ranges [][]map[string]string
	var routes []map[string]string
	for _, c := range cidrs {
		ranges = append(ranges, []map[string]string{{"subnet": c}})
		dst := "0.0.0.0/0"
		if strings.Contains(c, ":") {
			dst = "::/0"
		}
		routes = append(routes, map[string]string{"dst": dst})
	}
	return json.MarshalIndent(map[string]any{
		"cniVersion": "0.4.0",
		"name":       "kindnet",
		"plugins": []any{
			map[string]any{
				"type":   "ptp",
				"ipMasq": false,
				"mtu":    1500,
				"ipam": map[string]any{
					"type":    "host-local",
					"dataDir": "/run/cni-ipam-state",
					"routes":  routes,
					"ranges":  ranges,
				},
			},
			map[string]any{"type": "portmap", "capabilities": map[string]bool{"portMappings": true}},
		},
	}, "", "  ")
}

func writeCNIConfig(cidrs []string) error {
	want, err := conflist(cidrs)
	if err != nil {
		return err
	}
	if have, err := os.ReadFile(cniConfigPath); err == nil && bytes.Equal(have, want) {
		return nil
	}
	tmp := filepath.Join(filepath.Dir(cniConfigPath), ".10-kindnet.conflist.tmp")
	if err := os.WriteFile(tmp, want, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, cniConfigPath)
}

// ensureMasquerade masquerades what leaves subnet for anywhere outside it.
func ensureMasquerade(subnet string) error {
	ipt := "iptables"
	if ip, _, err := net.ParseCIDR(subnet); err != nil {
		return fmt.Errorf("POD_SUBNET %q: %w", subnet, err)
	} else if ip.To4() == nil {
		ipt = "ip6tables"
	}
	rule := []string{"POSTROUTING", "-s", subnet, "!", "-d", subnet, "-m", "comment", "--comment", "kindnetd masquerade", "-j", "MASQUERADE"}
	if run(ipt, append([]string{"-w", "-t", "nat", "-C"}, rule...)...) == nil {
		return nil
	}
	return run(ipt, append([]string{"-w", "-t", "nat", "-A"}, rule...)...)
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func run(name string, args ...string) error {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return nil
}
