package e2e

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1alpha1 "github.com/federator-dev/federator/apis/rollouts/v1alpha1"
)

// The dashboard as a person sees it: headless Chromium (Debian's
// chromium, driven with chromedp) opens `federator dashboard` against the
// suite's hub, and the spec reads the page's DOM while the fleet changes
// under it — no reloads: what changes arrives over the event stream. Each
// step leaves a full-page screenshot in the directory the spec prints
// ($ARTIFACTS/dashboard-browser, else _output/e2e/dashboard-browser).
var _ = Describe("the dashboard in a browser", func() {
	It("shows a suspension, a closed gate and a failed rollout live, opens a cell from the keyboard, and says when it lost the connection", func() {
		bareMembersOnly("the spec reports the members' Deployments ready itself")
		const ns = "dashboard-browser"
		b := startBrowser("dashboard-browser")

		By("a fleet of four templates: web, api behind the gate change-freeze, shop under a Rollout, a ConfigMap")
		namespace(ns)
		mustApply(`
apiVersion: gating.federator.dev/v1alpha1
kind: Gate
metadata: {name: change-freeze, namespace: %s}
spec: {default: opened}
`, ns)
		for _, name := range []string{"web", "api", "shop"} {
			deployment(ns, name, "nginx:1.25")
		}
		mustApply(`{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"namespace": %q, "name": "settings"}, "data": {"level": "1"}}`, ns)
		for _, name := range []string{"web", "api", "shop"} {
			propagationPolicy(ns, name, nil)
		}
		patchPolicy(ns, "api", `{"metadata": {"annotations": {"gating.federator.dev/gates": "change-freeze"}}}`)
		mustApply(`
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: settings, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, name: settings}]
  placement: {clusterAffinity: {clusterNames: [member1, member2, member3]}}
---
apiVersion: rollouts.federator.dev/v1alpha1
kind: Rollout
metadata: {name: shop, namespace: %[1]s}
spec:
  policyRef: {name: shop}
  onFailure: Rollback
  stages:
  - {name: canary, clusters: [member1]}
`, ns)
		for _, name := range []string{"web", "api", "shop"} {
			Eventually(func() map[string]string { return imagesEverywhere(ns, name) }).Should(Equal(everywhere("nginx:1.25")), name)
		}
		// The suite's members run no Deployment controller: the spec
		// says shop is ready there, so its first revision is healthy
		// everywhere and the Rollout has one to roll back to.
		for m := range members {
			reportReady(m, ns, "shop")
		}
		Eventually(func(g Gomega) {
			ro := &rolloutsv1alpha1.Rollout{}
			g.Expect(hubClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "shop"}, ro)).To(Succeed())
			g.Expect(meta.IsStatusConditionTrue(ro.Status.Conditions, rolloutsv1alpha1.ConditionCompleted)).To(BeTrue(), "%+v", ro.Status)
		}).Should(Succeed())

		session, dashboard := startDashboard("127.0.0.1:0")
		b.open(dashboard + "?ns=" + ns)

		By("the grid: four templates × three clusters, every cell Applied, the page live")
		Eventually(b.liveState, "10s").Should(Equal("live"))
		Eventually(b.cells, "10s").Should(And(HaveLen(12), HaveEach(HaveField("State", "Applied"))))
		Expect(b.cells()).To(HaveKeyWithValue("web-deployment@member3", HaveField("Version", "nginx:1.25")))
		b.screenshot("applied")

		By("suspending member3 for web: the cell says Held and why, without a reload")
		r := federatorCLI("suspend", "pp", "web", "-n", ns, "--clusters", "member3", "-m", "browser check")
		Expect(r.code).To(Equal(0), r.stderr)
		start := time.Now()
		held := `suspended by annotation suspended.propagation.federator.dev/member3 on PropagationPolicy ` + ns +
			`/web ("browser check"); remove the annotation to resume`
		Eventually(b.cells, "10s").Should(HaveKeyWithValue("web-deployment@member3", And(
			HaveField("State", "Held"), HaveField("Title", held), HaveField("Visible", true))))
		GinkgoWriter.Printf("the page showed Held %v after the suspension\n", time.Since(start))
		Expect(b.cells()).To(HaveKeyWithValue("web-deployment@member1", HaveField("State", "Applied")))
		b.notReloaded()
		b.screenshot("suspended")

		By("closing the gate change-freeze: the gates section says closed, and api is Held everywhere")
		r = federatorCLI("gate", "close", "change-freeze", "-n", ns)
		Expect(r.code).To(Equal(0), r.stderr)
		Eventually(func() (string, error) { return b.text(`#gates tbody tr`, ns+"/change-freeze") }, "10s").Should(
			ContainSubstring("closed"))
		for _, m := range []string{"member1", "member2", "member3"} {
			Eventually(b.cells, "10s").Should(HaveKeyWithValue("api-deployment@"+m, And(HaveField("State", "Held"),
				HaveField("Title", ContainSubstring("gate '"+ns+"/change-freeze' is closed")))), m)
		}
		b.notReloaded()
		Expect(b.missingMarks()).To(BeEmpty(), "marks shown as empty boxes")
		b.screenshot("gate-closed")

		By("rolling out shop at nginx:1.26-broken: the canary fails its deadline and is rolled back")
		// The deadline is cut to 10s only now: the first revision, under
		// the default, had as long as a loaded machine takes to dispatch
		// it and the spec to report it ready.
		Eventually(func() error {
			ro := &rolloutsv1alpha1.Rollout{}
			if err := hubClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "shop"}, ro); err != nil {
				return err
			}
			ro.Spec.ProgressDeadline = &metav1.Duration{Duration: 10 * time.Second}
			return hubClient.Update(ctx, ro)
		}).Should(Succeed())
		setImage(ns, "shop", "nginx:1.26-broken")
		Eventually(func() (string, error) { return b.text(`#rollouts article`, "Rollout "+ns+"/shop") }, "60s").Should(And(
			MatchRegexp(`member1\s+canary\s+RolledBack`), ContainSubstring("Failed=True")))
		Expect(b.cells()).To(HaveKeyWithValue("shop-deployment@member2", HaveField("State", "Held")))
		b.notReloaded()
		b.screenshot("rolled-back")
		b.screenshotDownTo("dashboard", "#gates")

		By("the keyboard: Tab reaches web on member3, Enter opens it with the holder's message")
		Expect(b.run(chromedp.Evaluate[string](`document.activeElement.blur(), "blurred"`))).To(Equal("blurred"))
		focused := ""
		for range 80 {
			Expect(b.do(chromedp.KeyEvent(kb.Tab))).To(Succeed())
			focused = b.focused()
			if focused == "web-deployment@member3" {
				break
			}
		}
		Expect(focused).To(Equal("web-deployment@member3"), "Tab never reached the cell")
		Expect(b.run(chromedp.Evaluate[string](`getComputedStyle(document.activeElement).outlineStyle`))).NotTo(Equal("none"),
			"the focused cell shows no focus")
		Expect(b.do(chromedp.KeyEvent(kb.Enter))).To(Succeed())
		Eventually(func() (string, error) { return b.text(`#detail`, "") }, "10s").Should(And(
			ContainSubstring("Deployment "+ns+"/web on member3"), MatchRegexp(`State\s+Held SuspendDispatching`), ContainSubstring(held)))
		Expect(b.focused()).To(Equal("web-deployment@member3"), "opening the cell moved the focus")
		b.notReloaded()
		b.screenshot("cell-opened")

		By("stopping the dashboard: the page says it lost the connection")
		session.Interrupt()
		Eventually(session, "10s").Should(gexec.Exit(0))
		Eventually(b.liveState, "10s").Should(Equal("lost"))
		Expect(b.text(`#live`, "")).To(Equal("connection lost, reconnecting…"))
		b.screenshot("connection-lost")

		By("resuming member3 while the page is disconnected, then starting the dashboard again on its address")
		r = federatorCLI("resume", "pp", "web", "-n", ns, "--clusters", "member3")
		Expect(r.code).To(Equal(0), r.stderr)
		u, err := url.Parse(dashboard)
		Expect(err).NotTo(HaveOccurred())
		startDashboard(u.Host)
		Eventually(b.liveState, "15s").Should(Equal("live"))
		Eventually(b.cells, "10s").Should(HaveKeyWithValue("web-deployment@member3", HaveField("State", "Applied")))
		// The change that makes the cell Applied fetches the grid and the
		// open cell side by side: the detail may land a moment after.
		Eventually(func() (string, error) { return b.text(`#detail`, "") }, "10s").Should(MatchRegexp(`State\s+Applied`), "the open cell was fetched again")
		b.notReloaded()
		b.screenshot("reconnected")
		Expect(b.exceptions()).To(BeEmpty(), "the page's scripts threw")

		r = federatorCLI("gate", "open", "change-freeze", "-n", ns)
		Expect(r.code).To(Equal(0), r.stderr)
	})
})

// browser is a headless Chromium tab and where its screenshots go.
type browser struct {
	ctx       context.Context
	artifacts string
	shots     int

	mu     sync.Mutex
	thrown []string
}

// chromium is the browser the spec drives: $CHROMIUM, else the first of
// Debian's and other distributions' names on $PATH; "" when none is.
func chromium() string {
	names := []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}
	if p := os.Getenv("CHROMIUM"); p != "" {
		names = []string{p}
	}
	for _, name := range names {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// artifactsDir is where a spec leaves what a person looks at afterwards:
// $ARTIFACTS/name, else _output/e2e/name at the top of the repository,
// emptied first.
func artifactsDir(name string) string {
	GinkgoHelper()
	base := os.Getenv("ARTIFACTS")
	if base == "" {
		base = filepath.Join("..", "..", "_output", "e2e") // go test runs in test/e2e
	}
	dir, err := filepath.Abs(filepath.Join(base, name))
	Expect(err).NotTo(HaveOccurred())
	Expect(os.RemoveAll(dir)).To(Succeed())
	Expect(os.MkdirAll(dir, 0o755)).To(Succeed())
	AddReportEntry("artifacts", dir)
	GinkgoWriter.Printf("screenshots and the browser's log go to %s\n", dir)
	return dir
}

// startBrowser starts headless Chromium with a fresh profile for the spec,
// or skips the spec where there is none. The browser, its profile and
// what it started end with the spec; a failed spec leaves a screenshot
// and the page's HTML.
func startBrowser(name string) *browser {
	GinkgoHelper()
	path := chromium()
	if path == "" {
		Skip("chromium not found: apt-get install chromium (docs/dashboard.md)")
	}
	b := &browser{artifacts: artifactsDir(name)}
	// The profile, and TMPDIR for what Chromium keeps beside it (its
	// singleton lock), in one directory the spec removes.
	home, err := os.MkdirTemp("", "federator-chromium-")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(os.RemoveAll, home)
	profile, tmp := filepath.Join(home, "profile"), filepath.Join(home, "tmp")
	Expect(os.Mkdir(tmp, 0o700)).To(Succeed())
	logFile, err := os.Create(filepath.Join(b.artifacts, "chromium.log"))
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(logFile.Close)
	allocCtx, stopChromium := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(path), chromedp.UserDataDir(profile), chromedp.Env("TMPDIR="+tmp),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, // root in a container: no sandbox
		chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-sync", true),
		chromedp.Flag("force-color-profile", "srgb"), chromedp.Flag("hide-scrollbars", true),
		chromedp.WindowSize(1000, 760), chromedp.CombinedOutput(logFile))
	DeferCleanup(stopChromium) // waits until the browser has exited
	tab, closeTab := chromedp.NewContext(allocCtx)
	DeferCleanup(func() {
		stop, cancel := context.WithTimeout(tab, 10*time.Second)
		defer cancel()
		_ = chromedp.Cancel(stop)
		closeTab()
	})
	b.ctx = tab
	Expect(chromedp.Do(b.ctx)).To(Succeed(), "starting %s", path)
	go func() {
		for ev, err := range chromedp.Events(b.ctx, runtime.ExceptionThrown) {
			if err != nil {
				return
			}
			b.mu.Lock()
			b.thrown = append(b.thrown, ev.ExceptionDetails.Text+" "+exceptionDescription(ev.ExceptionDetails))
			b.mu.Unlock()
		}
	}()
	DeferCleanup(func() {
		if !CurrentSpecReport().Failed() {
			return
		}
		b.screenshot("failed")
		if html, err := b.run(chromedp.Evaluate[string](`document.documentElement.outerHTML`)); err == nil {
			_ = os.WriteFile(filepath.Join(b.artifacts, "failed.html"), []byte(html), 0o644)
		}
	})
	return b
}

func exceptionDescription(d *runtime.ExceptionDetails) string {
	if d.Exception == nil {
		return ""
	}
	return d.Exception.Description
}

// inTab runs one action in b's tab, bounded so that a stuck browser fails
// the spec instead of hanging it.
func inTab[T any](b *browser, a chromedp.Action[T]) (T, error) {
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	return chromedp.Run(ctx, a)
}

func (b *browser) run(a chromedp.Action[string]) (string, error) { return inTab(b, a) }

func (b *browser) do(steps ...chromedp.Action[chromedp.Void]) error {
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	return chromedp.Do(ctx, steps...)
}

// open loads url and marks the page, so notReloaded can tell that
// everything after came without a reload.
func (b *browser) open(url string) {
	GinkgoHelper()
	Expect(b.do(chromedp.Navigate(url))).To(Succeed())
	Expect(b.run(chromedp.Evaluate[string](`window.loadedBySpec = "yes"`))).To(Equal("yes"))
}

func (b *browser) notReloaded() {
	GinkgoHelper()
	Expect(b.run(chromedp.Evaluate[string](`String(window.loadedBySpec)`))).To(Equal("yes"), "the page was reloaded")
}

// cellDOM is one grid cell as the page shows it.
type cellDOM struct {
	// State is the state's visible text; Visible that it takes room
	// on the page (it is not only a colour, nor only for screen readers).
	State   string
	Visible bool
	Version string
	// Title is what hovering shows: the holder's message.
	Title string
}

// cells is every grid cell by "<binding name>@<cluster>".
func (b *browser) cells() (map[string]cellDOM, error) {
	return inTab(b, chromedp.Evaluate[map[string]cellDOM](`Object.fromEntries(
  [...document.querySelectorAll("#grid a.cell")].map(a => {
    const st = a.querySelector(".st"), ver = a.querySelector(".ver");
    const box = st.getBoundingClientRect();
    return [a.dataset.cell.split("/").pop() + "@" + a.dataset.cluster,
      {State: st.innerText.trim(), Visible: box.width > 1 && box.height > 1, Version: ver ? ver.innerText : "", Title: a.title}];
  }))`))
}

// text is the visible text of the first element matching selector whose
// text contains within ("" for the first element).
func (b *browser) text(selector, within string) (string, error) {
	return b.run(chromedp.Evaluate[string](fmt.Sprintf(`(() => {
  const el = [...document.querySelectorAll(%q)].find(e => e.innerText.includes(%q));
  return el ? el.innerText : "";
})()`, selector, within)))
}

// liveState is what the top of the page says of the event stream: live,
// lost or connecting.
func (b *browser) liveState() (string, error) {
	return b.run(chromedp.Evaluate[string](`document.getElementById("live").dataset.state`))
}

// focused names the grid cell that has the keyboard focus, else the
// focused element's tag.
func (b *browser) focused() string {
	GinkgoHelper()
	f, err := b.run(chromedp.Evaluate[string](`(() => {
  const a = document.activeElement;
  return a && a.dataset.cell ? a.dataset.cell.split("/").pop() + "@" + a.dataset.cluster : (a ? a.tagName : "");
})()`))
	Expect(err).NotTo(HaveOccurred())
	return f
}

// missingMarks lists the marks drawn before a cell's state (✔ Applied)
// that the browser has no glyph for: drawn with the cell's font, they
// look like a code point no font has.
func (b *browser) missingMarks() []string {
	GinkgoHelper()
	missing, err := inTab(b, chromedp.Evaluate[[]string](`(() => {
  const draw = (font, s) => {
    const c = document.createElement("canvas"); c.width = 80; c.height = 40;
    const x = c.getContext("2d"); x.font = font; x.fillText(s, 4, 28); return c.toDataURL();
  };
  const missing = new Set();
  document.querySelectorAll("#grid a.cell .st").forEach(st => {
    const content = getComputedStyle(st, "::before").content;
    if (!content.startsWith('"')) return;
    const font = getComputedStyle(st).font;
    for (const ch of JSON.parse(content).trim()) {
      if (draw(font, ch) === draw(font, "\u0378")) missing.add(st.innerText.trim() + ": " + ch);
    }
  });
  return [...missing];
})()`))
	Expect(err).NotTo(HaveOccurred())
	return missing
}

func (b *browser) exceptions() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.thrown...)
}

// screenshot saves the whole page as NN-name.png.
func (b *browser) screenshot(name string) {
	GinkgoHelper()
	b.save(name, chromedp.FullScreenshot(100))
}

// screenshotDownTo saves the page from its top down to the end of the
// element selector names: the picture docs/images/dashboard.png is.
func (b *browser) screenshotDownTo(name, selector string) {
	GinkgoHelper()
	b.save(name, func(ctx context.Context, t *chromedp.Target) ([]byte, error) {
		bottom, err := chromedp.Evaluate[float64](fmt.Sprintf(
			`document.querySelector(%q).getBoundingClientRect().bottom + window.scrollY + 8`, selector))(ctx, t)
		if err != nil {
			return nil, err
		}
		width, err := chromedp.Evaluate[float64](`document.documentElement.clientWidth`)(ctx, t)
		if err != nil {
			return nil, err
		}
		r, err := cdp.Call(ctx, t, page.CaptureScreenshot, page.CaptureScreenshotParams{
			Format: page.CaptureScreenshotFormatPng, CaptureBeyondViewport: ptr.To(true), FromSurface: ptr.To(true),
			Clip: &page.Viewport{Width: width, Height: bottom, Scale: 1}})
		if err != nil {
			return nil, err
		}
		return r.Data, nil
	})
}

func (b *browser) save(name string, shot chromedp.Action[[]byte]) {
	GinkgoHelper()
	png, err := inTab(b, shot)
	Expect(err).NotTo(HaveOccurred())
	b.shots++
	file := filepath.Join(b.artifacts, fmt.Sprintf("%02d-%s.png", b.shots, name))
	Expect(os.WriteFile(file, png, 0o644)).To(Succeed())
	GinkgoWriter.Printf("screenshot: %s\n", file)
}
