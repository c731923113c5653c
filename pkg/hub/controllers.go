package hub

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/federator-dev/federator/internal/holdqueue"
	"github.com/federator-dev/federator/internal/hubwatch"
	"github.com/federator-dev/federator/internal/redecide"
	"github.com/federator-dev/federator/pkg/binding"
	"github.com/federator-dev/federator/pkg/bindingstatus"
	"github.com/federator-dev/federator/pkg/clusterstatus"
	"github.com/federator-dev/federator/pkg/detector"
	"github.com/federator-dev/federator/pkg/dispatch"
	"github.com/federator-dev/federator/pkg/gate"
	"github.com/federator-dev/federator/pkg/namespacesync"
	"github.com/federator-dev/federator/pkg/rollout"
	"github.com/federator-dev/federator/pkg/softdelete"
)

// MemberWrites is how many writes the hub sends one member at once
// (dispatch.MemberWrites), for programs that compare with it and may not
// import a controller package.
const MemberWrites = dispatch.MemberWrites

// deps is what controllers are set up with beyond the manager.
type deps struct {
	options      Options
	members      *dispatch.Members
	memberConfig clusterstatus.ConfigFunc
	// noPolicyStatus: the hub's policy CRDs serve no status (hubinstall.Install).
	noPolicyStatus bool
	// firstPass: the binding controller's first pass, which the
	// dispatcher waits for; nil when the binding controller is off.
	firstPass *redecide.FirstPass
	// hubCaches: whether the hub's informers watch the hub.
	hubCaches *hubwatch.Tracker
	// catchUp: after the hub caches broke, the detector's and the binding
	// controller's passes the dispatchers wait for; nil when either is off.
	catchUp *redecide.Round
	// deciders: the hold changes the detector and the binding controller
	// are deciding, which the dispatchers wait for.
	deciders *holdqueue.Deciders
}

// Controller is one controller the hub runs, by the name --controllers
// uses (Karmada's controller-manager names where Karmada has the
// controller). This table is the one place that says which package
// implements which name; docs/architecture.md's is generated from it.
type Controller struct {
	Name string
	// What it does, for --help.
	What string
	// Package implements it.
	Package string
	// Karmada names the controllers of Karmada's controller-manager this
	// one stands in for ("" when Karmada has none); where it has one, Name
	// is its name.
	Karmada string
	setup   func(mgr ctrl.Manager, d deps) error
}

// Controllers are every controller the hub runs, in start order.
var Controllers = []Controller{
	{Name: "detector", Package: "pkg/detector", What: "which policy claims which template; bindings",
		setup: func(mgr ctrl.Manager, d deps) error {
			return detector.SetupWithManager(mgr, detector.Options{Workers: d.options.Workers, NoPolicyStatus: d.noPolicyStatus,
				CatchUp: d.catchUp, TemplateCaches: d.hubCaches, Deciders: d.deciders})
		}},
	{Name: "binding", Package: "pkg/binding", Karmada: "binding", What: "binding → one Work per target cluster, holds decided by pkg/hold",
		setup: func(mgr ctrl.Manager, d deps) error {
			return binding.SetupWithManager(mgr, binding.Options{Workers: d.options.Workers, MaxDeletionDelay: d.options.MaxDeletionDelay,
				FirstPass: d.firstPass, CatchUp: d.catchUp, Deciders: d.deciders})
		}},
	{Name: "bindingStatus", Package: "pkg/bindingstatus", Karmada: "bindingStatus", What: "Work status → binding and template status",
		setup: func(mgr ctrl.Manager, d deps) error {
			return bindingstatus.SetupWithManager(mgr, bindingstatus.Options{Workers: d.options.Workers})
		}},
	{Name: "execution", Package: "pkg/dispatch", Karmada: "execution, workStatus", What: "Work → member cluster (pkg/dispatch); Cluster finalizer: a Cluster deleted is emptied first",
		setup: func(mgr ctrl.Manager, d deps) error {
			var firstPass <-chan struct{}
			if d.firstPass != nil {
				firstPass = d.firstPass.Done()
			}
			return dispatch.SetupWithManager(mgr, dispatch.Options{Members: d.members, FirstPass: firstPass,
				HubCaches: hubCurrent{caches: d.hubCaches, round: d.catchUp}, Holds: d.deciders})
		}},
	{Name: "softdelete", Package: "pkg/softdelete", What: "deletion countdowns: delete member objects once their deletion delay has passed",
		setup: func(mgr ctrl.Manager, d deps) error {
			return softdelete.SetupWithManager(mgr, softdelete.Options{Members: d.members, Frozen: d.members.Frozen,
				MaxDelay: d.options.MaxDeletionDelay, Workers: d.options.Workers})
		}},
	{Name: "clusterStatus", Package: "pkg/clusterstatus", Karmada: "clusterStatus", What: "Cluster Ready and kubernetesVersion; a Pull cluster's Ready Unknown when its agent stops reporting",
		setup: func(mgr ctrl.Manager, d deps) error {
			return clusterstatus.SetupWithManager(mgr, clusterstatus.Options{Config: d.memberConfig, Interval: d.options.ClusterStatusInterval,
				MonitorGracePeriod: d.options.ClusterMonitorGracePeriod})
		}},
	{Name: "gate", Package: "pkg/gate", What: "Gate status: opened or closed, why, until when",
		setup: func(mgr ctrl.Manager, d deps) error {
			return gate.SetupWithManager(mgr, gate.Options{Workers: d.options.Workers})
		}},
	{Name: "rollout", Package: "pkg/rollout", What: "Rollouts: each new revision released stage by stage (pkg/rollout)",
		setup: func(mgr ctrl.Manager, d deps) error {
			return rollout.SetupWithManager(mgr, rollout.Options{Workers: d.options.Workers})
		}},
	{Name: "namespace", Package: "pkg/namespacesync", Karmada: "namespace", What: "hub namespaces to every member",
		setup: func(mgr ctrl.Manager, d deps) error {
			return namespacesync.SetupWithManager(mgr, namespacesync.Options{})
		}},
}

// ControllersMarkdown is the table of controllers docs/architecture.md
// shows: each --controllers name, the package that implements it, and
// Karmada's controllers it stands in for.
func ControllersMarkdown() []byte {
	var b bytes.Buffer
	b.WriteString("| `--controllers` name | Package | Karmada's controller | What it does |\n|---|---|---|---|\n")
	for _, c := range Controllers {
		karmada := "—"
		if c.Karmada != "" {
			karmada = "`" + strings.ReplaceAll(c.Karmada, ", ", "`, `") + "`"
		}
		fmt.Fprintf(&b, "| `%s` | `%s` | %s | %s |\n", c.Name, c.Package, karmada, c.What)
	}
	return b.Bytes()
}

// ControllerNames lists every controller's name.
func ControllerNames() []string {
	out := make([]string, 0, len(Controllers))
	for _, c := range Controllers {
		out = append(out, c.Name)
	}
	return out
}

// Enabled resolves a --controllers list as Karmada's controller-manager
// does: "*" enables every controller, "name" enables one, "-name" disables
// one (a disabling entry wins). An unknown name is an error that lists the
// known ones.
func Enabled(list []string) (map[string]bool, error) {
	known := ControllerNames()
	enabled := map[string]bool{}
	star := false
	var disabled []string
	for _, entry := range list {
		entry = strings.TrimSpace(entry)
		name := strings.TrimPrefix(entry, "-")
		switch {
		case entry == "*":
			star = true
			continue
		case entry == "":
			continue
		case !slices.Contains(known, name):
			return nil, fmt.Errorf("--controllers: unknown controller %q; known: *, %s (prefix a name with - to disable it)",
				name, strings.Join(known, ", "))
		}
		if strings.HasPrefix(entry, "-") {
			disabled = append(disabled, name)
		} else {
			enabled[name] = true
		}
	}
	if star {
		for _, n := range known {
			enabled[n] = true
		}
	}
	for _, n := range disabled {
		delete(enabled, n)
	}
	return enabled, nil
}
