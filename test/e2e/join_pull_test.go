package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	"github.com/onsi/gomega/gexec"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/federator-dev/federator/config/install"
	"github.com/federator-dev/federator/pkg/membership"
	"github.com/federator-dev/federator/pkg/yamldocs"
)

// federator join NAME --mode pull (docs/pull-mode.md): the agent's
// manifests written into a member, usable as written, printed alike by
// --export, and removed by unjoin.
var _ = Describe("federator join --mode pull", func() {
	It("writes a working agent into the member, --export prints the same manifests, and unjoin removes them", func() {
		f, hub := separateFleet(2, false)
		runController(f)
		m := f.Members[1]
		member := memberClient(m)
		agentObjects := []client.Object{
			&appsv1.Deployment{}, &corev1.ServiceAccount{}, &corev1.Secret{},
		}
		agentKeys := []client.ObjectKey{{Namespace: install.Namespace, Name: install.AgentName}, {Namespace: install.Namespace, Name: install.AgentName},
			{Namespace: install.Namespace, Name: install.AgentHubKubeconfigSecret}}
		clusterWide := []string{"ClusterRole", "ClusterRoleBinding"}

		By("join member2 --mode pull registers it and writes the agent's manifests into it, then waits for its agent")
		// The member runs no pods (no nodes, no controller manager): the
		// spec runs the agent the Secret configures as a process instead.
		join, err := gexec.Start(exec.Command(federatorBinary(), "join", m.Name, "--mode", "pull", "--kubeconfig", m.KubeconfigPath,
			"--hub-kubeconfig", f.Hub.KubeconfigPath, "--timeout=60s"), GinkgoWriter, GinkgoWriter)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { join.Kill().Wait("10s") })
		Eventually(join.Out, "30s").Should(gbytes.Say("waiting up to 1m0s for Cluster member2 to be Ready"))
		for i, o := range agentObjects {
			Expect(member.Get(ctx, agentKeys[i], o)).To(Succeed(), "%T %s is not in member2", o, agentKeys[i])
			Expect(o.GetManagedFields()).To(ContainElement(HaveField("Manager", "federator-join")))
		}
		for _, kind := range clusterWide {
			u := &unstructured.Unstructured{}
			u.SetAPIVersion("rbac.authorization.k8s.io/v1")
			u.SetKind(kind)
			Expect(member.Get(ctx, client.ObjectKey{Name: install.AgentName}, u)).To(Succeed(), "%s %s is not in member2", kind, install.AgentName)
		}
		c := &clusterv1alpha1.Cluster{}
		Expect(hub.Get(ctx, client.ObjectKey{Name: m.Name}, c)).To(Succeed())
		Expect(c.Spec.SyncMode).To(Equal(clusterv1alpha1.Pull))

		By("the agent, reaching the hub with the kubeconfig read back from that Secret, serves member2: Ready, and a template reaches it")
		secret := agentObjects[2].(*corev1.Secret)
		agentHub := filepath.Join(GinkgoT().TempDir(), "agent-hub.kubeconfig")
		Expect(os.WriteFile(agentHub, secret.Data[install.AgentHubKubeconfigKey], 0o600)).To(Succeed())
		startAgent(f, m.Name, agentHub)
		Eventually(join, "60s").Should(gexec.Exit(0), "join waits until the agent reports the Cluster Ready")
		Expect(join.Out).To(gbytes.Say("cluster member2 is Ready"))
		Expect(yamldocs.Apply(ctx, hub, []byte(`
apiVersion: v1
kind: Namespace
metadata: {name: joined}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: joined}
data: {color: blue}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: settings, namespace: joined}
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, name: settings}]
  placement: {clusterAffinity: {clusterNames: [member2]}}
`), client.FieldOwner("e2e"))).To(Succeed())
		settings := client.ObjectKey{Namespace: "joined", Name: "settings"}
		Eventually(func() error { return member.Get(ctx, settings, &corev1.ConfigMap{}) }, "30s").Should(Succeed())

		By("--export prints what join wrote (a new token aside), and kubectl applies it to member2 cleanly")
		exported := runCLI(exec.Command(federatorBinary(), "join", m.Name, "--mode", "pull", "--export",
			"--cluster-api-endpoint", m.Config.Host, "--hub-kubeconfig", f.Hub.KubeconfigPath))
		Expect(exported.code).To(Equal(0), exported.stderr)
		Expect(exported.stderr).To(ContainSubstring("Cluster member2 registered on the hub"))
		objs, err := yamldocs.Decode([]byte(exported.stdout))
		Expect(err).NotTo(HaveOccurred())
		Expect(objs).To(HaveLen(6))
		for _, o := range objs {
			stored := &unstructured.Unstructured{}
			stored.SetGroupVersionKind(o.GroupVersionKind())
			Expect(member.Get(ctx, client.ObjectKeyFromObject(o), stored)).To(Succeed(), "%s %s is not in member2", o.GetKind(), o.GetName())
			if o.GetKind() != "Secret" {
				Expect(subsetOf(o.Object, stored.Object)).To(BeEmpty(), "%s %s in member2 differs from what --export prints", o.GetKind(), o.GetName())
				continue
			}
			exportedSecret := &corev1.Secret{}
			Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, exportedSecret)).To(Succeed())
			written, err := clientcmd.RESTConfigFromKubeConfig(secret.Data[install.AgentHubKubeconfigKey])
			Expect(err).NotTo(HaveOccurred())
			printed, err := clientcmd.RESTConfigFromKubeConfig(exportedSecret.Data[install.AgentHubKubeconfigKey])
			Expect(err).NotTo(HaveOccurred())
			Expect(printed.Host).To(Equal(written.Host))
			Expect(printed.CAData).To(Equal(written.CAData))
			Expect(printed.BearerToken).NotTo(BeEmpty())
		}
		apply := exec.Command(filepath.Join(binDir, "kubectl"), "apply", "--dry-run=server", "-f", "-", "--kubeconfig", m.KubeconfigPath)
		apply.Stdin = strings.NewReader(exported.stdout)
		applied := runCLI(apply)
		Expect(applied.code).To(Equal(0), applied.stderr)

		By("unjoin member2 --cluster-kubeconfig: its agent deletes what it placed, the Cluster goes, then the agent goes from member2 and the hub")
		r := runCLI(exec.Command(federatorBinary(), "unjoin", m.Name, "--hub-kubeconfig", f.Hub.KubeconfigPath,
			"--cluster-kubeconfig", m.KubeconfigPath, "--timeout=60s"))
		Expect(r.code).To(Equal(0), r.stderr)
		Expect(r.stdout).To(ContainSubstring("Cluster member2 is gone"))
		Expect(apierrors.IsNotFound(member.Get(ctx, settings, &corev1.ConfigMap{}))).To(BeTrue(), "the agent left joined/settings in member2")
		for i, o := range agentObjects {
			Expect(apierrors.IsNotFound(member.Get(ctx, agentKeys[i], o))).To(BeTrue(), "%T %s is still in member2", o, agentKeys[i])
		}
		for _, kind := range clusterWide {
			u := &unstructured.Unstructured{}
			u.SetAPIVersion("rbac.authorization.k8s.io/v1")
			u.SetKind(kind)
			Expect(apierrors.IsNotFound(member.Get(ctx, client.ObjectKey{Name: install.AgentName}, u))).To(BeTrue(), "%s %s is still in member2", kind, install.AgentName)
		}
		Expect(member.Get(ctx, client.ObjectKey{Name: install.Namespace}, &corev1.Namespace{})).To(Succeed(), "unjoin deleted namespace %s", install.Namespace)
		// This fleet's hub runs no garbage collector: unjoin deleted them.
		for _, o := range membership.PullObjects(m.Name) {
			Expect(apierrors.IsNotFound(hub.Get(ctx, client.ObjectKeyFromObject(o), o))).To(BeTrue(), "%T %s is still on the hub", o, o.GetName())
		}
	})
})

// subsetOf lists where want is not contained in got: every field want
// sets, got sets alike (got may set more: the API server's defaults).
func subsetOf(want, got any) []string {
	var diffs []string
	var walk func(path string, want, got any)
	walk = func(path string, want, got any) {
		switch w := want.(type) {
		case map[string]any:
			g, ok := got.(map[string]any)
			if !ok {
				diffs = append(diffs, fmt.Sprintf("%s: %v, want a map", path, got))
				return
			}
			for k, v := range w {
				walk(path+"."+k, v, g[k])
			}
		case []any:
			g, ok := got.([]any)
			if !ok || len(g) != len(w) {
				diffs = append(diffs, fmt.Sprintf("%s: %v, want %v", path, got, want))
				return
			}
			for i := range w {
				walk(fmt.Sprintf("%s[%d]", path, i), w[i], g[i])
			}
		default:
			if !reflect.DeepEqual(fmt.Sprint(want), fmt.Sprint(got)) {
				diffs = append(diffs, fmt.Sprintf("%s: %v, want %v", path, got, want))
			}
		}
	}
	walk("", want, got)
	return diffs
}
