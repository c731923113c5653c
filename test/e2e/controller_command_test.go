package e2e

import (
	"io"
	"net/http"
	"os/exec"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/federator-dev/federator/config/install/crds"
)

// `federator controller --kubeconfig HUB` against a hub it did not start:
// members come only from the hub's Cluster objects and their Secrets.
var _ = Describe("federator controller", func() {
	It("propagates from an existing hub to the members registered there, serves pprof when asked, and stops on SIGTERM", func() {
		// A bare hub: the controller installs the CRDs and admission policies.
		f, hub := separateFleet(1, false)
		pprofAddr := freeAddress()
		session := runController(f, "--enable-pprof", "--profiling-bind-address", pprofAddr)
		// Karmada's profiling flags: net/http/pprof at the address given.
		resp, err := http.Get("http://" + pprofAddr + "/debug/pprof/goroutine?debug=1")
		Expect(err).NotTo(HaveOccurred())
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		Expect(err).NotTo(HaveOccurred())
		Expect(resp.StatusCode).To(Equal(http.StatusOK))
		Expect(string(body)).To(ContainSubstring("goroutine profile:"))
		crdList, err := crds.CRDs()
		Expect(err).NotTo(HaveOccurred())
		for _, crd := range crdList {
			Expect(hub.Get(ctx, client.ObjectKeyFromObject(crd), &apiextensionsv1.CustomResourceDefinition{})).To(Succeed(), crd.Name)
		}

		member := joinMembers(f, hub)["member1"]

		propagateShopWeb(hub, member)

		session.Terminate()
		Eventually(session, "30s").Should(gexec.Exit(0))
	})

	It("refuses to start with no hub to run against (no --kubeconfig, not in a cluster, no kubeconfig file) and says which flag to give", func() {
		cmd := exec.Command(federatorBinary(), "controller")
		cmd.Env = []string{"HOME=" + GinkgoT().TempDir(), "PATH=/usr/bin:/bin"}
		session, err := gexec.Start(cmd, GinkgoWriter, GinkgoWriter)
		Expect(err).NotTo(HaveOccurred())
		Eventually(session, "30s").Should(gexec.Exit(1))
		Expect(string(session.Err.Contents())).To(ContainSubstring("no hub to run against: not in a cluster and no kubeconfig found; give --kubeconfig"))
	})
})
