package e2e

import (
	"os"
	"os/exec"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Where the CLI finds the hub, and what it says when it cannot use it.
var _ = Describe("federator CLI connection (cli)", func() {
	const ns = "cli-connect"

	// inDir runs federator in dir with env (and nothing of this process's
	// KUBECONFIG or HOME), as a person in another shell would.
	inDir := func(dir string, env []string, args ...string) cliRun {
		GinkgoHelper()
		cmd := exec.Command(federatorBinary(), args...)
		cmd.Dir = dir
		cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir}, env...)
		return runCLI(cmd)
	}
	// kubeconfig writes a kubeconfig for the hub at server with auth.
	kubeconfig := func(path, server string, auth *clientcmdapi.AuthInfo) {
		GinkgoHelper()
		cfg := clientcmdapi.NewConfig()
		cfg.Clusters["hub"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: hubConfig().CAData}
		cfg.AuthInfos["user"] = auth
		cfg.Contexts["hub"] = &clientcmdapi.Context{Cluster: "hub", AuthInfo: "user", Namespace: ns}
		cfg.CurrentContext = "hub"
		Expect(clientcmd.WriteToFile(*cfg, path)).To(Succeed())
	}

	It("finds the hub by $KUBECONFIG, --fleet DIR or ./.fleet, and takes -n from the context", func() {
		propagatedEverywhere(ns, "web")
		hubKubeconfig := hubKubeconfig()
		nowhere := GinkgoT().TempDir()

		r := inDir(nowhere, []string{"KUBECONFIG=" + hubKubeconfig}, "get", "clusters")
		Expect(r.code).To(Equal(0), r.stderr)
		Expect(r.stdout).To(MatchRegexp(`(?m)^member3\s+v1\.`))

		r = inDir(nowhere, nil, "get", "clusters", "--fleet", filepath.Dir(hubKubeconfig))
		Expect(r.code).To(Equal(0), r.stderr)
		Expect(r.stdout).To(MatchRegexp(`(?m)^member1\s+v1\.`))

		here := GinkgoT().TempDir()
		Expect(os.Mkdir(filepath.Join(here, ".fleet"), 0o755)).To(Succeed())
		kubeconfig(filepath.Join(here, ".fleet", "hub.kubeconfig"), hubConfig().Host, &clientcmdapi.AuthInfo{
			ClientCertificateData: hubConfig().CertData, ClientKeyData: hubConfig().KeyData})
		r = inDir(here, nil, "get", "rollout")
		Expect(r.code).To(Equal(0), r.stderr)
		Expect(r.stdout).To(MatchRegexp(`(?m)^Deployment/web\s+member2\s+Applied`), "the context's namespace is cli-connect")

		r = inDir(nowhere, nil, "get", "rollout")
		Expect(r.code).To(Equal(1))
		Expect(r.stderr).To(ContainSubstring("no hub to talk to: no --kubeconfig, $KUBECONFIG is empty, there is no .fleet/hub.kubeconfig here"))
	})

	It("names the kubeconfig it tried when the hub does not answer, and the RBAC verb it lacks when refused", func() {
		propagatedEverywhere(ns, "web")
		dir := GinkgoT().TempDir()

		By("a hub that does not answer")
		dead := filepath.Join(dir, "dead.kubeconfig")
		kubeconfig(dead, "https://127.0.0.1:1", &clientcmdapi.AuthInfo{Token: "x"})
		r := inDir(dir, nil, "get", "rollout", "--kubeconfig", dead)
		Expect(r.code).To(Equal(1))
		Expect(r.stderr).To(ContainSubstring("cannot reach the hub at https://127.0.0.1:1 (kubeconfig " + dead + " (--kubeconfig))"))

		By("a user who may read policies but not patch them")
		hubCS, err := kubernetes.NewForConfig(hubConfig())
		Expect(err).NotTo(HaveOccurred())
		_, err = hubCS.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "viewer"}}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		_, err = hubCS.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "policy-viewer"},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{"policy.karmada.io"}, Resources: []string{"propagationpolicies"}, Verbs: []string{"get", "list"}}}},
			metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		_, err = hubCS.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "viewer"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: "viewer"}},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "policy-viewer"}}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		token, err := hubCS.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "viewer", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		viewer := filepath.Join(dir, "viewer.kubeconfig")
		kubeconfig(viewer, hubConfig().Host, &clientcmdapi.AuthInfo{Token: token.Status.Token})

		r = inDir(dir, nil, "suspend", "pp", "web", "-m", "not mine to pause", "--kubeconfig", viewer)
		Expect(r.code).To(Equal(1))
		Expect(r.stderr).To(ContainSubstring("the hub refused to patch PropagationPolicy cli-connect/web"))
		Expect(r.stderr).To(ContainSubstring(`ask its admin for RBAC verb "patch" on propagationpolicies.policy.karmada.io for the user of kubeconfig ` + viewer))
		Expect(r.stdout).To(BeEmpty())
		Expect(rolloutStates(ns, "web")).To(Equal(everywhere("Applied")), "nothing was suspended")
	})
})
