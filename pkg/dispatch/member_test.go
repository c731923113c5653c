package dispatch

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	"github.com/karmada-io/karmada/pkg/util/names"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/federator-dev/federator/apis/policy"
	workkeys "github.com/federator-dev/federator/apis/work"
	"github.com/federator-dev/federator/config/install/crds"
	"github.com/federator-dev/federator/internal/fleettest"
	"github.com/federator-dev/federator/pkg/fleet"
)

// TestMemberThatLeavesLeavesNothingRunning: once a member's Cluster is
// deleted, its Work controller, queue, informer handlers and watch are all
// gone, a Work of it being deleted is not held by its finalizer, and the
// member is served and watched again when it rejoins. One API server plays
// the hub and every member.
func TestMemberThatLeavesLeavesNothingRunning(t *testing.T) {
	crdList, err := crds.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	f := fleettest.Start(t, fleet.Options{CRDs: crdList})
	scheme := policy.NewScheme()
	hub, err := client.New(f.Hub.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	mgr, err := ctrl.NewManager(f.Hub.Config, ctrl.Options{Scheme: scheme,
		Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
		// go test -count=2 sets up the same controllers twice in one process.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)}})
	if err != nil {
		t.Fatal(err)
	}
	// As in pkg/hub: a member is reachable while its Cluster is registered.
	memberConfig := func(ctx context.Context, cluster string) (*rest.Config, error) {
		if err := mgr.GetClient().Get(ctx, client.ObjectKey{Name: cluster}, &clusterv1alpha1.Cluster{}); err != nil {
			return nil, fmt.Errorf("cluster %s: %w", cluster, err)
		}
		return f.Hub.Config, nil
	}
	if err := SetupWithManager(mgr, Options{Members: NewMembers(memberConfig, ClientOptions{QPS: 100, Burst: 200})}); err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	go func() { stopped <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		stop()
		if err := <-stopped; err != nil {
			t.Errorf("manager: %v", err)
		}
	})

	eventually := func(what string, done func() bool) {
		t.Helper()
		for deadline := time.Now().Add(60 * time.Second); !done(); time.Sleep(100 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("never: %s", what)
			}
		}
	}
	join := func(cluster string) {
		t.Helper()
		c := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: cluster},
			Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Push, APIEndpoint: f.Hub.Config.Host}}
		if err := hub.Create(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	configMapIn := func(name string) func() bool {
		return func() bool {
			return hub.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, &corev1.ConfigMap{}) == nil
		}
	}
	// dispatch has cluster's controller put ConfigMap default/name in the
	// member through a Work of that name.
	dispatch := func(cluster, name string) client.ObjectKey {
		t.Helper()
		ns := names.GenerateExecutionSpaceName(cluster)
		if err := hub.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
		raw, err := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"namespace": "default", "name": name,
				"labels":      map[string]string{workkeys.ManagedLabel: workkeys.ManagedLabelValue},
				"annotations": map[string]string{workv1alpha2.WorkNamespaceAnnotation: ns, workv1alpha2.WorkNameAnnotation: name}},
			"data": map[string]string{"level": "info"}})
		if err != nil {
			t.Fatal(err)
		}
		work := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: workv1alpha1.WorkSpec{Workload: workv1alpha1.WorkloadTemplate{
				Manifests: []workv1alpha1.Manifest{{RawExtension: k8sruntime.RawExtension{Raw: raw}}}}}}
		if err := hub.Create(ctx, work); err != nil {
			t.Fatal(err)
		}
		eventually("ConfigMap "+name+" dispatched to "+cluster, configMapIn(name))
		return client.ObjectKeyFromObject(work)
	}

	join("stays")
	dispatch("stays", "stays")
	// A Cluster that leaves waits for its bindings, read from the hub's
	// cache: the binding controller's informers in a hub, here started
	// before counting.
	for _, obj := range []client.Object{&workv1alpha2.ResourceBinding{}, &workv1alpha2.ClusterResourceBinding{}} {
		if _, err := mgr.GetCache().GetInformer(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	baseline := machineryGoroutines()
	join("leaves")
	work := dispatch("leaves", "leaves")
	joined := machineryGoroutines()
	if joined <= baseline {
		t.Fatalf("%d goroutines with a second member, %d with one: this test cannot see a member's controller", joined, baseline)
	}

	if err := hub.Delete(ctx, &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "leaves"}}); err != nil {
		t.Fatal(err)
	}
	// As the binding controller does once the member is no longer placed.
	if err := hub.Delete(ctx, &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: work.Namespace, Name: work.Name}}); err != nil {
		t.Fatal(err)
	}
	eventually("the Work of the member that left is deleted, not held by its finalizer", func() bool {
		return apierrors.IsNotFound(hub.Get(ctx, work, &workv1alpha1.Work{}))
	})
	// A member runs about twenty goroutines (workers, informers, its
	// watch); a couple of short-lived ones (a retry timer, a request of the
	// member that stays) may come and go on a loaded machine, so those are
	// tolerated, and what remains is printed if more do.
	const transient = 2
	t.Logf("goroutines: %d with one member, %d with two", baseline, joined)
	left := func() bool { return machineryGoroutines() <= baseline+transient }
	for deadline := time.Now().Add(60 * time.Second); !left(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("never: no goroutine of the member that left is running (%d now, %d before it joined); running:\n%s",
				machineryGoroutines(), baseline, goroutineStacks())
		}
	}

	join("leaves")
	dispatch("leaves", "leaves-again")
	if err := hub.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "leaves-again"}}); err != nil {
		t.Fatal(err)
	}
	eventually("the rejoined member's watch puts back an object deleted there", configMapIn("leaves-again"))
}

// machineryGoroutines counts the goroutines running now, leaving out those
// of HTTP connections, which the client transports keep for every client
// alike and close when idle.
func machineryGoroutines() int { return len(machinery()) }

func machinery() []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if !strings.Contains(g, "net/http.") && !strings.Contains(g, "golang.org/x/net/http2") {
			out = append(out, g)
		}
	}
	return out
}

// goroutineStacks is every machinery goroutine's stack, for a failure.
func goroutineStacks() string { return strings.Join(machinery(), "\n\n") }
