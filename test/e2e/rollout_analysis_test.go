package e2e

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os/exec"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1alpha1 "github.com/federator-dev/federator/apis/rollouts/v1alpha1"
	"github.com/federator-dev/federator/pkg/fleetmetrics"
	"github.com/federator-dev/federator/test/framework"
)

// tokenProxy stands in front of the fleet's Prometheus as an
// authenticating proxy would (Prometheus itself checks no token): it
// forwards only requests with the bearer token, and counts them.
type tokenProxy struct {
	token  string
	next   http.Handler
	mu     sync.Mutex
	served int
}

func (p *tokenProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer "+p.token {
		http.Error(w, "a bearer token is required", http.StatusUnauthorized)
		return
	}
	p.mu.Lock()
	p.served++
	p.mu.Unlock()
	p.next.ServeHTTP(w, r)
}

func (p *tokenProxy) requests() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.served
}

// The error ratio of the template's Deployment in one cluster over the
// last 5 s, as the fleet's stand-in application reports it
// (pkg/fleetmetrics), from the fleet's real Prometheus.
const errorRatioQuery = `sum(rate(federator_fleet_http_requests_total{cluster="{{ .Cluster }}",namespace="{{ .Namespace }}",deployment="{{ .Name }}",code="500"}[5s]))
  / sum(rate(federator_fleet_http_requests_total{cluster="{{ .Cluster }}",namespace="{{ .Namespace }}",deployment="{{ .Name }}"}[5s]))`

var _ = Describe("staged rollouts judged by an analysis", Ordered, func() {
	var w *workloadFleet
	var proxy *tokenProxy
	var srv *httptest.Server
	const ns, name, token = "default", "analysed", "e2e-prometheus-token"
	BeforeAll(func() {
		if _, err := exec.LookPath("prometheus"); err != nil {
			Skip("prometheus not found: apt-get install prometheus (Debian's package; docs/local-fleet.md)")
		}
		w = useWorkloadFleet()
		// The shared workload fleet runs no Prometheus until a spec asks.
		if w.f.PrometheusURL() == "" {
			Expect(w.f.AddPrometheus(ctx, "")).To(Succeed())
		}
		target, err := url.Parse(w.f.PrometheusURL())
		Expect(err).NotTo(HaveOccurred())
		proxy = &tokenProxy{token: token, next: httputil.NewSingleHostReverseProxy(target)}
		srv = httptest.NewServer(proxy)
		DeferCleanup(srv.Close)
	})
	s := func() stagedRollout { return stagedRollout{w: w, ns: ns, name: name} }
	clusterStatus := func(g Gomega, cluster string) rolloutsv1alpha1.ClusterStatus {
		for _, c := range s().get().Status.Clusters {
			if c.Name == cluster {
				return c
			}
		}
		g.Expect(cluster).To(BeEmpty(), "no status for the cluster")
		return rolloutsv1alpha1.ClusterStatus{}
	}
	// steer writes member's steering ConfigMap (pkg/fleetmetrics) as a
	// person would with kubectl: what each version there serves.
	steer := func(member string, data map[string]string) {
		GinkgoHelper()
		m := w.inMembers[member]
		Expect(framework.Apply(ctx, m, &corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
			ObjectMeta: metav1.ObjectMeta{Name: fleetmetrics.SteeringNamespace}}, fieldOwner)).To(Succeed())
		cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Namespace: fleetmetrics.SteeringNamespace, Name: fleetmetrics.SteeringName}, Data: data}
		Expect(framework.Apply(ctx, m, cm, fieldOwner)).To(Succeed())
		DeferCleanup(func() { Expect(client.IgnoreNotFound(m.Delete(ctx, cm))).To(Succeed()) })
	}

	It("releases a clean version through every stage, rolls back a canary whose error rate fails, and pauses while Prometheus fails", func() {
		Expect(framework.Apply(ctx, w.hub, &corev1.Secret{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "prometheus"}, Data: map[string][]byte{"token": []byte(token)}}, fieldOwner)).To(Succeed())
		Expect(framework.Apply(ctx, w.hub, framework.NewDeployment(ns, name, "nginx:1.25"), fieldOwner)).To(Succeed())
		w.placeOnEveryMember("apps/v1", "Deployment", ns, name)
		Expect(framework.Apply(ctx, w.hub, &rolloutsv1alpha1.Rollout{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rollouts.federator.dev/v1alpha1", Kind: "Rollout"},
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: rolloutsv1alpha1.RolloutSpec{
				PolicyRef: rolloutsv1alpha1.PolicyReference{Name: name}, OnFailure: rolloutsv1alpha1.OnFailureRollback,
				Analysis: &rolloutsv1alpha1.Analysis{
					Provider: rolloutsv1alpha1.AnalysisProvider{Prometheus: rolloutsv1alpha1.PrometheusProvider{Address: srv.URL,
						Query: errorRatioQuery, TokenSecretRef: &rolloutsv1alpha1.SecretKeyReference{Name: "prometheus", Key: "token"}}},
					SuccessCondition: "result[0] < 0.05",
					// The 5 s window then holds only the version released.
					InitialDelay: &metav1.Duration{Duration: 6 * time.Second},
					Interval:     &metav1.Duration{Duration: 2 * time.Second},
					Count:        ptr.To[int32](2),
				},
				Stages: []rolloutsv1alpha1.Stage{
					{Name: "canary", Clusters: []string{"member1"}},
					{Name: "second", Clusters: []string{"member2"}},
					{Name: "last", Clusters: []string{"member3"}},
				},
			},
		}, fieldOwner)).To(Succeed())
		s().completedAt(1)
		recorders := s().recordMembers()

		By("a clean version passes each cluster's analysis and reaches every stage")
		Expect(framework.SetImage(ctx, w.hub, ns, name, "nginx:1.26")).To(Succeed())
		s().completedAt(2)
		for _, m := range []string{"member1", "member2", "member3"} {
			Eventually(func(g Gomega) {
				a := clusterStatus(g, m).Analysis
				g.Expect(a).NotTo(BeNil(), m)
				g.Expect(a.Phase).To(Equal(rolloutsv1alpha1.AnalysisSuccessful), "%s: %+v", m, a)
				g.Expect(a.Measurements).To(HaveLen(2))
				g.Expect(a.Measurements[1].Value).To(Equal("[0]"))
			}).Should(Succeed())
		}

		By("a version with a 20% error rate on member1 fails the canary's analysis there and is rolled back; member2 and member3 never store it")
		steer("member1", map[string]string{"1.27.errorRate": "0.2"})
		Expect(framework.SetImage(ctx, w.hub, ns, name, "nginx:1.27")).To(Succeed())
		Eventually(func(g Gomega) {
			c := clusterStatus(g, "member1")
			g.Expect(c.State).To(Equal(rolloutsv1alpha1.StateRolledBack), "%+v", c)
			g.Expect(c.Revision).To(Equal(int64(2)))
			g.Expect(c.Analysis).NotTo(BeNil())
			g.Expect(c.Analysis.Phase).To(Equal(rolloutsv1alpha1.AnalysisFailed))
		}, "2m").Should(Succeed())
		Eventually(func(g Gomega) []string {
			return rolloutEvents(g, w.hub, ns, name, rolloutsv1alpha1.EventReasonClusterFailed)
		}).Should(ContainElement(ContainSubstring("cluster member1 (stage canary) failed: analysis failed at revision 3")))
		s().memberImageIs("member1", "nginx:1.26")
		Expect(stored(recorders["member1"], framework.Image)).To(ContainElement("nginx:1.27"))
		for _, m := range []string{"member2", "member3"} {
			Expect(stored(recorders[m], framework.Image)).NotTo(ContainElement("nginx:1.27"), "%s stored the version that failed its analysis", m)
		}

		By("Prometheus stopped in the middle of the canary: the stage pauses Inconclusive, naming the query and the error, nothing more is released, and it goes on once Prometheus is back")
		Expect(framework.SetImage(ctx, w.hub, ns, name, "nginx:1.28")).To(Succeed())
		// Stopped once member1 runs the version, before its first
		// measurement is due (the initial delay).
		s().memberImageIs("member1", "nginx:1.28")
		Expect(w.f.StopPrometheus()).To(Succeed())
		restarted := false
		DeferCleanup(func() {
			if !restarted {
				Expect(w.f.StartPrometheus(ctx)).To(Succeed())
			}
		})
		Eventually(func(g Gomega) {
			ro := s().get()
			g.Expect(ro.Status.Revision).To(Equal(int64(4)))
			paused := meta.FindStatusCondition(ro.Status.Conditions, rolloutsv1alpha1.ConditionPaused)
			g.Expect(paused).NotTo(BeNil())
			g.Expect(paused.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(paused.Reason).To(Equal(rolloutsv1alpha1.ReasonAnalysisInconclusive), "%+v", paused)
			g.Expect(paused.Message).To(ContainSubstring(`federator_fleet_http_requests_total{cluster=\"{{ .Cluster }}\"`))
			g.Expect(paused.Message).To(ContainSubstring("502"), "the proxy's answer while Prometheus is down")
			g.Expect(clusterStatus(g, "member1").State).To(Equal(rolloutsv1alpha1.StateProgressing))
		}, "2m").Should(Succeed())
		time.Sleep(6 * time.Second) // three intervals
		Expect(stored(recorders["member2"], framework.Image)).NotTo(ContainElement("nginx:1.28"), "member2 got a version whose canary could not be judged")
		Expect(w.f.StartPrometheus(ctx)).To(Succeed())
		restarted = true
		s().completedAt(4)
		s().memberImageIs("member3", "nginx:1.28")

		By("the token appears in no status, Event or controller log")
		raw, err := json.Marshal(s().get())
		Expect(err).NotTo(HaveOccurred())
		events := &corev1.EventList{}
		Expect(w.hub.List(ctx, events, client.InNamespace(ns))).To(Succeed())
		for _, e := range events.Items {
			raw = append(raw, e.Message...)
		}
		Expect(strings.Contains(string(raw), token)).To(BeFalse(), "the token shows in the Rollout or its Events")
		Expect(string(w.controller.Out.Contents())+string(w.controller.Err.Contents())).NotTo(ContainSubstring(token),
			"the token shows in the controller's log")
		Expect(proxy.requests()).To(BeNumerically(">", 0), "no query came with the token")
	})
})
