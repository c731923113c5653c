package e2e

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"time"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	"github.com/onsi/gomega/gexec"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gatingv1alpha1 "github.com/federator-dev/federator/apis/gating/v1alpha1"
	rolloutsv1alpha1 "github.com/federator-dev/federator/apis/rollouts/v1alpha1"
	workkeys "github.com/federator-dev/federator/apis/work"
	"github.com/federator-dev/federator/pkg/fleet"
	"github.com/federator-dev/federator/pkg/membership"
	"github.com/federator-dev/federator/pkg/yamldocs"
	"github.com/federator-dev/federator/test/framework"
)

// What a Pull member's agent does with every holder the hub writes into
// its Works, when it dies in the middle of a Rollout, when a second agent
// of its cluster runs, and when it loses the hub (docs/pull-mode.md). The
// template is a ConfigMap, holders/app, whose data.version names each
// version: it is healthy once applied, so a Rollout's stages advance on a
// fleet that runs no workloads. A watch recorder in the Pull member, for
// the whole spec, proves which versions it stored and in which order.
var _ = Describe("a Pull member's agent", func() {
	It("is held by a cluster's suspension annotation, a Gate and a Rollout stage; two agents elect one leader, and when the leader is killed mid-rollout the other takes over and stores only what its stage released", func() {
		p := startPullFleet()
		hubKubeconfig := p.agentKubeconfig("")
		leaderElect := []string{"--leader-elect=true", "--leader-elect-resource-namespace", pullAgentLeaseNamespace,
			"--leader-elect-lease-duration", pullAgentLease.String(), "--leader-elect-renew-deadline=6s", "--leader-elect-retry-period=1s"}
		a, b := p.agent(hubKubeconfig, leaderElect...), p.agent(hubKubeconfig, leaderElect...)

		By("two agents of member2: one leads, by the Lease in the member; the other waits")
		var leader, standby *gexec.Session
		Eventually(func() bool {
			leader, standby = leading(a, b)
			return leader != nil
		}, "60s").Should(BeTrue())
		first := p.agentLeaseHolder()
		Expect(first).NotTo(BeEmpty())
		// Both registered their Cluster at once: the one whose write met
		// the other's registers again, rather than exit.
		Expect(standby.ExitCode()).To(Equal(-1), "the standby agent exited")
		Expect(string(standby.Out.Contents())).NotTo(ContainSubstring(agentRunning(pullMember)), "two agents lead at once")
		p.place("v1")

		By("the cluster's suspension annotation holds the Pull member, the Push member gets the change")
		p.hold("v2", "SuspendDispatching", func() {
			p.patchTemplate(`{"metadata":{"annotations":{"suspended.propagation.federator.dev/member2":"holding the edge"}}}`)
		}, func() {
			p.patchTemplate(`{"metadata":{"annotations":{"suspended.propagation.federator.dev/member2":null}}}`)
		})

		By("a closed Gate the Pull member's Cluster waits for holds it; opened, the change arrives")
		p.apply(`
apiVersion: gating.federator.dev/v1alpha1
kind: Gate
metadata: {name: maintenance, namespace: holders}
spec: {default: closed}
`)
		p.hold("v3", "GateClosed", func() {
			p.patchCluster(`{"metadata":{"annotations":{"gating.federator.dev/gates":"holders/maintenance"}}}`)
		}, func() {
			Expect(p.hub.Patch(ctx, &gatingv1alpha1.Gate{ObjectMeta: metav1.ObjectMeta{Namespace: "holders", Name: "maintenance"}},
				client.RawPatch(types.MergePatchType, []byte(fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`,
					gatingv1alpha1.OpenRequestAnnotation, time.Now().UTC().Format(time.RFC3339)))))).To(Succeed())
		})
		p.patchCluster(`{"metadata":{"annotations":{"gating.federator.dev/gates":null}}}`)

		By("a Rollout whose first stage is the Push member holds the Pull member until its stage is promoted")
		p.apply(`
apiVersion: rollouts.federator.dev/v1alpha1
kind: Rollout
metadata: {name: app, namespace: holders}
spec:
  policyRef: {name: app}
  stages:
  - {name: push, clusters: [member1]}
  - {name: pull, clusters: [member2], pause: true}
`)
		p.rolloutCompleted(1)
		p.hold("v4", "RolloutStage", func() {}, func() {
			p.waitingForPromotion(2)
			p.promote(2)
		})
		p.rolloutCompleted(2)

		By("the leading agent killed (SIGKILL) while the Pull member's stage waits: the revision aborted, the next one promoted")
		p.setVersion("v5")
		Eventually(p.versionIn(p.push)).Should(Equal("v5"))
		Eventually(p.heldAt("v5")).Should(Equal("RolloutStage"), "the leading agent holds v5 at the Pull member's stage")
		p.waitingForPromotion(3)
		Expect(string(standby.Err.Contents())).NotTo(ContainSubstring(`"controller":"dispatch-member2"`),
			"the standby agent runs its Work controller while the other leads")
		Eventually(leader.Kill(), "10s").Should(gexec.Exit())
		killed := time.Now()
		Expect(p.hub.Patch(ctx, rolloutRef("holders", "app"), client.RawPatch(types.MergePatchType,
			[]byte(fmt.Sprintf(`{"metadata":{"annotations":{%q:"3"}}}`, rolloutsv1alpha1.AbortAnnotation))))).To(Succeed())
		Eventually(p.versionIn(p.push)).Should(Equal("v4"), "the abort puts the Push member back on v4")

		By("the standby takes the Lease within the lease duration and leads; a new agent started beside it waits")
		Eventually(p.agentLeaseHolder, pullAgentLease+10*time.Second, 200*time.Millisecond).Should(And(Not(BeEmpty()), Not(Equal(first))))
		took := time.Since(killed)
		AddReportEntry("Pull agent takeover after SIGKILL", took.String())
		Expect(took).To(BeNumerically("<", pullAgentLease+2*2200*time.Millisecond+time.Second),
			"a standby takes an expired Lease at its next retry")
		Eventually(standby.Out, "60s").Should(gbytes.Say(agentRunning(pullMember)), "the agent that waited leads")
		// The killed one's replacement, as its Deployment would start one.
		replacement := p.agent(hubKubeconfig, leaderElect...)
		Eventually(replacement.Err, "60s").Should(gbytes.Say("attempting to acquire leader lease"))

		p.setVersion("v6")
		Eventually(p.versionIn(p.push)).Should(Equal("v6"))
		Eventually(p.heldAt("v6")).Should(Equal("RolloutStage"), "the new leader holds v6 at the Pull member's stage")
		p.waitingForPromotion(4)
		beforePromotion := mark(p.recorder)
		p.promote(4)
		Eventually(p.versionIn(p.pull)).Should(Equal("v6"), "the new leader applies the promoted change")
		p.rolloutCompleted(4)
		Expect(storedBefore(p.recorder, beforePromotion, pullVersion)).NotTo(ContainElement("v6"), "stored before its stage was promoted")
		Expect(p.recorder.History(0, mark(p.recorder), pullVersion)).To(Equal([]string{
			"ADDED v1", "MODIFIED v2", "MODIFIED v3", "MODIFIED v4", "MODIFIED v6"}),
			"the Pull member stored each version once its holder released it, and never the aborted v5")
		Expect(string(replacement.Out.Contents())).NotTo(ContainSubstring(agentRunning(pullMember)), "two agents lead at once")
		Expect(replacement.ExitCode()).To(Equal(-1), "the new agent exited")
	})

	It("changes nothing in its member while the hub is unreachable for 60 s, says so on /readyz, and on reconnecting releases nothing the hub held meanwhile", func() {
		// The agent renews its Lease every second (agentCommand): the hub
		// calls a Pull cluster whose agent is silent for 10 s Ready=Unknown.
		p := startPullFleet("--cluster-monitor-grace-period=10s")
		proxy := startHubProxy(p.f.Hub.Config.Host)
		probes := freeAddress()
		p.agent(p.agentKubeconfig("https://"+proxy.addr), "--health-probe-bind-address", probes)
		Eventually(httpStatus(probes, "/readyz"), "60s").Should(Equal(http.StatusOK))
		p.place("v1")

		By("connected, the agent puts back what someone changes in its member by hand")
		p.editByHand()
		Eventually(p.versionIn(p.pull)).Should(Equal("v1"))

		By("the hub cut off for 60 s: /readyz fails and names the hub, /healthz answers")
		beforeCut := mark(p.recorder)
		proxy.cut()
		cut := time.Now()
		Eventually(func() string { _, body := probe(probes, "/readyz?verbose"); return body }, "20s").Should(
			ContainSubstring("[-]hub failed"))
		Expect(httpStatus(probes, "/healthz")()).To(Equal(http.StatusOK))

		By("meanwhile the hub changes the template, then suspends the Pull member; someone edits the member by hand")
		p.setVersion("v2")
		Eventually(p.versionIn(p.push)).Should(Equal("v2"))
		Eventually(func() string { return p.workVersion(pullMember) }).Should(Equal("v2"))
		Expect(p.work(pullMember).Spec.SuspendDispatching).NotTo(HaveValue(BeTrue()), "v2 was released before the suspension")
		p.patchTemplate(`{"metadata":{"annotations":{"suspended.propagation.federator.dev/member2":"hub lost"}}}`)
		Eventually(func() *bool { return p.work(pullMember).Spec.SuspendDispatching }).Should(HaveValue(BeTrue()))
		p.editByHand()
		Eventually(func() *metav1.Condition { return clusterReady(p.hub, pullMember) }, "30s").Should(
			HaveField("Status", metav1.ConditionUnknown), "the hub sees the agent silent")
		for time.Since(cut) < time.Minute {
			status, body := probe(probes, "/readyz?verbose")
			Expect(status).To(Equal(http.StatusInternalServerError), "/readyz while the hub is cut off: %s", body)
			Expect(body).To(ContainSubstring("[-]hub failed"))
			Expect(httpStatus(probes, "/healthz")()).To(Equal(http.StatusOK))
			time.Sleep(2 * time.Second)
		}
		Expect(p.recorder.History(beforeCut, mark(p.recorder), pullVersion)).To(Equal([]string{"MODIFIED by-hand"}),
			"the agent wrote to its member while it could not reach the hub")

		By("the hub back: /readyz turns OK, the agent reports the Work held and stores nothing")
		proxy.restore()
		restored := time.Now()
		Eventually(httpStatus(probes, "/readyz"), "90s", time.Second).Should(Equal(http.StatusOK))
		AddReportEntry("Pull agent ready again after the hub came back", time.Since(restored).String())
		Eventually(p.heldAt("v2"), "30s").Should(Equal("SuspendDispatching"))
		Eventually(func() *metav1.Condition { return clusterReady(p.hub, pullMember) }, "30s").Should(
			HaveField("Status", metav1.ConditionTrue))
		Expect(p.recorder.History(beforeCut, mark(p.recorder), pullVersion)).To(Equal([]string{"MODIFIED by-hand"}),
			"the agent released on reconnecting what the hub held during the cut, or put back its stale v1")

		By("resumed, v2 arrives")
		p.patchTemplate(`{"metadata":{"annotations":{"suspended.propagation.federator.dev/member2":null}}}`)
		Eventually(p.versionIn(p.pull)).Should(Equal("v2"))
		Expect(p.recorder.History(beforeCut, mark(p.recorder), pullVersion)).To(Equal([]string{"MODIFIED by-hand", "MODIFIED v2"}))
	})
})

const (
	pullMember = "member2"
	// pullAgentLease is the agents' leader election lease: short, so a
	// takeover after a kill is quick to see; the renew deadline (6 s)
	// leaves room for a loaded machine.
	pullAgentLease          = 8 * time.Second
	pullAgentLeaseNamespace = "federator-agents"
)

// pullVersion is the version a stored holders/app names.
var pullVersion = framework.JSONPath("{.data.version}")

func agentRunning(cluster string) string {
	return "federator: agent of cluster " + cluster + " running"
}

// leading is the one of a and b that said it leads (its controllers
// run), and the other; nil, nil while neither did.
func leading(a, b *gexec.Session) (*gexec.Session, *gexec.Session) {
	switch running := agentRunning(pullMember); {
	case strings.Contains(string(a.Out.Contents()), running):
		return a, b
	case strings.Contains(string(b.Out.Contents()), running):
		return b, a
	}
	return nil, nil
}

// pullFleet is a hub, running `federator controller`, with member1 in Push
// mode and member2 in Pull mode (its agent reaches the hub as its own
// ServiceAccount), holders/app placed on both, and a recorder of it in
// member2 from before it exists.
type pullFleet struct {
	f          *fleet.Fleet
	hub        client.Client
	push, pull client.Client
	token      string
	recorder   *framework.Recorder
}

func startPullFleet(controllerArgs ...string) pullFleet {
	GinkgoHelper()
	f, hub := separateFleet(2, false)
	runController(f, controllerArgs...)
	push := f.Member("member1")
	Expect(membership.Register(ctx, hub, push.Name, push.Config)).To(Succeed())
	token, err := membership.RegisterPull(ctx, hub, pullMember)
	Expect(err).NotTo(HaveOccurred())
	p := pullFleet{f: f, hub: hub, push: memberClient(push), pull: memberClient(f.Member(pullMember)), token: token}
	dyn, err := dynamic.NewForConfig(f.Member(pullMember).Config)
	Expect(err).NotTo(HaveOccurred())
	p.recorder, err = framework.Record(ctx, dyn, p.pull, p.template(), pullMember)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(p.recorder.Stop)
	return p
}

func (p pullFleet) template() *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "holders", Name: "app"}}
}

// agentKubeconfig writes the agent's hub kubeconfig, its server host
// unless "" (a proxy), and returns its path.
func (p pullFleet) agentKubeconfig(host string) string {
	GinkgoHelper()
	cfg := membership.AgentConfig(p.f.Hub.Config, p.token)
	if host != "" {
		cfg.Host = host
	}
	path := filepath.Join(GinkgoT().TempDir(), "agent-hub.kubeconfig")
	Expect(fleet.WriteKubeconfig(path, "hub", cfg)).To(Succeed())
	return path
}

// agent starts `federator agent` for member2 with args on top of
// agentCommand's, until the end of the spec, and does not wait for it.
func (p pullFleet) agent(hubKubeconfig string, args ...string) *gexec.Session {
	GinkgoHelper()
	cmd := agentCommand(p.f, pullMember, hubKubeconfig)
	cmd.Args = append(cmd.Args, args...)
	session, err := gexec.Start(cmd, GinkgoWriter, GinkgoWriter)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { session.Kill().Wait("10s") })
	return session
}

// agentLeaseHolder is the holder of the Lease the agents of member2 take
// turns by, in member2; "" while there is none.
func (p pullFleet) agentLeaseHolder() string {
	lease := &coordinationv1.Lease{}
	if err := p.pull.Get(ctx, client.ObjectKey{Namespace: pullAgentLeaseNamespace, Name: membership.AgentName(pullMember)}, lease); err != nil ||
		lease.Spec.HolderIdentity == nil {
		return ""
	}
	return *lease.Spec.HolderIdentity
}

// place creates holders/app at version and its policy on both members,
// and waits until both store it.
func (p pullFleet) place(version string) {
	GinkgoHelper()
	p.apply(`
apiVersion: v1
kind: Namespace
metadata: {name: holders}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: app, namespace: holders}
data: {version: ` + version + `}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: app, namespace: holders}
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, name: app}]
  placement: {clusterAffinity: {clusterNames: [member1, member2]}}
`)
	Eventually(p.versionIn(p.push)).Should(Equal(version))
	Eventually(p.versionIn(p.pull)).Should(Equal(version))
}

// apply applies the YAML documents to the hub.
func (p pullFleet) apply(documents string) {
	GinkgoHelper()
	Expect(yamldocs.Apply(ctx, p.hub, []byte(documents), client.FieldOwner("e2e"))).To(Succeed())
}

// hold writes a holder of member2 (hold), sets version, and waits until
// the Push member stores it and the agent holds it, saying reason on the
// Work; the recorder proves member2 has not stored it. release lifts the
// holder: the version arrives.
func (p pullFleet) hold(version, reason string, hold, release func()) {
	GinkgoHelper()
	hold()
	p.setVersion(version)
	Eventually(p.versionIn(p.push)).Should(Equal(version))
	Eventually(p.heldAt(version)).Should(Equal(reason), "the agent holds %s and says why on the Work", version)
	held := mark(p.recorder)
	Expect(storedBefore(p.recorder, held, pullVersion)).NotTo(ContainElement(version), "the Pull member stored the held %s", version)
	release()
	Eventually(p.versionIn(p.pull)).Should(Equal(version))
	Expect(storedBefore(p.recorder, held, pullVersion)).NotTo(ContainElement(version), "the Pull member stored the held %s", version)
}

func (p pullFleet) setVersion(version string) {
	GinkgoHelper()
	p.patchTemplate(`{"data":{"version":"` + version + `"}}`)
}

func (p pullFleet) patchTemplate(patch string) {
	GinkgoHelper()
	Expect(p.hub.Patch(ctx, p.template(), client.RawPatch(types.MergePatchType, []byte(patch)))).To(Succeed())
}

func (p pullFleet) patchCluster(patch string) {
	GinkgoHelper()
	Expect(framework.MergePatch(ctx, p.hub, &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: pullMember}}, patch)).To(Succeed())
}

// editByHand changes member2's holders/app as someone with access to the
// member would.
func (p pullFleet) editByHand() {
	GinkgoHelper()
	Expect(p.pull.Patch(ctx, p.template(), client.RawPatch(types.MergePatchType, []byte(`{"data":{"version":"by-hand"}}`)))).To(Succeed())
}

// versionIn is a poll of the version c stores of holders/app.
func (p pullFleet) versionIn(c client.Client) func() string {
	return func() string {
		cm := &corev1.ConfigMap{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(p.template()), cm); err != nil {
			return err.Error()
		}
		return cm.Data["version"]
	}
}

// work is member's Work of holders/app on the hub (empty while none).
func (p pullFleet) work(member string) *workv1alpha1.Work {
	w := &workv1alpha1.Work{}
	if err := p.hub.Get(ctx, framework.WorkKey(member, "ConfigMap", "holders", "app"), w); err != nil {
		return &workv1alpha1.Work{}
	}
	return w
}

func (p pullFleet) workVersion(member string) string {
	if u := workkeys.FirstManifest(p.work(member)); u != nil {
		return pullVersion(u)
	}
	return ""
}

// heldAt is a poll of why the agent holds member2's Work: the reason of
// its Dispatching condition once it is False at the generation of a Work
// that carries version; what it says until then.
func (p pullFleet) heldAt(version string) func() string {
	return func() string {
		w := p.work(pullMember)
		if v := p.workVersion(pullMember); v != version {
			return "the Work carries " + v
		}
		c := meta.FindStatusCondition(w.Status.Conditions, workv1alpha1.WorkDispatching)
		if c == nil || c.Status != metav1.ConditionFalse || c.ObservedGeneration != w.Generation {
			return fmt.Sprintf("not held at generation %d: %+v", w.Generation, c)
		}
		return c.Reason
	}
}

// rolloutCompleted waits for the Rollout holders/app to complete revision.
func (p pullFleet) rolloutCompleted(revision int64) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		ro := &rolloutsv1alpha1.Rollout{}
		g.Expect(p.hub.Get(ctx, client.ObjectKey{Namespace: "holders", Name: "app"}, ro)).To(Succeed())
		g.Expect(ro.Status.Revision).To(Equal(revision))
		g.Expect(condition(ro, rolloutsv1alpha1.ConditionCompleted)).To(Equal(metav1.ConditionTrue), "%+v", ro.Status)
	}).Should(Succeed())
}

// waitingForPromotion waits for the Rollout holders/app to pause revision
// before the Pull member's stage.
func (p pullFleet) waitingForPromotion(revision int64) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		ro := &rolloutsv1alpha1.Rollout{}
		g.Expect(p.hub.Get(ctx, client.ObjectKey{Namespace: "holders", Name: "app"}, ro)).To(Succeed())
		g.Expect(ro.Status.Revision).To(Equal(revision))
		c := meta.FindStatusCondition(ro.Status.Conditions, rolloutsv1alpha1.ConditionPaused)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Reason).To(Equal(rolloutsv1alpha1.ReasonWaitingForPromotion), "%+v", ro.Status)
	}).Should(Succeed())
}

// promote lets the Pull member's stage of revision start, as `federator
// rollout promote` does.
func (p pullFleet) promote(revision int64) {
	GinkgoHelper()
	Expect(p.hub.Patch(ctx, rolloutRef("holders", "app"), client.RawPatch(types.MergePatchType, []byte(fmt.Sprintf(
		`{"metadata":{"annotations":{%q:"%d/pull"}}}`, rolloutsv1alpha1.PromoteAnnotation, revision))))).To(Succeed())
}

// hubProxy forwards TCP connections from a port of its own to the hub's
// API server, so a spec can cut an agent off the hub (no connection is
// accepted, every forwarded one is closed) and restore it on the same
// port.
type hubProxy struct {
	addr, target string

	mu    sync.Mutex
	l     net.Listener
	conns map[net.Conn]bool
}

// startHubProxy forwards to the host:port of server (a URL) until the end
// of the spec.
func startHubProxy(server string) *hubProxy {
	GinkgoHelper()
	u, err := url.Parse(server)
	Expect(err).NotTo(HaveOccurred())
	p := &hubProxy{target: u.Host, conns: map[net.Conn]bool{}}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	p.addr = l.Addr().String()
	p.serve(l)
	DeferCleanup(p.cut)
	return p
}

func (p *hubProxy) serve(l net.Listener) {
	p.mu.Lock()
	p.l = l
	p.mu.Unlock()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go p.forward(l, c)
		}
	}()
}

// forward copies between c, accepted by l, and a connection to the hub
// until either ends or the proxy is cut.
func (p *hubProxy) forward(l net.Listener, c net.Conn) {
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		_ = c.Close()
		return
	}
	p.mu.Lock()
	if p.l != l {
		p.mu.Unlock()
		_, _ = c.Close(), up.Close()
		return
	}
	p.conns[c], p.conns[up] = true, true
	p.mu.Unlock()
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(up, c)
		_, _ = c.Close(), up.Close()
		close(done)
	}()
	_, _ = io.Copy(c, up)
	_, _ = c.Close(), up.Close()
	<-done
	p.mu.Lock()
	delete(p.conns, c)
	delete(p.conns, up)
	p.mu.Unlock()
}

// cut stops accepting connections and closes every forwarded one.
func (p *hubProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.l != nil {
		_ = p.l.Close()
		p.l = nil
	}
	for c := range p.conns {
		_ = c.Close()
	}
	clear(p.conns)
}

// restore accepts connections on the same port again.
func (p *hubProxy) restore() {
	GinkgoHelper()
	l, err := net.Listen("tcp", p.addr)
	Expect(err).NotTo(HaveOccurred())
	p.serve(l)
}
