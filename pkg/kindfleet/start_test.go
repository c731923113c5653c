package kindfleet

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/kind/pkg/cluster"
)

// Where Docker refuses kind's nodes, a fleet whose preflight was passed by
// (a Plan made by hand) fails on its first cluster with Docker's own words,
// and deletes everything it made: no node container, no kubeconfig, no
// Docker network it brought.
func TestStartThatFailsDeletesWhatItCreated(t *testing.T) {
	d := daemonAnswers(t)
	if capabilityInBoundingSet(t, capSysResource) {
		t.Skip("privileged containers start here: this test needs a Docker that refuses kind's nodes")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	_, netErr := d.run(ctx, nil, "network", "inspect", EngineDocker.network(os.Getenv))
	networkExisted := netErr == nil

	// A node image with an init to start; the runtime refuses before it looks.
	image := "federator-test-node:" + strings.ReplaceAll(strings.ToLower(t.Name()), "_", "-")
	if _, err := d.run(ctx, emptyTar(t), "import", "--change", `ENTRYPOINT ["/sbin/init"]`, "-", image); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = d.run(context.Background(), nil, "rmi", "--force", image) })

	dir := filepath.Join(t.TempDir(), "fleet")
	p := &Plan{o: Options{Dir: dir, Members: 1, NodeImage: image, Prefix: "federator-test"}, dir: dir,
		provider: cluster.NewProvider(cluster.ProviderWithDocker()), engine: EngineDocker}
	f, err := p.Start(ctx, nil)
	if err == nil {
		_ = f.Stop()
		t.Fatal("Start succeeded on a Docker that refuses privileged containers")
	}
	t.Logf("Start: %v", err)
	for _, want := range []string{"kind fleet: creating federator-test-hub: ", "unable to apply caps: operation not permitted"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "federator-test-member1") {
		t.Errorf("error %q: member1 was tried after the hub failed", err)
	}
	// This fleet's nodes only: another package's tests, run beside these,
	// may make kind nodes of their own.
	for _, name := range []string{"hub", "member1"} {
		filter := "label=io.x-k8s.kind.cluster=" + ClusterName("federator-test", name)
		if left, err := d.run(ctx, nil, "ps", "--all", "--quiet", "--filter", filter); err != nil || left != "" {
			t.Errorf("kind node containers left (%s): %q %v", filter, left, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "hub.kubeconfig")); !os.IsNotExist(err) {
		t.Errorf("hub.kubeconfig left behind (%v)", err)
	}
	if _, err := d.run(ctx, nil, "network", "inspect", EngineDocker.network(os.Getenv)); !networkExisted && err == nil {
		t.Errorf("Docker network %s, which the fleet created, was left behind", EngineDocker.network(os.Getenv))
	}
}
