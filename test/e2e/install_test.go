package e2e

import (
	"os"
	"os/exec"
	"path/filepath"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	"github.com/onsi/gomega/gexec"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/federator-dev/federator/config/install"
	"github.com/federator-dev/federator/pkg/fleet"
	"github.com/federator-dev/federator/pkg/yamldocs"
)

// kubectlRun runs bin/kubectl with args against the suite's hub.
func kubectlRun(args ...string) cliRun {
	GinkgoHelper()
	return runCLI(exec.Command(filepath.Join(binDir, "kubectl"), append(args, "--kubeconfig", hubKubeconfig())...))
}

var _ = Describe("federator install", func() {
	It("exports manifests the hub accepts (kubectl apply --dry-run=server), whose pods the restricted Pod Security Standard admits", func() {
		export := runCLI(exec.Command(federatorBinary(), "install", "--export"))
		Expect(export.code).To(Equal(0), export.stderr)
		file := filepath.Join(GinkgoT().TempDir(), "federator.yaml")
		Expect(os.WriteFile(file, []byte(export.stdout), 0o600)).To(Succeed())

		// A dry run cannot create the namespace the rest goes into: the
		// namespace is applied for real, with its Pod Security label, so the
		// API server judges the Deployment's pods against it.
		objs, err := yamldocs.Decode([]byte(export.stdout))
		Expect(err).NotTo(HaveOccurred())
		Expect(objs[0].GetKind()).To(Equal("Namespace"))
		Expect(objs[0].GetLabels()).To(HaveKeyWithValue("pod-security.kubernetes.io/enforce", "restricted"))
		Expect(hubClient.Apply(ctx, client.ApplyConfigurationFromUnstructured(objs[0]), client.FieldOwner("e2e"))).To(Succeed())

		r := kubectlRun("apply", "--dry-run=server", "-f", file)
		Expect(r.code).To(Equal(0), r.stderr)
		Expect(r.stdout).To(ContainSubstring("deployment.apps/" + install.DeploymentName))
		Expect(r.stdout).To(ContainSubstring("clusterrole.rbac.authorization.k8s.io/federator-controller"))
		Expect(r.stderr).NotTo(ContainSubstring("would violate PodSecurity"))

		// The kustomization builds the same, with the kubectl users have.
		r = kubectlRun("apply", "--dry-run=server", "-k", filepath.Join("..", "..", "config", "install"))
		Expect(r.code).To(Equal(0), r.stderr)
		Expect(r.stderr).NotTo(ContainSubstring("would violate PodSecurity"))
	})

	It("runs the controller with only the installed RBAC; join registers a cluster (refusing one already joined), unjoin removes it", func() {
		f, hub := separateFleet(1, false)
		r := cliOn(f.Hub.KubeconfigPath, "install", "--wait=false")
		Expect(r.code).To(Equal(0), r.stderr)
		Expect(r.stdout).To(ContainSubstring("CustomResourceDefinition works.work.karmada.io applied"))

		// The controller as the installed ServiceAccount, with nothing but
		// the rights the manifests grant it.
		asController := filepath.Join(GinkgoT().TempDir(), "controller.kubeconfig")
		cfg := rest.CopyConfig(f.Hub.Config)
		cfg.Impersonate.UserName = "system:serviceaccount:" + install.Namespace + ":federator-controller"
		Expect(fleet.WriteKubeconfig(asController, "hub", cfg)).To(Succeed())
		controller, err := gexec.Start(exec.Command(federatorBinary(), "controller", "--kubeconfig", asController,
			"--install-crds=false", "--leader-elect=true", "--leader-election-namespace", install.Namespace, "--cluster-status-interval=1s"),
			GinkgoWriter, GinkgoWriter)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { controller.Kill().Wait("10s") })
		Eventually(controller.Out, "60s").Should(gbytes.Say("federator: controllers running against"))

		member := f.Members[0]
		join := func(name, kubeconfig string) cliRun {
			return runCLI(exec.Command(federatorBinary(), "join", name, "--kubeconfig", kubeconfig,
				"--hub-kubeconfig", f.Hub.KubeconfigPath, "--timeout=60s"))
		}
		r = join(member.Name, member.KubeconfigPath)
		Expect(r.code).To(Equal(0), r.stderr)
		Expect(r.stdout).To(ContainSubstring("cluster " + member.Name + " is Ready"))

		By("refusing the same cluster under another name, and another cluster under a name taken")
		r = join("again", member.KubeconfigPath)
		Expect(r.code).To(Equal(1))
		Expect(r.stderr).To(ContainSubstring("joined already, as " + member.Name))
		r = join(member.Name, env.MemberEndpoints["member1"].KubeconfigPath)
		Expect(r.code).To(Equal(1))
		Expect(r.stderr).To(ContainSubstring("the name " + member.Name + " is taken"))

		By("propagating to the joined cluster")
		memberClient, err := client.New(member.Config, client.Options{})
		Expect(err).NotTo(HaveOccurred())
		propagateShopWeb(hub, memberClient)
		Expect(string(controller.Err.Contents())).NotTo(ContainSubstring("forbidden"),
			"the controller lacks a right the installed RBAC should grant")

		By("unjoining: what was placed in the member is deleted, then the Cluster and its Secrets go")
		r = cliOn(f.Hub.KubeconfigPath, "unjoin", member.Name, "--timeout=60s")
		Expect(r.code).To(Equal(0), r.stderr)
		Expect(r.stdout).To(ContainSubstring("1 object deleted from " + member.Name))
		Expect(r.stdout).To(ContainSubstring("Cluster " + member.Name + " is gone"))
		Expect(apierrors.IsNotFound(hub.Get(ctx, client.ObjectKey{Name: member.Name}, &clusterv1alpha1.Cluster{}))).To(BeTrue())
		Expect(apierrors.IsNotFound(hub.Get(ctx, client.ObjectKey{Namespace: "karmada-cluster", Name: member.Name}, &corev1.Secret{}))).To(BeTrue())
		Expect(apierrors.IsNotFound(memberClient.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "web"}, &appsv1.Deployment{}))).To(BeTrue(),
			"shop/web is still in the member after unjoin")
		// The namespace the hub propagated stays in a cluster that leaves.
		Expect(memberClient.Get(ctx, client.ObjectKey{Name: "shop"}, &corev1.Namespace{})).To(Succeed())
		Expect(string(controller.Err.Contents())).NotTo(ContainSubstring("forbidden"))
	})
})
