package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// `federator controller` has controller-runtime's flag names, and leader
// election is on unless turned off.
func TestControllerFlags(t *testing.T) {
	cmd := newControllerCommand()
	for name, def := range map[string]string{
		"leader-elect": "true", "leader-election-namespace": "federator-system",
		"leader-elect-lease-duration": "15s", "leader-elect-renew-deadline": "10s", "leader-elect-retry-period": "2s",
		"health-probe-bind-address": "", "metrics-bind-address": "", "kubeconfig": "",
		"zap-log-level": "", "zap-encoder": "", "install-crds": "true",
	} {
		f := cmd.Flags().Lookup(name)
		if f == nil {
			t.Errorf("no --%s", name)
			continue
		}
		if name != "zap-log-level" && name != "zap-encoder" && f.DefValue != def {
			t.Errorf("--%s defaults to %q, want %q", name, f.DefValue, def)
		}
	}
}

// The Lease's namespace: $POD_NAMESPACE (the downward API) first.
func TestOwnNamespace(t *testing.T) {
	t.Setenv("POD_NAMESPACE", "")
	if got := ownNamespace(); got != "federator-system" {
		t.Errorf("outside a pod: %q, want federator-system", got)
	}
	t.Setenv("POD_NAMESPACE", "fed")
	if got := ownNamespace(); got != "fed" {
		t.Errorf("POD_NAMESPACE=fed: %q", got)
	}
}

// Metrics and probes are served by default in a cluster only.
func TestAddressDefaults(t *testing.T) {
	for _, c := range []struct {
		given     string
		inCluster bool
		want      string
	}{
		{"", true, ":8081"}, {"", false, "0"}, {":9000", false, ":9000"}, {"0", true, "0"},
	} {
		if got := orDefault(c.given, c.inCluster, ":8081"); got != c.want {
			t.Errorf("orDefault(%q, inCluster %v) = %q, want %q", c.given, c.inCluster, got, c.want)
		}
	}
}

// zap's flags change the controller's log: --zap-encoder=console writes
// text instead of JSON, --zap-log-level wins over --v.
func TestZapFlagsShapeTheLog(t *testing.T) {
	for _, c := range []struct {
		args       []string
		json, logs bool
	}{
		{nil, true, false},
		{[]string{"--v=1"}, true, true},
		{[]string{"--zap-encoder=console", "--v=1"}, false, true},
		{[]string{"--zap-log-level=debug"}, true, true},
		{[]string{"--zap-log-level=info", "--v=1"}, true, false},
	} {
		fs := pflag.NewFlagSet("controller", pflag.ContinueOnError)
		var o zap.Options
		addZapFlags(fs, &o)
		verbosity := fs.Int("v", 0, "")
		if err := fs.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		newFlagLogger(&out, *verbosity, &o).V(1).Info("reconciled")
		if got := out.Len() > 0; got != c.logs {
			t.Errorf("%v: a V(1) line logged: %v, want %v", c.args, got, c.logs)
		}
		if c.logs && strings.HasPrefix(out.String(), "{") != c.json {
			t.Errorf("%v: logged %q, want JSON %v", c.args, out.String(), c.json)
		}
	}
}
