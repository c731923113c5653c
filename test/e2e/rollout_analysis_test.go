package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
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
	"github.com/federator-dev/federator/test/framework"
)

// errorRatePrometheus answers Prometheus's /api/v1/query for
// errors{cluster="C",revision="R"} with the error rate the spec steers per
// cluster and revision (0.01 unless set), only with the bearer token, and
// fails every query while down. It stands in for the fleet's Prometheus
// until the fleet runs one (issue 51, item 4).
type errorRatePrometheus struct {
	mu    sync.Mutex
	token string
	rates map[string]string // "cluster/revision" → rate
	down  bool
}

var errorsQuery = regexp.MustCompile(`^errors\{cluster="([^"]+)",revision="([^"]+)"\}$`)

func (p *errorRatePrometheus) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch {
	case p.down:
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprint(w, `{"status":"error","errorType":"unavailable","error":"prometheus is stopping"}`)
		return
	case r.Header.Get("Authorization") != "Bearer "+p.token:
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	_ = r.ParseForm()
	m := errorsQuery.FindStringSubmatch(r.Form.Get("query"))
	if m == nil {
		fmt.Fprint(w, `{"status":"success","data":{"resultType":"vector","result":[]}}`)
		return
	}
	rate, ok := p.rates[m[1]+"/"+m[2]]
	if !ok {
		rate = "0.01"
	}
	fmt.Fprintf(w, `{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[%d,%q]}]}}`, time.Now().Unix(), rate)
}

func (p *errorRatePrometheus) set(f func(p *errorRatePrometheus)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f(p)
}

var _ = Describe("staged rollouts judged by an analysis", Ordered, func() {
	var w *workloadFleet
	var prom *errorRatePrometheus
	var srv *httptest.Server
	const ns, name, token = "default", "analysed", "e2e-prometheus-token"
	BeforeAll(func() {
		w = useWorkloadFleet()
		prom = &errorRatePrometheus{token: token, rates: map[string]string{}}
		srv = httptest.NewServer(prom)
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
						Query:          `errors{cluster="{{ .Cluster }}",revision="{{ .Revision }}"}`,
						TokenSecretRef: &rolloutsv1alpha1.SecretKeyReference{Name: "prometheus", Key: "token"}}},
					SuccessCondition: "result[0] < 0.05",
					Interval:         &metav1.Duration{Duration: 2 * time.Second},
					Count:            ptr.To[int32](2),
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
				g.Expect(a.Measurements[1].Value).To(Equal("[0.01]"))
			}).Should(Succeed())
		}

		By("a version with a 20% error rate on member1 fails the canary's analysis there and is rolled back; member2 and member3 never store it")
		prom.set(func(p *errorRatePrometheus) { p.rates["member1/3"] = "0.2" })
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

		By("Prometheus failing in the middle of the canary: the stage pauses Inconclusive, naming the query and the error, and nothing more is released")
		prom.set(func(p *errorRatePrometheus) { p.down = true })
		Expect(framework.SetImage(ctx, w.hub, ns, name, "nginx:1.28")).To(Succeed())
		Eventually(func(g Gomega) {
			ro := s().get()
			g.Expect(ro.Status.Revision).To(Equal(int64(4)))
			paused := meta.FindStatusCondition(ro.Status.Conditions, rolloutsv1alpha1.ConditionPaused)
			g.Expect(paused).NotTo(BeNil())
			g.Expect(paused.Reason).To(Equal(rolloutsv1alpha1.ReasonAnalysisInconclusive), "%+v", paused)
			g.Expect(paused.Message).To(ContainSubstring(`errors{cluster=\"{{ .Cluster }}\",revision=\"{{ .Revision }}\"}`))
			g.Expect(paused.Message).To(ContainSubstring("server error: 503"))
		}, "2m").Should(Succeed())
		time.Sleep(6 * time.Second) // three intervals
		Expect(stored(recorders["member2"], framework.Image)).NotTo(ContainElement("nginx:1.28"), "member2 got a version whose canary could not be judged")
		prom.set(func(p *errorRatePrometheus) { p.down = false })
		s().completedAt(4)
		s().memberImageIs("member3", "nginx:1.28")

		By("the token appears in no status or Event")
		raw, err := json.Marshal(s().get())
		Expect(err).NotTo(HaveOccurred())
		events := &corev1.EventList{}
		Expect(w.hub.List(ctx, events, client.InNamespace(ns))).To(Succeed())
		for _, e := range events.Items {
			raw = append(raw, e.Message...)
		}
		Expect(strings.Contains(string(raw), token)).To(BeFalse(), "the token shows in the Rollout or its Events")
	})
})
