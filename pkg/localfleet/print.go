package localfleet

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/federator-dev/federator/pkg/fleet"
	"github.com/federator-dev/federator/pkg/fleetmetrics"
)

// What `federator up` prints once its fleet is ready: where everything
// is, and the steps of the sample staged rollout.

// printReady prints the ready line and, with --sample, the steps of the
// staged rollout: with the sample's Rollout, a good version that walks
// through the stages by itself, a broken one stopped and rolled back at the
// canary, undo, and a pause during the soak; by hand elsewhere.
func printReady(out io.Writer, f fleet.Running, o state, startup time.Duration) {
	hubEndpoint, members := f.Endpoints()
	dir := filepath.Dir(hubEndpoint.KubeconfigPath)
	fmt.Fprintf(out, "federator: ready: hub and %d members%s; kubeconfigs in %s (hub.kubeconfig, member1.kubeconfig, ...); Ctrl-C stops everything; started in %.1fs\n",
		len(members), pullNote(members, o.PullMembers), dir, startup.Seconds())
	if o.dashboardURL != "" {
		fmt.Fprintf(out, "federator: dashboard (read-only, live): %s\n", o.dashboardURL)
	}
	if o.prometheusURL != "" {
		fmt.Fprintf(out, "federator: prometheus: %s (the members' %s, scraped every %s; steer them with ConfigMap %s/%s in a member)\n",
			o.prometheusURL, fleetmetrics.RequestsTotal, fleet.PrometheusScrapeInterval, fleetmetrics.SteeringNamespace, fleetmetrics.SteeringName)
	}
	if !o.Sample {
		return
	}
	var memberNames []string
	for _, m := range members {
		memberNames = append(memberNames, m.Name)
	}
	hubKC := shellQuote(hubEndpoint.KubeconfigPath)
	// Every command is printed to be pasted into a shell as is: arguments
	// holding ( ) [ ] ? or " are single-quoted.
	fmt.Fprintf(out, `
A staged rollout sample is applied: Deployment demo/web (%s) goes to every member.
`, o.image("1.25"))
	federator := selfCommand()
	if kubectl := filepath.Join(o.BinDir, "kubectl"); isExecutable(kubectl) {
		abs, err := filepath.Abs(o.BinDir)
		if err == nil {
			fmt.Fprintf(out, "The commands below run the kubectl that `make binaries` built; put it first on your PATH:\n  export PATH=%s:\"$PATH\"\n",
				shellQuote(abs))
			if filepath.Dir(federator) == abs {
				federator = "federator"
			}
		}
	}
	if o.staged() {
		printStagedSteps(out, dir, hubKC, federator, memberNames, o.image, o.prometheusURL != "")
		return
	}
	fmt.Fprintf(out, `Watch each member's image, why each Work is dispatched or held, and how many pods of the new version are ready in each member:
  for m in %s; do echo "$m: $(kubectl --kubeconfig %s/$m.kubeconfig -n demo get deploy web -o jsonpath='{.spec.template.spec.containers[0].image}' 2>/dev/null || echo absent)"; done
  kubectl --kubeconfig %s get works -A -o 'custom-columns=WORK:.metadata.namespace,NAME:.metadata.name,DISPATCHING:.status.conditions[?(@.type=="Dispatching")].reason'
  %s get rollout web -n demo --fleet %s
`, strings.Join(memberNames, " "), shellQuote(dir), hubKC, shellQuote(federator), shellQuote(dir))
	first := memberNames[0]
	step := 1
	held := memberNames[1:]
	if len(held) > 0 {
		fmt.Fprintf(out, "%d. Hold %s:\n  kubectl --kubeconfig %s -n demo patch pp web --type merge -p '%s'\n",
			step, strings.Join(held, " and "), hubKC, suspendPatch(held))
		step++
	}
	// The -broken version fails on purpose only in the local fleet's
	// simulated nodes; kind nodes run real containers.
	simulated := o.Workloads && o.Provider != ProviderKind
	if simulated {
		fmt.Fprintf(out, "%d. Roll out nginx:1.27-broken; only %s gets it, and its new pod never becomes ready (READY 0/2), so the rollout stops there:\n"+
			"  kubectl --kubeconfig %s -n demo set image deploy/web web=nginx:1.27-broken\n"+
			"  kubectl --kubeconfig %s -n demo get pods\n",
			step, first, hubKC, shellQuote(filepath.Join(dir, first+".kubeconfig")))
		step++
		fmt.Fprintf(out, "%d. Roll %s back to nginx:1.25:\n  kubectl --kubeconfig %s -n demo set image deploy/web web=nginx:1.25\n",
			step, first, hubKC)
		step++
	}
	ready := ""
	if simulated {
		ready = " and becomes ready (READY 2/2)"
	}
	fmt.Fprintf(out, "%d. Roll out nginx:1.27; only %s changes%s:\n  kubectl --kubeconfig %s -n demo set image deploy/web web=nginx:1.27\n",
		step, first, ready, hubKC)
	step++
	if len(held) > 1 {
		verb := "stays"
		if len(held) > 2 {
			verb = "stay"
		}
		fmt.Fprintf(out, "%d. Release %s; %s %s on nginx:1.25:\n  kubectl --kubeconfig %s -n demo patch pp web --type merge -p '%s'\n",
			step, held[0], strings.Join(held[1:], " and "), verb, hubKC, suspendPatch(held[1:]))
		step++
	}
	fmt.Fprintf(out, "%d. Release everyone:\n  kubectl --kubeconfig %s -n demo patch pp web --type json -p '[{\"op\":\"remove\",\"path\":\"/spec/suspension\"}]'\n",
		step, hubKC)
}

// printStagedSteps walks the sample's Rollout: every step is a command
// to paste, and what it shows. analysed: the canary is judged by its
// error ratio on the fleet's Prometheus too (samples.StagesWithAnalysis).
func printStagedSteps(out io.Writer, dir, hubKC, federator string, memberNames []string, image func(tag string) string, analysed bool) {
	first, rest, restNever := memberNames[0], "the other members", "the other members never get it"
	if len(memberNames) == 2 {
		rest, restNever = memberNames[1], memberNames[1]+" never gets it"
	}
	fed := shellQuote(federator)
	fleetFlag := "--fleet " + shellQuote(dir)
	status := func(extra string) string {
		return fmt.Sprintf("  %s rollout status web -n demo %s%s\n", fed, fleetFlag, extra)
	}
	setImage := func(img string) string {
		return fmt.Sprintf("  kubectl --kubeconfig %s -n demo set image deploy/web web=%s\n", hubKC, img)
	}
	judged := ""
	if analysed {
		judged = ", its error ratio measured on the fleet's Prometheus (under 5%, three times)"
	}
	fmt.Fprintf(out, `Rollout demo/web releases each new version stage by stage: canary (%s) first, soaking 30s once healthy%s, then %s. A version not healthy within a minute, or failing the analysis, fails, and %s goes back to the last version healthy there.
Watch the stages, each member's image, and why each Work is dispatched or held:
%s  for m in %s; do echo "$m: $(kubectl --kubeconfig %s/$m.kubeconfig -n demo get deploy web -o jsonpath='{.spec.template.spec.containers[0].image}' 2>/dev/null || echo absent)"; done
  kubectl --kubeconfig %s get works -A -o 'custom-columns=WORK:.metadata.namespace,NAME:.metadata.name,DISPATCHING:.status.conditions[?(@.type=="Dispatching")].reason'
  %s get rollout web -n demo %s
`, first, judged, rest, first, status(" --watch=false"), strings.Join(memberNames, " "), shellQuote(dir), hubKC, fed, fleetFlag)
	fmt.Fprintf(out, "1. Roll out %s; it walks through the stages by itself (status waits until it completes, about a minute):\n%s%s",
		image("1.26"), setImage(image("1.26")), status(" --timeout 5m"))
	fmt.Fprintf(out, "2. Roll out %s; only %s gets it, its new pod never becomes ready, and within a minute the rollout fails (status exits 1) and puts %s back on %s; %s:\n%s%s",
		image("1.27-broken"), first, first, image("1.26"), restNever, setImage(image("1.27-broken")), status(" --timeout 5m"))
	fmt.Fprintf(out, "3. Undo: the template goes back to %s as the last revision had it, and rolls out again:\n  %s rollout undo web -n demo %s\n%s",
		image("1.26"),
		fed, fleetFlag, status(" --timeout 5m"))
	fmt.Fprintf(out, "4. Roll out %s and pause it while %s soaks; nothing more is released, and the soak clock stops:\n%s  %s rollout pause web -n demo %s -m 'checking the canary'\n%s",
		image("1.28"), first, setImage(image("1.28")), fed, fleetFlag, status(" --watch=false"))
	fmt.Fprintf(out, "5. Resume: the soak goes on where it stopped, then %s follow:\n  %s rollout resume web -n demo %s\n%s",
		rest, fed, fleetFlag, status(" --timeout 5m"))
	if !analysed {
		return
	}
	memberKC := shellQuote(filepath.Join(dir, first+".kubeconfig"))
	fmt.Fprintf(out, "6. Make %s fail 20%% of its requests in %s (ConfigMap %s/%s there steers the fleet's stand-in application), and roll it out: "+
		"its pods become ready, but the canary's analysis measures an error ratio over 5%%, fails (status exits 1), and %s goes back to %s; %s:\n"+
		"  kubectl --kubeconfig %s create namespace %s\n"+
		"  kubectl --kubeconfig %s -n %s create configmap %s --from-literal=1.29.errorRate=0.2\n%s%s",
		image("1.29"), first, fleetmetrics.SteeringNamespace, fleetmetrics.SteeringName, first, image("1.28"), restNever,
		memberKC, fleetmetrics.SteeringNamespace, memberKC, fleetmetrics.SteeringNamespace, fleetmetrics.SteeringName,
		setImage(image("1.29")), status(" --timeout 5m"))
}

// selfCommand is how the printed commands run this federator: its absolute
// path, "federator" when the printed PATH line finds it.
func selfCommand() string {
	self, err := os.Executable()
	if err != nil {
		return "federator"
	}
	if abs, err := filepath.Abs(self); err == nil {
		return abs
	}
	return self
}

func isExecutable(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.Mode().IsRegular() && info.Mode()&0o111 != 0
}

// shellQuote quotes s for a POSIX shell when it holds anything but plain
// path characters.
func shellQuote(s string) string {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+", r)) {
			return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
		}
	}
	return s
}

// suspendPatch is the merge patch that suspends dispatching to clusters.
func suspendPatch(clusters []string) string {
	quoted := make([]string, len(clusters))
	for i, c := range clusters {
		quoted[i] = fmt.Sprintf("%q", c)
	}
	return fmt.Sprintf(`{"spec":{"suspension":{"dispatchingOnClusters":{"clusterNames":[%s]}}}}`, strings.Join(quoted, ","))
}

// pullNote names the Pull members of the ready line: "" when none.
func pullNote(members []fleet.Endpoint, pull int) string {
	if pull == 0 {
		return ""
	}
	var names []string
	for _, m := range members[len(members)-pull:] {
		names = append(names, m.Name)
	}
	return fmt.Sprintf(" (%s in Pull mode, each served by its agent)", strings.Join(names, ", "))
}
