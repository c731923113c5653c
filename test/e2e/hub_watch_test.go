package e2e

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/federator-dev/federator/pkg/fleet"
	"github.com/federator-dev/federator/test/framework"
)

// After a hub restart, an informer retries its watch with a backoff that
// grows to 30 s: its cache misses every write meanwhile, and nothing says
// so. The chaos checker found a member storing a version three behind,
// after a suspension had come and gone, because the leader's caches never
// received them and its dispatcher applied the Work as they showed it
// (seed 2026, run 5). The dispatcher sends nothing from caches that do not
// watch the hub, nor, once they watch again, before the detector and then
// the binding controller have decided every binding again
// (internal/redecide): a heuristic wait of one second after the watch
// opened failed 2 runs in 7, the detector writing the suspension 3 s
// after the relist.
var _ = Describe("a hub cache that stopped watching", func() {
	It("sends nothing to a member until it watches the hub again, so a suspension it has not received is not overtaken", func() {
		f, hub, proxy, logs := fleetViaProxy()
		member := joinMembers(f, hub)["member1"]

		const ns, name = "hub-watch", "web"
		back := releasedWhileAway(f, hub, member, ns, name)
		work := func() *workv1alpha1.Work { return workOn(hub, "member1", ns, name) }

		By("the controller's hub caches stop watching (lists and watches refused, as while the hub restarts); the policy is suspended and the template changes, unseen by them")
		proxy.block()
		Eventually(logs).Should(ContainSubstring("the hub cache cannot watch the hub"))
		patchPolicyOn(hub, ns, name, `{"spec":{"suspension":{"dispatching":true}}}`)
		Expect(framework.SetImage(ctx, hub, ns, name, "nginx:1.27")).To(Succeed())

		By("member1 is back: the dispatcher, whose Work still says 1.26 released, sends it nothing")
		recorder := back()
		// Until it says it waits (or, were it to send the Work, until
		// member1 has it: the recorder's record below then fails the spec).
		// Under load its first pass after member1 is back waits on a
		// member API server that has only just started: a CI run on a
		// slow machine took over 30 s.
		Eventually(func() bool {
			return strings.Contains(logs(), "waiting: not dispatched: the hub cache of") || imageIn(member, ns, name) == "nginx:1.26"
		}, "90s").Should(BeTrue())
		Expect(work()).To(WithTransform(workSuspended, BeFalse()),
			"the Work was held before the caches watched again: this spec would not test the dispatcher")

		By("the caches watch again: the Work is held, and member1 never stored 1.26")
		proxy.unblock()
		Eventually(work, "90s").Should(And(Not(BeNil()), WithTransform(workSuspended, BeTrue())))
		Expect(logs()).To(ContainSubstring("the hub cache watches the hub again"))
		Eventually(logs).Should(ContainSubstring("the hub's decisions caught up after the hub caches' break"))
		Expect(stored(recorder, framework.Image)).NotTo(ContainElement("nginx:1.26"),
			"member1 stored the release the caches showed after the policy was suspended")

		By("resuming the policy: 1.27 arrives")
		patchPolicyOn(hub, ns, name, `{"spec":{"suspension":null}}`)
		Eventually(func() string { return imageIn(member, ns, name) }).Should(Equal("nginx:1.27"))
		Expect(stored(recorder, framework.Image)).NotTo(ContainElement("nginx:1.26"))
	})
})

// fleetViaProxy is a fleet of one member whose controller reaches the hub
// through an informerBlocker, and that controller's logs.
func fleetViaProxy() (f *fleet.Fleet, hub client.Client, proxy *informerBlocker, logs func() string) {
	GinkgoHelper()
	f, hub = separateFleet(1, false)
	proxy = startInformerBlocker(f.Hub.Config)
	viaProxy := filepath.Join(GinkgoT().TempDir(), "hub-via-proxy")
	Expect(fleet.WriteKubeconfig(viaProxy, "hub", &rest.Config{Host: proxy.url})).To(Succeed())
	controller := runController(f, "--kubeconfig", viaProxy, "--v=1")
	logs = func() string { return string(controller.Out.Contents()) + string(controller.Err.Contents()) }
	return f, hub, proxy, logs
}

// releasedWhileAway deploys nginx:1.25 to member1 through a policy
// selecting Deployment ns/name, stops member1, and changes the template
// to 1.26: the Work carries it released while the dispatcher retries. It
// returns the function that starts member1 again and records what it
// stores from then on: a member's API server that restarts forgets the
// versions its watches resume from, so one recorder runs up to the stop,
// a second from the start (its first version is what member1 stores
// then).
func releasedWhileAway(f *fleet.Fleet, hub, member client.Client, ns, name string) (back func() *framework.Recorder) {
	GinkgoHelper()
	Expect(hub.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	dyn, err := dynamic.NewForConfig(f.Members[0].Config)
	Expect(err).NotTo(HaveOccurred())
	record := func() *framework.Recorder {
		r, err := framework.Record(ctx, dyn, member, deploymentRef(ns, name), "member1")
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(r.Stop)
		return r
	}
	recorder := record()
	Expect(framework.Apply(ctx, hub, framework.NewDeployment(ns, name, "nginx:1.25"), fieldOwner)).To(Succeed())
	Expect(framework.Apply(ctx, hub, framework.NewDeploymentPolicy(ns, name, name, "member1"), fieldOwner)).To(Succeed())
	Eventually(func() string { return imageIn(member, ns, name) }).Should(Equal("nginx:1.25"))

	By("member1 goes away; the template changes to 1.26, released: the Work carries it while the dispatcher retries")
	Expect(stored(recorder, framework.Image)).To(Equal([]string{"nginx:1.25"}))
	recorder.Stop()
	Expect(f.StopMember("member1")).To(Succeed())
	started := false
	DeferCleanup(func() {
		if !started {
			Expect(f.StartMember("member1")).To(Succeed())
		}
	})
	Expect(framework.SetImage(ctx, hub, ns, name, "nginx:1.26")).To(Succeed())
	Eventually(func() *workv1alpha1.Work { return workOn(hub, "member1", ns, name) }).Should(And(Not(BeNil()),
		WithTransform(workSuspended, BeFalse()),
		WithTransform(func(*workv1alpha1.Work) string { return workImageOn(hub, "member1", ns, name) }, Equal("nginx:1.26"))))
	return func() *framework.Recorder {
		GinkgoHelper()
		Expect(f.StartMember("member1")).To(Succeed())
		started = true
		return record()
	}
}

// patchPolicyOn merge-patches PropagationPolicy ns/name on hub.
func patchPolicyOn(hub client.Client, ns, name, mergePatch string) {
	GinkgoHelper()
	pp := framework.NewDeploymentPolicy(ns, name, name)
	Expect(hub.Patch(ctx, pp, client.RawPatch("application/merge-patch+json", []byte(mergePatch)))).To(Succeed())
}

// informerBlocker is a proxy to a hub's API server for one controller. It
// passes every request; while blocked, it ends the watches in flight and
// refuses lists and watches (GETs with a query: what informers send), as
// a restarting hub leaves informers retrying with backoff, while the GETs
// of one object and the writes still pass. While it refuses binding
// updates, the detector's writes of a binding (PUTs) fail, as when they
// conflict or time out; the binding controller's patches pass.
type informerBlocker struct {
	url     string
	blocked atomic.Bool
	// bindingUpdatesRefused: refuseBindingUpdates.
	bindingUpdatesRefused atomic.Bool

	// holdWrites: slowHolds; heldWrites counts the writes kept waiting,
	// until released is closed.
	holdWrites atomic.Bool
	heldWrites atomic.Int32

	mu       sync.Mutex
	watches  map[int]context.CancelFunc
	next     int
	released chan struct{}
}

// startInformerBlocker serves the proxy until the end of the spec.
func startInformerBlocker(hub *rest.Config) *informerBlocker {
	GinkgoHelper()
	target, err := url.Parse(hub.Host)
	Expect(err).NotTo(HaveOccurred())
	// HTTP/1.1 to the hub as from the controller: one connection per
	// watch, so ending one never touches another's stream.
	upstream := rest.CopyConfig(hub)
	upstream.TLSClientConfig.NextProtos = []string{"http/1.1"}
	transport, err := rest.TransportFor(upstream)
	Expect(err).NotTo(HaveOccurred())
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.Transport = transport
	proxy.FlushInterval = -1 // watch events pass at once
	b := &informerBlocker{watches: map[int]context.CancelFunc{}, released: make(chan struct{})}
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		informer := r.Method == http.MethodGet && r.URL.RawQuery != ""
		if informer && b.blocked.Load() {
			http.Error(w, "refused by the spec's proxy: the hub restarts", http.StatusServiceUnavailable)
			return
		}
		if r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/resourcebindings/") && b.bindingUpdatesRefused.Load() {
			http.Error(w, "refused by the spec's proxy: the binding write times out", http.StatusServiceUnavailable)
			return
		}
		if b.holdWrites.Load() && holdOfAWork(r) {
			b.heldWrites.Add(1)
			b.mu.Lock()
			released := b.released
			b.mu.Unlock()
			<-released
		}
		if r.URL.Query().Get("watch") == "" {
			proxy.ServeHTTP(w, r)
			return
		}
		ctx, cancel := context.WithCancel(r.Context())
		b.mu.Lock()
		id := b.next
		b.next++
		b.watches[id] = cancel
		b.mu.Unlock()
		defer func() {
			b.mu.Lock()
			delete(b.watches, id)
			b.mu.Unlock()
			cancel()
		}()
		proxy.ServeHTTP(w, r.WithContext(ctx))
	}))
	DeferCleanup(func() {
		b.slowHolds(false)
		b.block() // ends the watches, which Close waits for
		server.Close()
	})
	b.url = server.URL
	return b
}

// block ends the watches in flight and refuses lists and watches.
func (b *informerBlocker) block() {
	b.blocked.Store(true)
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, cancel := range b.watches {
		cancel()
	}
}

// unblock lets lists and watches pass again.
func (b *informerBlocker) unblock() { b.blocked.Store(false) }

// refuseBindingUpdates refuses, or passes again, the updates of
// ResourceBindings.
func (b *informerBlocker) refuseBindingUpdates(refuse bool) { b.bindingUpdatesRefused.Store(refuse) }

// slowHolds keeps the writes that hold a Work waiting (as a hub under
// load answers them seconds late), or lets them, and those waiting, pass.
func (b *informerBlocker) slowHolds(slow bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if slow && !b.holdWrites.Load() {
		b.released = make(chan struct{})
	}
	if !slow && b.holdWrites.Load() {
		close(b.released)
	}
	b.holdWrites.Store(slow)
}

// holdOfAWork says whether r writes a Work's spec with its hold set (the
// binding controller's merge patch); the body is kept for the hub.
func holdOfAWork(r *http.Request) bool {
	if r.Method != http.MethodPatch && r.Method != http.MethodPut || !strings.Contains(r.URL.Path, "/works/") ||
		strings.HasSuffix(r.URL.Path, "/status") || r.Body == nil {
		return false
	}
	body, err := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	return err == nil && bytes.Contains(body, []byte(`"suspendDispatching":true`))
}

// workSuspended says whether w holds its manifests back.
func workSuspended(w *workv1alpha1.Work) bool { return ptr.Deref(w.Spec.SuspendDispatching, false) }
