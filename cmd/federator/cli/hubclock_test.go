package cli

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// The hub a command connects to tells its time with every answer (the
// Date header); gate requests are stamped with it, whatever this
// machine's clock says.
func TestConnectReadsTheHubsClockFromItsAnswers(t *testing.T) {
	hubTime := time.Date(2026, 3, 1, 12, 0, 7, 0, time.UTC)
	hub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Date", hubTime.Format(http.TimeFormat))
		http.NotFound(w, nil)
	}))
	t.Cleanup(hub.Close)
	kubeconfig := filepath.Join(t.TempDir(), "hub.kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: hub, cluster: {server: "`+hub.URL+`"}}]
contexts: [{name: hub, context: {cluster: hub, user: me, namespace: demo}}]
users: [{name: me, user: {token: t}}]
current-context: hub
`), 0o600); err != nil {
		t.Fatal(err)
	}
	h, err := connect(connection{kubeconfig: kubeconfig})
	if err != nil {
		t.Fatal(err)
	}
	if at, ok := h.hubNow(); ok {
		t.Fatalf("the hub's time is %s before the hub said anything", at)
	}
	hc, err := rest.HTTPClientFor(h.config)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := hc.Get(hub.URL + "/apis/gating.federator.dev/v1alpha1/namespaces/demo/gates/approval")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if at, ok := h.hubNow(); !ok || !at.Equal(hubTime) {
		t.Errorf("the hub's time = %s, %v; want its Date header's %s", at, ok, hubTime)
	}
}
