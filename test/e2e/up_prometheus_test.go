package e2e

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"
	"github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/federator-dev/federator/pkg/yamldocs"
)

// `federator up --prometheus`: a real Prometheus (Debian's package)
// beside the fleet, scraping the request metrics the members' stand-in
// application serves for what the hub placed there, steered per version
// by a ConfigMap a person writes with kubectl; and stopped with the fleet.
// Its own small fleet (bare members): the suite's runs no Prometheus.
var _ = Describe("federator up --prometheus", func() {
	It("serves each member's request metrics, steered per version, to a real Prometheus, and stops it on SIGTERM", func() {
		if _, err := exec.LookPath("prometheus"); err != nil {
			Skip("prometheus not found: apt-get install prometheus (Debian's package; docs/local-fleet.md)")
		}
		root, err := filepath.Abs("../..")
		Expect(err).NotTo(HaveOccurred())
		repoBin := filepath.Join(root, "bin")
		dir := GinkgoT().TempDir()
		session, err := gexec.Start(exec.Command(federatorBinary(), "up", "--members", "2", "--dir", dir, "--bin-dir", repoBin,
			"--workloads=false", "--controller-manager=false", "--prometheus"), GinkgoWriter, GinkgoWriter)
		Expect(err).NotTo(HaveOccurred())
		var children []fleetProcess
		DeferCleanup(func() { stopUpSession(session, children) })

		By("printing Prometheus' URL with the ready line, and writing it into the fleet's directory")
		promLine := regexp.MustCompile(`(?m)^federator: prometheus: (http://127\.0\.0\.1:\d+) \(the members' federator_fleet_http_requests_total, scraped every 1s; `)
		Eventually(func() string {
			if session.ExitCode() != -1 {
				StopTrying(fmt.Sprintf("federator up exited with code %d before it was ready", session.ExitCode())).Now()
			}
			return string(session.Out.Contents())
		}, 3*time.Minute, time.Second).Should(MatchRegexp(promLine.String()))
		children = descendantProcesses(session.Command.Process.Pid)
		promURL := promLine.FindStringSubmatch(string(session.Out.Contents()))[1]
		Expect(os.ReadFile(filepath.Join(dir, "prometheus.url"))).To(BeEquivalentTo(promURL + "\n"))
		var comms []string
		for _, p := range children {
			comms = append(comms, p.comm)
		}
		Expect(comms).To(ContainElement("prometheus"))

		By("steering member1's nginx:1.27 to fail 20% of its requests, with kubectl")
		kubectl := func(member string, args ...string) {
			GinkgoHelper()
			out, err := exec.Command(filepath.Join(repoBin, "kubectl"),
				append([]string{"--kubeconfig", filepath.Join(dir, member+".kubeconfig")}, args...)...).CombinedOutput()
			Expect(err).NotTo(HaveOccurred(), "kubectl %v: %s", args, out)
		}
		kubectl("member1", "create", "namespace", "federator-system")
		kubectl("member1", "create", "configmap", "federator-fleet-metrics", "-n", "federator-system", "--from-literal=1.27.errorRate=0.2")

		By("placing Deployment web on both members: nginx:1.27 on member1, nginx:1.26 on member2 (an OverridePolicy)")
		const ns = "prometheus-fleet"
		hub := upClient(filepath.Join(dir, "hub.kubeconfig"))
		Expect(yamldocs.Apply(ctx, hub, []byte(fmt.Sprintf(`
apiVersion: v1
kind: Namespace
metadata: {name: %[1]s}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: %[1]s}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: "nginx:1.27"}]}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement: {clusterAffinity: {clusterNames: [member1, member2]}}
---
apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata: {name: web, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  overrideRules:
  - targetCluster: {clusterNames: [member2]}
    overriders:
      imageOverrider: [{component: Tag, operator: replace, value: "1.26"}]
`, ns)), client.FieldOwner(fieldOwner))).To(Succeed())

		By("asking Prometheus, through its HTTP API, each member's error ratio over the last 10 s")
		promClient, err := api.NewClient(api.Config{Address: promURL})
		Expect(err).NotTo(HaveOccurred())
		prom := promv1.NewAPI(promClient)
		byCluster := func(q string) (map[string]float64, error) {
			v, _, _, err := prom.Query(ctx, q, time.Now())
			if err != nil {
				return nil, err
			}
			out := map[string]float64{}
			for _, s := range v.(model.Vector) {
				out[string(s.Metric["cluster"])+" "+string(s.Metric["version"])] = float64(s.Value)
			}
			return out, nil
		}
		selector := fmt.Sprintf(`namespace=%q, deployment="web"`, ns)
		errorRatio := fmt.Sprintf(`sum by (cluster, version) (rate(federator_fleet_http_requests_total{%[1]s, code="500"}[10s]))
  / sum by (cluster, version) (rate(federator_fleet_http_requests_total{%[1]s}[10s]))`, selector)
		Eventually(func() (map[string]float64, error) { return byCluster(errorRatio) }, time.Minute, time.Second).Should(And(
			HaveLen(2),
			HaveKeyWithValue("member1 nginx:1.27", BeNumerically("~", 0.2, 0.02)),
			HaveKeyWithValue("member2 nginx:1.26", BeNumerically("==", 0))))
		// 2 replicas at 10 requests a second each, once the 10 s window
		// holds no time before the Deployments came.
		Eventually(func() (map[string]float64, error) {
			return byCluster(fmt.Sprintf(`sum by (cluster, version) (rate(federator_fleet_http_requests_total{%s}[10s]))`, selector))
		}, time.Minute, time.Second).Should(And(
			HaveKeyWithValue("member1 nginx:1.27", BeNumerically("~", 20, 1)),
			HaveKeyWithValue("member2 nginx:1.26", BeNumerically("~", 20, 1))))

		By("stopping on SIGTERM: Prometheus gone with the fleet, its URL file removed")
		session.Terminate()
		Eventually(session, time.Minute).Should(gexec.Exit(0))
		for _, p := range children {
			Eventually(p.alive, "5s").Should(BeFalse(), "%s (pid %d) after federator exited", p.comm, p.pid)
		}
		Expect(filepath.Join(dir, "prometheus.url")).NotTo(BeAnExistingFile())
		_, err = http.Get(promURL + "/-/ready")
		Expect(err).To(MatchError(ContainSubstring("connection refused")))
		Expect(strings.Count(string(session.Out.Contents()), "federator: fleet stopped")).To(Equal(1))
	})
})
