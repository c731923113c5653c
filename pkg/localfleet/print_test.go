package localfleet

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/federator-dev/federator/pkg/fleet"
)

func sampleFleet(dir string, members ...string) *fleet.Fleet {
	f := &fleet.Fleet{Hub: &fleet.Cluster{Name: "hub", KubeconfigPath: filepath.Join(dir, "hub.kubeconfig")}}
	for _, m := range members {
		f.Members = append(f.Members, &fleet.Cluster{Name: m, KubeconfigPath: filepath.Join(dir, m+".kubeconfig")})
	}
	return f
}

// The staged-rollout help: one step per stage, in words that match the
// number of clusters, every command pasteable into a shell, and the PATH
// line only when a kubectl was built beside the fleet binaries.
func TestPrintReady(t *testing.T) {
	fleetDir := filepath.Join(t.TempDir(), "my fleet")
	binDir := t.TempDir()

	var out bytes.Buffer
	printReady(&out, sampleFleet(fleetDir, "member1", "member2", "member3"), state{Options: Options{BinDir: binDir, Sample: true, Workloads: true}}, 12345*time.Millisecond)
	text := out.String()
	for _, want := range []string{
		"federator: ready: hub and 3 members; kubeconfigs in " + fleetDir + " ",
		"; Ctrl-C stops everything; started in 12.3s\n",
		"Rollout demo/web releases each new version stage by stage: canary (member1) first, soaking 30s once healthy, then the other members. " +
			"A version not healthy within a minute, or failing the analysis, fails",
		"1. Roll out nginx:1.26; it walks through the stages by itself (status waits until it completes, about a minute):\n" +
			"  kubectl --kubeconfig '" + filepath.Join(fleetDir, "hub.kubeconfig") + "' -n demo set image deploy/web web=nginx:1.26\n" +
			"  " + shellQuote(selfCommand()) + " rollout status web -n demo --fleet '" + fleetDir + "' --timeout 5m\n",
		"2. Roll out nginx:1.27-broken; only member1 gets it, its new pod never becomes ready, and within a minute the rollout fails (status exits 1) and puts member1 back on nginx:1.26; the other members never get it:",
		"3. Undo: the template goes back to nginx:1.26 as the last revision had it, and rolls out again:\n" +
			"  " + shellQuote(selfCommand()) + " rollout undo web -n demo --fleet '" + fleetDir + "'\n",
		"4. Roll out nginx:1.28 and pause it while member1 soaks; nothing more is released, and the soak clock stops:",
		" rollout pause web -n demo --fleet '" + fleetDir + "' -m 'checking the canary'\n",
		"5. Resume: the soak goes on where it stopped, then the other members follow:",
		// This federator, wherever it is: no PATH line puts it first.
		"\n  " + shellQuote(selfCommand()) + " get rollout web -n demo --fleet '" + fleetDir + "'\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %q in:\n%s", want, text)
		}
	}
	if strings.Contains(text, "export PATH") {
		t.Errorf("a PATH line without a kubectl in %s:\n%s", binDir, text)
	}
	if strings.Contains(text, "6. ") || strings.Contains(text, "error ratio") {
		t.Errorf("an analysis step without the fleet's Prometheus:\n%s", text)
	}

	// With the fleet's Prometheus the canary is judged by its error ratio
	// too, and a sixth step makes a version fail that analysis.
	out.Reset()
	printReady(&out, sampleFleet(fleetDir, "member1", "member2"), state{Options: Options{BinDir: binDir, Sample: true, Workloads: true},
		prometheusURL: "http://127.0.0.1:41235"}, time.Second)
	text = out.String()
	member1KC := "'" + filepath.Join(fleetDir, "member1.kubeconfig") + "'"
	for _, want := range []string{
		"canary (member1) first, soaking 30s once healthy, its error ratio measured on the fleet's Prometheus (under 5%, three times), then member2.",
		"6. Make nginx:1.29 fail 20% of its requests in member1 (ConfigMap federator-system/federator-fleet-metrics there steers the fleet's stand-in application), " +
			"and roll it out: its pods become ready, but the canary's analysis measures an error ratio over 5%, fails (status exits 1), and member1 goes back to nginx:1.28; member2 never gets it:\n" +
			"  kubectl --kubeconfig " + member1KC + " create namespace federator-system\n" +
			"  kubectl --kubeconfig " + member1KC + " -n federator-system create configmap federator-fleet-metrics --from-literal=1.29.errorRate=0.2\n" +
			"  kubectl --kubeconfig '" + filepath.Join(fleetDir, "hub.kubeconfig") + "' -n demo set image deploy/web web=nginx:1.29\n" +
			"  " + shellQuote(selfCommand()) + " rollout status web -n demo --fleet '" + fleetDir + "' --timeout 5m\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %q in:\n%s", want, text)
		}
	}

	if err := os.WriteFile(filepath.Join(binDir, "kubectl"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	printReady(&out, sampleFleet(fleetDir, "member1", "member2", "member3", "member4"), state{Options: Options{BinDir: binDir, Sample: true}}, time.Second)
	text = out.String()
	for _, want := range []string{
		"\n  export PATH=" + binDir + `:"$PATH"` + "\n",
		// Bare members run no pods: no broken version to watch fail.
		"2. Roll out nginx:1.27; only member1 changes:",
		"3. Release member2; member3 and member4 stay on nginx:1.25:",
		// The fleet directory has a space: printed paths are quoted.
		"kubectl --kubeconfig '" + filepath.Join(fleetDir, "hub.kubeconfig") + "' -n demo set image",
		"kubectl --kubeconfig '" + fleetDir + "'/$m.kubeconfig -n demo get deploy web",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %q in:\n%s", want, text)
		}
	}
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, "  ") {
			continue
		}
		if syntax, err := exec.Command("bash", "-n", "-c", line).CombinedOutput(); err != nil {
			t.Errorf("printed command %q is not valid shell: %s", line, syntax)
		}
	}

	out.Reset()
	printReady(&out, sampleFleet(fleetDir, "member1"), state{Options: Options{BinDir: binDir}}, time.Second)
	if got := strings.Count(out.String(), "\n"); got != 1 {
		t.Errorf("without --sample only the ready line is printed; got:\n%s", out.String())
	}

	out.Reset()
	printReady(&out, sampleFleet(fleetDir, "member1"), state{Options: Options{BinDir: binDir}, dashboardURL: "http://127.0.0.1:41234/"}, time.Second)
	if lines := strings.Split(strings.TrimSpace(out.String()), "\n"); len(lines) != 2 ||
		lines[1] != "federator: dashboard (read-only, live): http://127.0.0.1:41234/" {
		t.Errorf("with --dashboard-bind-address the ready line is followed by the dashboard's URL; got:\n%s", out.String())
	}

	out.Reset()
	printReady(&out, sampleFleet(fleetDir, "member1"), state{Options: Options{BinDir: binDir}, prometheusURL: "http://127.0.0.1:41235"}, time.Second)
	if lines := strings.Split(strings.TrimSpace(out.String()), "\n"); len(lines) != 2 ||
		lines[1] != "federator: prometheus: http://127.0.0.1:41235 (the members' federator_fleet_http_requests_total, scraped every 1s; "+
			"steer them with ConfigMap federator-system/federator-fleet-metrics in a member)" {
		t.Errorf("with --prometheus the ready line is followed by Prometheus' URL; got:\n%s", out.String())
	}
}

// The ready line names the Pull members (--pull-members), the last ones.
func TestPrintReadyNamesPullMembers(t *testing.T) {
	var out bytes.Buffer
	printReady(&out, sampleFleet(t.TempDir(), "member1", "member2", "member3"), state{Options: Options{PullMembers: 2}}, time.Second)
	if !strings.Contains(out.String(), "hub and 3 members (member2, member3 in Pull mode, each served by its agent); kubeconfigs") {
		t.Errorf("ready line %q does not name the Pull members", out.String())
	}
}
