package membership

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/federator-dev/federator/internal/fleettest"
	"github.com/federator-dev/federator/pkg/fleet"
)

// secretWatchesRE reads, from a kube-apiserver's metrics, the watches of
// Secrets it serves right now and their scope (cluster or namespace).
var secretWatchesRE = regexp.MustCompile(`(?m)^apiserver_longrunning_requests\{[^}]*resource="secrets",scope="(\w+)"[^}]*verb="WATCH"[^}]*\} (\d+)$`)

// TestCredentialReaderHoldsOnlyKarmadaCluster: a controller manager reading
// member credentials through NewCredentialReader watches the Secrets of
// karmada-cluster only, yet still reaches a member whose Secret is kept in
// another namespace.
func TestCredentialReaderHoldsOnlyKarmadaCluster(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	f := fleettest.Start(t, fleet.Options{})
	hub, err := client.New(f.Hub.Config, client.Options{Scheme: clientgoscheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	secrets := map[string]string{ClusterNamespace + "/member1": "token-1", "shop/member2": "token-2", "shop/db-password": "hunter2"}
	for _, ns := range []string{ClusterNamespace, "shop"} {
		if err := hub.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
	}
	for key, token := range secrets {
		ns, name, _ := strings.Cut(key, "/")
		if err := hub.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Data: map[string][]byte{clusterv1alpha1.SecretTokenKey: []byte(token), clusterv1alpha1.SecretCADataKey: []byte("ca")}}); err != nil {
			t.Fatal(err)
		}
	}

	// The API server watches Secrets itself (service account tokens).
	hubCS, err := kubernetes.NewForConfig(f.Hub.Config)
	if err != nil {
		t.Fatal(err)
	}
	before := secretWatches(ctx, t, hubCS)

	mgr, err := ctrl.NewManager(f.Hub.Config, ctrl.Options{Scheme: clientgoscheme.Scheme,
		Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0"})
	if err != nil {
		t.Fatal(err)
	}
	credentials, err := NewCredentialReader(mgr)
	if err != nil {
		t.Fatal(err)
	}
	// Controllers start once the manager's caches are synced; so does this.
	running := make(chan struct{})
	if err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		close(running)
		<-ctx.Done()
		return nil
	})); err != nil {
		t.Fatal(err)
	}
	mgrCtx, stopMgr := context.WithCancel(ctx)
	mgrDone := make(chan error, 1)
	go func() { mgrDone <- mgr.Start(mgrCtx) }()
	t.Cleanup(func() {
		stopMgr()
		if err := <-mgrDone; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
	select {
	case <-running:
	case err := <-mgrDone:
		t.Fatalf("manager stopped before it ran: %v", err)
	}

	for member, ref := range map[string]string{"member1": ClusterNamespace + "/member1", "member2": "shop/member2"} {
		ns, name, _ := strings.Cut(ref, "/")
		cluster := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: member}}
		cluster.Spec.APIEndpoint = "https://" + member + ".example:6443"
		cluster.Spec.SecretRef = &clusterv1alpha1.LocalSecretReference{Namespace: ns, Name: name}
		cfg, err := Config(ctx, credentials, cluster)
		if err != nil {
			t.Errorf("%s (secret %s): %v", member, ref, err)
			continue
		}
		if cfg.BearerToken != secrets[ref] {
			t.Errorf("%s: token %q, want %q from secret %s", member, cfg.BearerToken, secrets[ref], ref)
		}
	}

	// A cache reports synced once listed; its watch request follows.
	after := secretWatches(ctx, t, hubCS)
	for deadline := time.Now().Add(30 * time.Second); after["namespace"] <= before["namespace"] && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
		after = secretWatches(ctx, t, hubCS)
	}
	if after["cluster"] != before["cluster"] {
		t.Errorf("the manager watches every Secret of the hub (cluster-wide watches of secrets: %d, %d before it started)",
			after["cluster"], before["cluster"])
	}
	if after["namespace"] != before["namespace"]+1 {
		t.Errorf("watches of Secrets in one namespace: %d, %d before the manager started; want one more, karmada-cluster's",
			after["namespace"], before["namespace"])
	}
}

// secretWatches is how many watches of Secrets hub's API server serves,
// by scope.
func secretWatches(ctx context.Context, t *testing.T, hub kubernetes.Interface) map[string]int {
	t.Helper()
	raw, err := hub.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		t.Fatal(err)
	}
	watches := map[string]int{}
	for _, m := range secretWatchesRE.FindAllStringSubmatch(string(raw), -1) {
		n, _ := strconv.Atoi(m[2])
		watches[m[1]] += n
	}
	return watches
}
