package fleet

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// A member outage must be possible while the hub watches the member: an
// open watch must not keep the API server from stopping (it would, for its
// whole request timeout, and envtest then loses track of the process).
func TestStopAPIServerWithOpenWatch(t *testing.T) {
	member := startOneMember(t)
	w, err := kubernetes.NewForConfigOrDie(member.Config).CoreV1().ConfigMaps("default").Watch(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if err := member.StopAPIServer(); err != nil {
		t.Fatalf("StopAPIServer with an open watch: %v", err)
	}
	if err := member.StartAPIServer(); err != nil {
		t.Fatalf("StartAPIServer: %v", err)
	}
	if _, err := kubernetes.NewForConfigOrDie(member.Config).CoreV1().Namespaces().Get(context.Background(), "default", metav1.GetOptions{}); err != nil {
		t.Fatalf("member after restart: %v", err)
	}
}

// A paused API server answers nothing until resumed, then answers again.
func TestPauseAPIServer(t *testing.T) {
	member := startOneMember(t)
	if err := member.PauseAPIServer(); err != nil {
		t.Fatal(err)
	}
	cfg := rest.CopyConfig(member.Config)
	cfg.Timeout = 2 * time.Second
	if _, err := kubernetes.NewForConfigOrDie(cfg).CoreV1().Namespaces().Get(context.Background(), "default", metav1.GetOptions{}); err == nil {
		t.Fatal("a paused API server answered")
	}
	if err := member.ResumeAPIServer(); err != nil {
		t.Fatal(err)
	}
	if _, err := kubernetes.NewForConfigOrDie(member.Config).CoreV1().Namespaces().Get(context.Background(), "default", metav1.GetOptions{}); err != nil {
		t.Fatalf("after resume: %v", err)
	}
}

// A restarted etcd keeps its data: an object written before StopEtcd is
// there after StartEtcd, and writes fail while etcd is down.
func TestRestartEtcd(t *testing.T) {
	member := startOneMember(t)
	cs := kubernetes.NewForConfigOrDie(member.Config)
	ctx := context.Background()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kept", Namespace: "default"}, Data: map[string]string{"k": "v"}}
	if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := member.StopEtcd(); err != nil {
		t.Fatalf("StopEtcd: %v", err)
	}
	short := rest.CopyConfig(member.Config)
	short.Timeout = 3 * time.Second
	cm2 := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "while-down", Namespace: "default"}}
	if _, err := kubernetes.NewForConfigOrDie(short).CoreV1().ConfigMaps("default").Create(ctx, cm2, metav1.CreateOptions{}); err == nil {
		t.Fatal("a write succeeded while etcd was stopped")
	}
	if err := member.StartEtcd(); err != nil {
		t.Fatalf("StartEtcd: %v", err)
	}
	var got *corev1.ConfigMap
	var err error
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if got, err = cs.CoreV1().ConfigMaps("default").Get(ctx, "kept", metav1.GetOptions{}); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatalf("the ConfigMap written before the restart: %v", err)
	}
	if got.Data["k"] != "v" {
		t.Fatalf("the ConfigMap after the restart has %v, want k=v", got.Data)
	}
}

// startOneMember starts a hub and one member for the test and stops them
// when it ends.
func startOneMember(t *testing.T) *Cluster {
	t.Helper()
	isolateTempDir(t)
	bin := requireBinaries(t, false)
	f, err := Start(context.Background(), Options{Dir: t.TempDir(), Members: 1, BinDir: bin})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := f.Stop(); err != nil {
			t.Error(err)
		}
	})
	return f.Members[0]
}
