package e2e

import (
	"bufio"
	"context"
	"fmt"
	"html"
	"io"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"time"

	"github.com/karmada-io/karmada/pkg/util/names"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	"github.com/onsi/gomega/gexec"
)

// `federator dashboard` against the suite's hub, read over real HTTP as a
// browser would: the grid says a suspended cluster is Held and why, the
// event stream says the grid changed, and nothing but GET is served.
var _ = Describe("federator dashboard", func() {
	It("shows a suspended cluster as Held with the holder's message within seconds, live, and refuses writes", func() {
		const ns = "dashboard-held"
		propagatedEverywhere(ns, "web")

		session, url := startDashboard("127.0.0.1:0")

		page := func(path string) string {
			resp, err := http.Get(url + strings.TrimPrefix(path, "/"))
			if err != nil {
				return err.Error()
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			return html.UnescapeString(string(body))
		}
		grid := "/fragment/grid?ns=" + ns
		Eventually(func() string { return page(grid) }).Should(And(
			ContainSubstring("Deployment</span> "+ns+"/web"), ContainSubstring(`<span class="st">Applied</span><span class="ver">nginx:1.25</span>`)))
		Expect(page(grid)).NotTo(ContainSubstring(`<span class="st">Held</span>`))

		By("listening to the page's event stream")
		streamCtx, stopStream := context.WithCancel(ctx)
		DeferCleanup(stopStream)
		req, _ := http.NewRequestWithContext(streamCtx, http.MethodGet, url+"events", nil)
		resp, err := http.DefaultClient.Do(req)
		Expect(err).NotTo(HaveOccurred())
		changes := gbytes.NewBuffer()
		go func() {
			defer GinkgoRecover()
			defer resp.Body.Close()
			sc := bufio.NewScanner(resp.Body)
			for sc.Scan() {
				_, _ = changes.Write([]byte(sc.Text() + "\n"))
			}
		}()
		Eventually(changes, "5s").Should(gbytes.Say("event: hello"))

		By("suspending member3 from the CLI")
		r := federatorCLI("suspend", "pp", "web", "-n", ns, "--clusters", "member3", "-m", "dashboard check")
		Expect(r.code).To(Equal(0), r.stderr)
		held := `suspended by annotation suspended.propagation.federator.dev/member3 on PropagationPolicy ` + ns +
			`/web ("dashboard check"); remove the annotation to resume`
		start := time.Now()
		Eventually(changes, "10s").Should(gbytes.Say(`event: change\ndata: .*grid`))
		Eventually(func() string { return page(grid) }, "10s", "200ms").Should(And(
			ContainSubstring(`<span class="st">Held</span>`), ContainSubstring(`title="`+held+`"`)))
		fmt.Fprintf(GinkgoWriter, "the grid showed Held %v after the suspension\n", time.Since(start))
		detail := page("/fragment/detail?cell=rb/" + ns + "/" + names.GenerateBindingName("Deployment", "web") + "&cluster=member3")
		Expect(detail).To(ContainSubstring(`>Held</span> <code>SuspendDispatching</code>`))
		Expect(detail).To(ContainSubstring(held))
		Expect(detail).To(ContainSubstring("Work dispatching is in a suspended state."))

		By("refusing anything but GET")
		for _, method := range []string{http.MethodPost, http.MethodPut, http.MethodDelete} {
			req, _ := http.NewRequest(method, url, strings.NewReader("{}"))
			resp, err := http.DefaultClient.Do(req)
			Expect(err).NotTo(HaveOccurred())
			resp.Body.Close()
			Expect(resp.StatusCode).To(Equal(http.StatusMethodNotAllowed), method)
		}

		By("stopping on Ctrl-C")
		session.Interrupt()
		Eventually(session, "10s").Should(gexec.Exit(0))

		r = federatorCLI("resume", "pp", "web", "-n", ns, "--clusters", "member3")
		Expect(r.code).To(Equal(0), r.stderr)
	})

	It("is served by federator controller --dashboard-bind-address from the controller's own cache", func() {
		const ns = "dashboard-controller"
		propagatedEverywhere(ns, "web")
		// No controllers: the suite's own run the hub; this one only serves
		// the page (every replica does, leader or not).
		session, err := gexec.Start(exec.Command(federatorBinary(), "controller", "--kubeconfig", hubKubeconfig(),
			"--controllers=", "--leader-elect=false", "--dashboard-bind-address", "127.0.0.1:0"), GinkgoWriter, GinkgoWriter)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { session.Kill().Wait("10s") })
		served := regexp.MustCompile(`"serving the dashboard".*"url":"(http://127\.0\.0\.1:\d+/)"`)
		Eventually(func() string { return string(session.Err.Contents()) }, "60s").Should(MatchRegexp(served.String()))
		url := served.FindStringSubmatch(string(session.Err.Contents()))[1]
		Eventually(func() string {
			resp, err := http.Get(url + "?ns=" + ns)
			if err != nil {
				return err.Error()
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			return string(body)
		}).Should(And(ContainSubstring(ns+"/web"), ContainSubstring(`<span class="st">Applied</span>`),
			ContainSubstring("<h2 id=\"clusters-h\">Clusters</h2>"), ContainSubstring("<td>member3</td>")))
		session.Interrupt()
		Eventually(session, "30s").Should(gexec.Exit(0))
	})
})

// startDashboard runs `federator dashboard` against the suite's hub on
// bindAddress until the spec ends, and returns it and the URL it printed.
func startDashboard(bindAddress string) (*gexec.Session, string) {
	GinkgoHelper()
	session, err := gexec.Start(exec.Command(federatorBinary(), "dashboard", "--kubeconfig", hubKubeconfig(),
		"--bind-address", bindAddress), GinkgoWriter, GinkgoWriter)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { session.Kill().Wait("10s") })
	Eventually(session.Out, "60s").Should(gbytes.Say(`federator dashboard: http://127\.0\.0\.1:\d+/\nhub https://`))
	return session, regexp.MustCompile(`http://127\.0\.0\.1:\d+/`).FindString(string(session.Out.Contents()))
}
