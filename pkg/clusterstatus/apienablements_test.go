package clusterstatus

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/federator-dev/federator/apis/policy"
)

// fakeMember serves /version and the unaggregated discovery documents of
// the group versions it holds; a failing group version answers 503, as an
// aggregated API server that is down does.
type fakeMember struct {
	mu      sync.Mutex
	served  map[string][]metav1.APIResource // group version -> resources
	failing map[string]bool
	down    bool
}

func (m *fakeMember) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.down {
		http.Error(w, "down", http.StatusServiceUnavailable)
		return
	}
	reply := func(v any) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(v)
	}
	switch path := r.URL.Path; {
	case path == "/version":
		reply(map[string]string{"gitVersion": "v1.34.1"})
	case path == "/api":
		reply(metav1.APIVersions{Versions: []string{"v1"}})
	case path == "/apis":
		groups := map[string]*metav1.APIGroup{}
		var names []string
		for gv := range m.served {
			group, version, ok := strings.Cut(gv, "/")
			if !ok {
				continue
			}
			if groups[group] == nil {
				groups[group] = &metav1.APIGroup{Name: group}
				names = append(names, group)
			}
			groups[group].Versions = append(groups[group].Versions, metav1.GroupVersionForDiscovery{GroupVersion: gv, Version: version})
		}
		list := metav1.APIGroupList{}
		for _, name := range names {
			g := groups[name]
			g.PreferredVersion = g.Versions[0]
			list.Groups = append(list.Groups, *g)
		}
		reply(list)
	default:
		gv := strings.TrimPrefix(strings.TrimPrefix(path, "/apis/"), "/api/")
		resources, ok := m.served[gv]
		switch {
		case m.failing[gv]:
			http.Error(w, "the aggregated API server is down", http.StatusServiceUnavailable)
		case !ok:
			http.NotFound(w, r)
		default:
			reply(metav1.APIResourceList{GroupVersion: gv, APIResources: resources})
		}
	}
}

func (m *fakeMember) set(change func(m *fakeMember)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	change(m)
}

// statusTest drives one member's probes through the reconciler by hand:
// probe starts a probe and records it once it ends.
type statusTest struct {
	hub     client.Client
	r       *Reconciler
	queue   workqueue.TypedRateLimitingInterface[reconcile.Request]
	patches atomic.Int32
}

func newStatusTest(t *testing.T, member http.Handler) *statusTest {
	t.Helper()
	server := httptest.NewServer(member)
	t.Cleanup(server.Close)
	st := &statusTest{}
	st.hub = fake.NewClientBuilder().WithScheme(policy.NewScheme()).WithStatusSubresource(&clusterv1alpha1.Cluster{}).
		WithObjects(&clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member1"}}).
		WithInterceptorFuncs(interceptor.Funcs{SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			st.patches.Add(1)
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		}}).Build()
	config := func(context.Context, string) (*rest.Config, error) { return &rest.Config{Host: server.URL}, nil }
	st.r = NewReconciler(st.hub, config, record.NewFakeRecorder(100), time.Hour, 10*time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	st.queue = workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	t.Cleanup(st.queue.ShutDown)
	if err := st.r.probes.source().Start(ctx, st.queue); err != nil {
		t.Fatal(err)
	}
	return st
}

func (st *statusTest) probe(t *testing.T) *clusterv1alpha1.Cluster {
	t.Helper()
	ctx := context.Background()
	req := reconcile.Request{NamespacedName: types.NamespacedName{Name: "member1"}}
	if _, err := st.r.Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	ended, _ := st.queue.Get() // the probe's end
	st.queue.Done(ended)
	if _, err := st.r.Reconcile(ctx, ended); err != nil {
		t.Fatal(err)
	}
	c := &clusterv1alpha1.Cluster{}
	if err := st.hub.Get(ctx, client.ObjectKey{Name: "member1"}, c); err != nil {
		t.Fatal(err)
	}
	return c
}

func resources(nameKinds ...string) []metav1.APIResource {
	var out []metav1.APIResource
	for i := 0; i < len(nameKinds); i += 2 {
		out = append(out, metav1.APIResource{Name: nameKinds[i], Kind: nameKinds[i+1], Namespaced: true})
	}
	return out
}

func completeCondition(c *clusterv1alpha1.Cluster) string {
	cond := meta.FindStatusCondition(c.Status.Conditions, clusterv1alpha1.ClusterConditionCompleteAPIEnablements)
	if cond == nil {
		return "<none>"
	}
	return string(cond.Status) + " " + cond.Reason + " " + cond.Message
}

// TestAPIEnablementsFollowWhatTheMemberServes: each probe lists what the
// member serves as Karmada does (sorted, no subresources), with
// CompleteAPIEnablements; a CRD installed in the member shows at the next
// probe; a group that cannot be read gives what was read and
// CompleteAPIEnablements=False; a member that stops answering keeps its
// list; and a probe that finds nothing new writes nothing.
func TestAPIEnablementsFollowWhatTheMemberServes(t *testing.T) {
	member := &fakeMember{served: map[string][]metav1.APIResource{
		"v1":       resources("secrets", "Secret", "configmaps", "ConfigMap", "pods/status", "Pod", "pods", "Pod"),
		"apps/v1":  resources("deployments", "Deployment", "deployments/scale", "Scale", "daemonsets", "DaemonSet"),
		"batch/v1": resources("jobs", "Job"),
	}, failing: map[string]bool{}}
	st := newStatusTest(t, member)

	c := st.probe(t)
	want := []clusterv1alpha1.APIEnablement{
		{GroupVersion: "apps/v1", Resources: []clusterv1alpha1.APIResource{{Name: "daemonsets", Kind: "DaemonSet"}, {Name: "deployments", Kind: "Deployment"}}},
		{GroupVersion: "batch/v1", Resources: []clusterv1alpha1.APIResource{{Name: "jobs", Kind: "Job"}}},
		{GroupVersion: "v1", Resources: []clusterv1alpha1.APIResource{{Name: "configmaps", Kind: "ConfigMap"}, {Name: "pods", Kind: "Pod"}, {Name: "secrets", Kind: "Secret"}}},
	}
	if !reflect.DeepEqual(c.Status.APIEnablements, want) {
		t.Errorf("apiEnablements =\n%+v\nwant\n%+v", c.Status.APIEnablements, want)
	}
	if got := completeCondition(c); got != "True Complete collected complete APIEnablements from the cluster" {
		t.Errorf("CompleteAPIEnablements = %s", got)
	}
	if c.APIEnablement(clusterv1alpha1.SchemeGroupVersion.WithKind("Cluster")) != clusterv1alpha1.APIDisabled {
		t.Errorf("a kind the complete list lacks is not APIDisabled")
	}
	writes := st.patches.Load()

	st.probe(t)
	if n := st.patches.Load() - writes; n != 0 {
		t.Errorf("a probe that found nothing new wrote the status %d times", n)
	}

	member.set(func(m *fakeMember) {
		m.served["example.com/v1"] = resources("widgets", "Widget", "widgets/status", "Widget")
	})
	c = st.probe(t)
	if c.APIEnablement(schema.GroupVersion{Group: "example.com", Version: "v1"}.WithKind("Widget")) != clusterv1alpha1.APIEnabled {
		t.Errorf("a CRD installed in the member is not listed: %+v", c.Status.APIEnablements)
	}
	if got := c.Status.APIEnablements[2]; got.GroupVersion != "example.com/v1" || len(got.Resources) != 1 {
		t.Errorf("apiEnablements[2] = %+v, want example.com/v1 with widgets only, in group version order", got)
	}

	member.set(func(m *fakeMember) { m.failing["batch/v1"] = true })
	c = st.probe(t)
	if got := completeCondition(c); got != "False Partial might collect partial APIEnablements(3) from the cluster" {
		t.Errorf("CompleteAPIEnablements = %s", got)
	}
	if len(c.Status.APIEnablements) != 3 || c.APIEnablement(schema.GroupVersion{Group: "batch", Version: "v1"}.WithKind("Job")) != clusterv1alpha1.APIUnknown {
		t.Errorf("a partial list: %+v; a kind it lacks must be APIUnknown", c.Status.APIEnablements)
	}

	partial := c.Status.APIEnablements
	member.set(func(m *fakeMember) { m.down = true })
	c = st.probe(t)
	if !meta.IsStatusConditionFalse(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady) {
		t.Errorf("Ready = %+v, want False", meta.FindStatusCondition(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady))
	}
	if !reflect.DeepEqual(c.Status.APIEnablements, partial) || !strings.HasPrefix(completeCondition(c), "False Partial") {
		t.Errorf("a member that does not answer lost its list: %+v, %s", c.Status.APIEnablements, completeCondition(c))
	}

	member.set(func(m *fakeMember) { m.down = false; m.failing = map[string]bool{} })
	c = st.probe(t)
	if got := completeCondition(c); !strings.HasPrefix(got, "True Complete") || len(c.Status.APIEnablements) != 4 {
		t.Errorf("back: CompleteAPIEnablements = %s, %d group versions", got, len(c.Status.APIEnablements))
	}
}

// TestAPIEnablementsEmpty: a member that answers /version but whose
// discovery reads nothing has no list and CompleteAPIEnablements=False,
// Empty, as in Karmada.
func TestAPIEnablementsEmpty(t *testing.T) {
	st := newStatusTest(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/version" {
			_, _ = w.Write([]byte(`{"gitVersion":"v1.34.1"}`))
			return
		}
		http.Error(w, "no discovery here", http.StatusForbidden)
	}))
	c := st.probe(t)
	if got := completeCondition(c); got != "False Empty collected empty APIEnablements from the cluster" {
		t.Errorf("CompleteAPIEnablements = %s", got)
	}
	if c.Status.APIEnablements != nil || c.Status.KubernetesVersion != "v1.34.1" {
		t.Errorf("apiEnablements = %+v, version %q", c.Status.APIEnablements, c.Status.KubernetesVersion)
	}
	if !meta.IsStatusConditionTrue(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady) {
		t.Errorf("Ready is not True: the member answers")
	}
}
