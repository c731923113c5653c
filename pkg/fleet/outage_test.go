package fleet

import (
	"context"
	"testing"
	"time"

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
