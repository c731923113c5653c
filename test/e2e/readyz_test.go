package e2e

import (
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/federator-dev/federator/pkg/fleet"
	"github.com/federator-dev/federator/pkg/hubinstall"
)

// A replica is ready only once its hub caches have synced: a Deployment
// rolling out federator must not count a replica that cannot read the hub
// as available. The caches are kept from syncing by rights: the
// controller runs as a user that may read CRDs only, until it is given
// the rest.
var _ = Describe("readiness", func() {
	It("serves /healthz at once but /readyz only once the hub caches have synced", func() {
		f, hubClient := separateFleet(1, false)
		_, err := hubinstall.Install(ctx, hubClient)
		Expect(err).NotTo(HaveOccurred())

		const user = "federator-readyz"
		crdReader := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "federator-e2e-crd-reader"},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions"},
				Verbs: []string{"get", "list", "watch"}}}}
		Expect(hubClient.Create(ctx, crdReader)).To(Succeed())
		bind := func(name, role string) {
			Expect(hubClient.Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
				RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
				Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}}})).To(Succeed())
		}
		bind("federator-e2e-crd-reader", crdReader.Name)
		cfg := rest.CopyConfig(f.Hub.Config)
		cfg.Impersonate.UserName = user
		kubeconfig := filepath.Join(GinkgoT().TempDir(), "readyz.kubeconfig")
		Expect(fleet.WriteKubeconfig(kubeconfig, "hub", cfg)).To(Succeed())

		probes := freeAddress()
		session, err := gexec.Start(exec.Command(federatorBinary(), "controller", "--kubeconfig", kubeconfig, "--install-crds=false",
			"--leader-elect=false", "--health-probe-bind-address", probes), GinkgoWriter, GinkgoWriter)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { session.Kill().Wait("10s") })

		By("answering /healthz while the caches cannot list what they watch")
		Eventually(httpStatus(probes, "/healthz"), "60s").Should(Equal(http.StatusOK))
		// The user may not list Works, bindings or policies: the caches
		// cannot sync however long it waits, so this is no race.
		for range 5 {
			status, body := probe(probes, "/readyz?verbose")
			Expect(status).To(Equal(http.StatusInternalServerError), "/readyz before the caches synced: %s", body)
			Expect(body).To(ContainSubstring("[-]hub-caches failed"))
			time.Sleep(time.Second)
		}
		Expect(session.ExitCode()).To(Equal(-1), "the controller runs on while it cannot sync")

		By("ready once given the rights: the caches sync")
		bind("federator-e2e-readyz-admin", "cluster-admin")
		Eventually(httpStatus(probes, "/readyz"), "90s", time.Second).Should(Equal(http.StatusOK))
	})
})

// probe is the status code and body of GET http://addr/path.
func probe(addr, path string) (int, string) {
	GinkgoHelper()
	resp, err := http.Get("http://" + addr + path)
	Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	Expect(err).NotTo(HaveOccurred())
	return resp.StatusCode, string(body)
}
