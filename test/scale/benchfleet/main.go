// Command benchfleet measures propagation at the speed of the members: on a
// fresh local fleet (hub + K members, real kube-apiserver + etcd), M
// Deployments placed by one policy on every member, against a baseline in
// the same run: a plain client-go program writing the same M×K objects
// straight to the members, with federator's per-member QPS, burst and
// concurrency. Then one template after another frozen while every
// template takes a new image (freeze latency under load), and suspend all →
// update every template → resume.
//
// It prints one table (or JSON with -o json, for comparing commits). It
// asserts correctness only (every object arrived; no member object changed
// while suspended), never timing.
//
//	go run ./test/scale/benchfleet [--members 3] [--resources 500] [-o json]   (or: make bench-fleet)
//
// federator runs as its own process (bin/federator controller), so its CPU
// seconds and peak RSS are its own; the hub API server's CPU seconds are
// read from /proc, its writes from apiserver_request_total.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/go-logr/logr"
	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/federator-dev/federator/apis/policy"
	"github.com/federator-dev/federator/internal/works"
	"github.com/federator-dev/federator/pkg/fleet"
	"github.com/federator-dev/federator/pkg/hub"
	"github.com/federator-dev/federator/pkg/membership"
	"github.com/federator-dev/federator/test/framework"
)

const (
	imageV1 = "nginx:1.25"
	imageV2 = "nginx:1.26"
	// imageLoad is what every template takes while one template after
	// another is frozen (freezeUnderLoad).
	imageLoad = "nginx:1.25.1"
	// freezeTries is how many templates are frozen, one every freezeEvery.
	freezeTries = 50
	freezeEvery = 200 * time.Millisecond
	ns          = "bench"
	// waitLimit bounds a stuck step; it is not a statement about speed.
	waitLimit = 15 * time.Minute
	poll      = 100 * time.Millisecond
)

type options struct {
	members, resources, concurrency int
	qps                             float64
	burst                           int
	output, binDir, federator       string
	// controllerArgs are extra flags for federator controller, to compare
	// settings (--hub-qps, --workers, ...) in runs of their own.
	controllerArgs []string
}

// result is what one run measured; -o json prints it as is.
type result struct {
	Members     int    `json:"members"`
	Resources   int    `json:"resources"`
	Concurrency int    `json:"concurrencyPerMember"`
	QPS         string `json:"qpsBurstPerMember"`
	Machine     string `json:"machine"`
	Date        string `json:"date"`
	Commit      string `json:"commit"`
	// ControllerArgs are the extra flags federator ran with.
	ControllerArgs string `json:"controllerArgs,omitempty"`

	BaselineCreate float64 `json:"baselineCreateSeconds"`
	BaselineUpdate float64 `json:"baselineUpdateSeconds"`
	// HubWriteRate is what the hub API server takes, in writes per second,
	// from one client with federator's hub QPS writing ConfigMaps with 16
	// writers: the ceiling for anything that must write every binding and
	// Work, such as a suspension.
	HubWriteRate float64 `json:"hubWritesPerSecond"`
	// HubWorkWriteRate is the same for Works carrying one benchmark
	// Deployment each: what a custom resource write costs the hub.
	HubWorkWriteRate float64 `json:"hubWorkWritesPerSecond"`
	// HubHoldRate is the same for merge patches that hold a stored Work
	// (spec.suspendDispatching and the hold annotations), as the binding
	// controller writes them: what a suspension's writes cost the hub.
	HubHoldRate float64 `json:"hubWorkHoldPatchesPerSecond"`

	Propagate float64 `json:"propagateSeconds"`
	// WorksWritten is when every Work of the propagation was on the hub:
	// the detector's and binding controller's part, before the dispatch.
	WorksWritten   float64 `json:"worksWrittenSeconds"`
	SuspendVisible float64 `json:"suspensionVisibleSeconds"`
	ResumeP50      float64 `json:"resumeP50Seconds"`
	ResumeP99      float64 `json:"resumeP99Seconds"`
	ResumeAll      float64 `json:"resumeAllSeconds"`
	// FreezeP50 and FreezeP99 are one template's freeze under load: from
	// annotating it suspended, while every template takes a new image, to
	// every Work of it held on the hub (freezeTries tries).
	FreezeP50   float64 `json:"freezeP50Seconds"`
	FreezeP99   float64 `json:"freezeP99Seconds"`
	FreezeTries int     `json:"freezeTries"`
	ChangedHeld int     `json:"memberObjectsChangedWhileSuspended"`

	PropagationWrites map[string]float64 `json:"hubWritesPerTemplatePropagation"`
	CycleWrites       map[string]float64 `json:"hubWritesPerTemplateCycle"`
	// SuspensionRequests are the hub requests per template, reads (GET,
	// LIST) included, from the suspension's write until it was on every
	// binding and Work: what the hub served in that time.
	SuspensionRequests map[string]float64 `json:"hubRequestsPerTemplateSuspension"`
	// Reconciles are federator's reconciles per template, by controller
	// and result (controller_runtime_reconcile_total): what its CPU goes
	// to, and how many were redone (requeue, error).
	PropagationReconciles map[string]float64 `json:"reconcilesPerTemplatePropagation"`
	CycleReconciles       map[string]float64 `json:"reconcilesPerTemplateCycle"`

	// CPU is what each phase cost, by role, and how many cores were busy:
	// the baseline's writes, federator's propagation, its suspension, and
	// the resume until every member had the new version.
	CPU map[string]cpuUse `json:"cpuByPhase"`

	FederatorCPU   float64 `json:"federatorCPUSeconds"`
	HubAPIServCPU  float64 `json:"hubAPIServerCPUSeconds"`
	FederatorPeak  float64 `json:"federatorPeakRSSMB"`
	propagationRaw framework.Writes
	cycleRaw       framework.Writes
}

func main() {
	o := options{}
	flag.IntVar(&o.members, "members", 3, "member clusters")
	flag.IntVar(&o.resources, "resources", 500, "Deployments placed on every member")
	flag.IntVar(&o.concurrency, "concurrency", hub.MemberWrites, "writers per member in the baseline (federator's writes in flight per member)")
	flag.Float64Var(&o.qps, "qps", float64(hub.DefaultOptions().Member.QPS), "client QPS per member, in the baseline as in federator")
	flag.IntVar(&o.burst, "burst", hub.DefaultOptions().Member.Burst, "client burst per member, in the baseline as in federator")
	flag.StringVar(&o.output, "o", "table", "output: table or json")
	flag.StringVar(&o.binDir, "bin-dir", "", "where kube-apiserver, etcd and federator are (default: $KUBEBUILDER_ASSETS, else bin/)")
	extra := flag.String("controller-args", "", `extra flags for "federator controller", space-separated (e.g. "--hub-qps=2000 --workers=16")`)
	flag.Parse()
	o.controllerArgs = strings.Fields(*extra)
	if o.output != "table" && o.output != "json" {
		fmt.Fprintf(os.Stderr, "benchfleet: -o %q: want table or json\n", o.output)
		os.Exit(2)
	}
	// envtest logs through controller-runtime; the fleet's own logs are not
	// the benchmark's output.
	ctrllog.SetLogger(logr.Discard())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	r, err := run(ctx, o)
	if err != nil {
		fmt.Fprintf(os.Stderr, "benchfleet: %v\n", err)
		os.Exit(1)
	}
	if o.output == "json" {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(r)
		return
	}
	r.print(os.Stdout)
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "benchfleet: "+format+"\n", args...)
}

func run(ctx context.Context, o options) (r *result, err error) {
	if o.binDir == "" {
		if o.binDir, err = framework.BinDir(); err != nil {
			return nil, err
		}
	}
	o.federator = filepath.Join(o.binDir, "federator")
	if _, err := os.Stat(o.federator); err != nil {
		return nil, fmt.Errorf("%w (make build puts it in bin/)", err)
	}
	dir, err := os.MkdirTemp("", "benchfleet-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	logf("starting a hub and %d members", o.members)
	f, err := fleet.Start(ctx, fleet.Options{Dir: dir, Members: o.members, BinDir: o.binDir})
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, f.Stop()) }()

	r = &result{Members: o.members, Resources: o.resources, Concurrency: o.concurrency,
		QPS: fmt.Sprintf("%g/%d", o.qps, o.burst), ControllerArgs: strings.Join(o.controllerArgs, " "), Machine: machine(), Date: time.Now().UTC().Format(time.RFC3339), Commit: commit()}

	hubPID, err := f.Hub.APIServerPID()
	if err != nil {
		return nil, err
	}
	r.CPU = map[string]cpuUse{}
	logf("baseline: %d×%d Deployments written straight to the members", o.resources, o.members)
	if r.BaselineCreate, r.BaselineUpdate, err = baseline(ctx, f, o, r, func() cpuSample { return sampleCPU(0, hubPID) }); err != nil {
		return nil, fmt.Errorf("baseline: %w", err)
	}
	logf("baseline: created in %.2fs, updated in %.2fs", r.BaselineCreate, r.BaselineUpdate)
	if r.HubWriteRate, r.HubWorkWriteRate, r.HubHoldRate, err = hubWriteRate(ctx, f, min(o.resources*o.members, 2000)); err != nil {
		return nil, fmt.Errorf("hub write rate: %w", err)
	}
	logf("baseline: the hub takes %.0f ConfigMap writes/s, %.0f Work writes/s, %.0f Work hold patches/s", r.HubWriteRate, r.HubWorkWriteRate, r.HubHoldRate)
	return r, federated(ctx, f, o, dir, r)
}

// baseline writes the M×K objects to the members directly: per member, a
// client with federator's QPS and burst and o.concurrency writers.
func baseline(ctx context.Context, f *fleet.Fleet, o options, r *result, sample func() cpuSample) (create, update float64, err error) {
	const bns = "baseline"
	clients := map[string]kubernetes.Interface{}
	for _, m := range f.Members {
		cfg := rest.CopyConfig(m.Config)
		cfg.QPS, cfg.Burst = float32(o.qps), o.burst
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return 0, 0, err
		}
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: bns}}, metav1.CreateOptions{}); err != nil {
			return 0, 0, err
		}
		clients[m.Name] = cs
	}
	each := func(phase string, write func(cs kubernetes.Interface, name string) error) (float64, error) {
		cpuBefore := sample()
		defer func() { r.CPU[phase] = sample().since(cpuBefore) }()
		began := time.Now()
		var wg sync.WaitGroup
		errs := make(chan error, len(clients)*o.concurrency)
		for _, cs := range clients {
			names := make(chan string)
			for range o.concurrency {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for n := range names {
						if err := write(cs, n); err != nil {
							errs <- err
							for range names {
							}
							return
						}
					}
				}()
			}
			go func() {
				defer close(names)
				for i := range o.resources {
					names <- name(i)
				}
			}()
		}
		wg.Wait()
		close(errs)
		return time.Since(began).Seconds(), <-errs
	}
	create, err = each(phaseBaselineCreate, func(cs kubernetes.Interface, n string) error {
		_, err := cs.AppsV1().Deployments(bns).Create(ctx, framework.NewDeployment(bns, n, imageV1), metav1.CreateOptions{})
		return err
	})
	if err != nil {
		return 0, 0, err
	}
	patch := []byte(fmt.Sprintf(`{"spec":{"template":{"spec":{"containers":[{"name":%q,"image":%q}]}}}}`, framework.Container, imageV2))
	update, err = each(phaseBaselineUpdate, func(cs kubernetes.Interface, n string) error {
		_, err := cs.AppsV1().Deployments(bns).Patch(ctx, n, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
		return err
	})
	return create, update, err
}

// hubWriteRate creates n ConfigMaps on the hub, then n Works carrying a
// benchmark Deployment (in a namespace no controller reads), each as fast
// as federator's hub client may (its QPS and burst, 16 writers), and
// returns writes per second of each: what the hub API server takes of a
// small built-in object and of the custom resource federator writes most.
// A rate needs no more than a few thousand writes; more would only make
// the cleanup slow.
func hubWriteRate(ctx context.Context, f *fleet.Fleet, n int) (configMaps, works, holds float64, err error) {
	cfg := rest.CopyConfig(f.Hub.Config)
	o := hub.DefaultOptions()
	cfg.QPS, cfg.Burst = o.HubQPS, o.HubBurst
	c, err := client.New(cfg, client.Options{Scheme: policy.NewScheme()})
	if err != nil {
		return 0, 0, 0, err
	}
	// The Work CRD, as federator installs it when it starts.
	if _, err := hub.Install(ctx, c); err != nil {
		return 0, 0, 0, err
	}
	const bns = "baseline-hub"
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: bns}}); err != nil {
		return 0, 0, 0, err
	}
	rate := func(newObject func(i int) (client.Object, error)) (float64, error) {
		began := time.Now()
		err := parallel(16, n, func(i int) error {
			obj, err := newObject(i)
			if err != nil {
				return err
			}
			return c.Create(ctx, obj)
		})
		return float64(n) / time.Since(began).Seconds(), err
	}
	if configMaps, err = rate(func(i int) (client.Object, error) {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: bns, Name: name(i)},
			Data: map[string]string{"k": strings.Repeat("v", 512)}}, nil
	}); err != nil {
		return 0, 0, 0, err
	}
	if works, err = rate(func(i int) (client.Object, error) {
		raw, err := json.Marshal(framework.NewDeployment(ns, name(i), imageV1))
		return &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: bns, Name: name(i)},
			Spec: workv1alpha1.WorkSpec{Workload: workv1alpha1.WorkloadTemplate{
				Manifests: []workv1alpha1.Manifest{{RawExtension: k8sruntime.RawExtension{Raw: raw}}}}}}, err
	}); err != nil {
		return 0, 0, 0, err
	}
	// What a hold costs the hub: a merge patch of a stored Work's
	// spec.suspendDispatching and hold annotations, as the binding
	// controller writes it.
	hold := []byte(`{"metadata":{"annotations":{"work.federator.dev/hold-reason":"SuspendDispatching","work.federator.dev/hold-message":"bench"}},"spec":{"suspendDispatching":true}}`)
	began := time.Now()
	if err := parallel(16, n, func(i int) error {
		return c.Patch(ctx, &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: bns, Name: name(i)}}, client.RawPatch(types.MergePatchType, hold))
	}); err != nil {
		return 0, 0, 0, err
	}
	holds = float64(n) / time.Since(began).Seconds()
	// Gone before federator starts, so its caches hold none of them (the
	// bench hub runs no namespace controller to empty the namespace).
	if err := c.DeleteAllOf(ctx, &workv1alpha1.Work{}, client.InNamespace(bns)); err != nil {
		return 0, 0, 0, err
	}
	if err := c.DeleteAllOf(ctx, &corev1.ConfigMap{}, client.InNamespace(bns)); err != nil {
		return 0, 0, 0, err
	}
	return configMaps, works, holds, c.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: bns}})
}

func name(i int) string { return fmt.Sprintf("web-%05d", i) }

// federated measures federator: propagation, then suspend → update → resume.
func federated(ctx context.Context, f *fleet.Fleet, o options, dir string, r *result) (err error) {
	metricsAddr, err := freeAddress()
	if err != nil {
		return err
	}
	ctrl, err := startController(ctx, o.federator, f.Hub.KubeconfigPath, filepath.Join(dir, "federator.log"),
		append([]string{"--metrics-bind-address", metricsAddr}, o.controllerArgs...))
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, ctrl.stop()) }()
	hubCfg := rest.CopyConfig(f.Hub.Config)
	hubCfg.QPS, hubCfg.Burst = 1000, 2000
	hc, err := client.New(hubCfg, client.Options{Scheme: policy.NewScheme()})
	if err != nil {
		return err
	}
	hubCS, err := kubernetes.NewForConfig(hubCfg)
	if err != nil {
		return err
	}
	members := map[string]kubernetes.Interface{}
	memberConfigs := map[string]*rest.Config{}
	var memberNames []string
	for _, m := range f.Members {
		if err := membership.Register(ctx, hc, m.Name, m.Config); err != nil {
			return err
		}
		memberConfigs[m.Name] = m.Config
		if members[m.Name], err = kubernetes.NewForConfig(m.Config); err != nil {
			return err
		}
		memberNames = append(memberNames, m.Name)
	}
	if err := hc.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		return err
	}
	if err := waitFor(ctx, "namespace "+ns+" in every member", func() (bool, error) {
		for _, cs := range members {
			if _, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); err != nil {
				return false, client.IgnoreNotFound(err)
			}
		}
		return true, nil
	}); err != nil {
		return err
	}
	apiserverPID, err := f.Hub.APIServerPID()
	if err != nil {
		return err
	}
	cpuBefore := [2]float64{cpuSeconds(ctrl.pid()), cpuSeconds(apiserverPID)}
	before, err := quiet(ctx, hubCS)
	if err != nil {
		return err
	}
	reconcilesBefore, err := scrapeReconciles(ctx, metricsAddr)
	if err != nil {
		return err
	}

	// Progress is followed by watches, in the members and on the hub: a
	// poll that lists every object would itself load the API servers
	// whose speed is measured (the baseline pays no such cost).
	watchers, err := watchMembers(ctx, memberConfigs)
	if err != nil {
		return err
	}
	defer watchers.stop()
	hubState, err := watchWorks(ctx, hubCfg)
	if err != nil {
		return err
	}
	defer hubState.stop()
	all := o.resources * o.members
	sample := func() cpuSample { return sampleCPU(ctrl.pid(), apiserverPID) }

	logf("federator: policy and %d templates on the hub, to %d members", o.resources, o.members)
	cpuBegan := sample()
	began := time.Now()
	if err := hc.Create(ctx, framework.NewDeploymentPolicy(ns, "bench", "", memberNames...)); err != nil {
		return err
	}
	if err := parallel(16, o.resources, func(i int) error {
		return hc.Create(ctx, framework.NewDeployment(ns, name(i), imageV1))
	}); err != nil {
		return err
	}
	if err := waitFor(ctx, "every member has every Deployment", func() (bool, error) {
		// When the hub side is done tells it from the members' side.
		if r.WorksWritten == 0 && hubState.have(imageV1) == all {
			r.WorksWritten = time.Since(began).Seconds()
		}
		return watchers.have(imageV1) == all, nil
	}); err != nil {
		return err
	}
	r.Propagate = time.Since(began).Seconds()
	r.CPU[phasePropagation] = sample().since(cpuBegan)
	logf("federator: propagated in %.2fs", r.Propagate)
	afterPropagation, err := quiet(ctx, hubCS)
	if err != nil {
		return err
	}
	r.propagationRaw = afterPropagation.Since(before)
	r.PropagationWrites = perTemplate(r.propagationRaw, o.resources)
	reconcilesPropagation, err := scrapeReconciles(ctx, metricsAddr)
	if err != nil {
		return err
	}
	r.PropagationReconciles = perTemplateCount(framework.Delta(reconcilesPropagation, reconcilesBefore), o.resources)

	logf("federator: %d templates frozen one by one while every template takes a new image", min(freezeTries, o.resources))
	if err := freezeUnderLoad(ctx, hc, hubState, watchers, o, r); err != nil {
		return err
	}
	logf("federator: freeze under load p50 %.2fs, p99 %.2fs", r.FreezeP50, r.FreezeP99)
	// The cycle is counted from here: the freeze phase's writes are its own.
	afterFreeze, err := quiet(ctx, hubCS)
	if err != nil {
		return err
	}
	reconcilesFreeze, err := scrapeReconciles(ctx, metricsAddr)
	if err != nil {
		return err
	}

	// Suspend all → update → resume, with every member watched throughout.
	watchers.changes()
	requestsBefore, err := framework.ScrapeRequests(ctx, hubCS)
	if err != nil {
		return err
	}
	cpuBegan = sample()
	began = time.Now()
	if err := framework.PatchPolicy(ctx, hc, ns, "bench", `{"spec":{"suspension":{"dispatching":true}}}`); err != nil {
		return err
	}
	if err := waitFor(ctx, "the suspension on every binding and Work", func() (bool, error) {
		return hubState.suspended() == all && hubState.suspendedBindings() == o.resources, nil
	}); err != nil {
		return err
	}
	r.SuspendVisible = time.Since(began).Seconds()
	r.CPU[phaseSuspension] = sample().since(cpuBegan)
	requestsSuspended, err := framework.ScrapeRequests(ctx, hubCS)
	if err != nil {
		return err
	}
	r.SuspensionRequests = perTemplate(requestsSuspended.Since(requestsBefore), o.resources)
	logf("federator: suspension visible in %.2fs; updating every template", r.SuspendVisible)
	if err := parallel(16, o.resources, func(i int) error {
		return framework.SetImage(ctx, hc, ns, name(i), imageV2)
	}); err != nil {
		return err
	}
	if err := waitFor(ctx, "the new image in every Work", func() (bool, error) {
		return hubState.have(imageV2) == all, nil
	}); err != nil {
		return err
	}
	if _, err := quiet(ctx, hubCS); err != nil {
		return err
	}
	r.ChangedHeld = watchers.changes()
	cpuBegan = sample()
	resumed := time.Now()
	if err := framework.PatchPolicy(ctx, hc, ns, "bench", `{"spec":{"suspension":null}}`); err != nil {
		return err
	}
	if err := waitFor(ctx, "every member has the new image", func() (bool, error) {
		return watchers.have(imageV2) == all, nil
	}); err != nil {
		return err
	}
	r.CPU[phaseResume] = sample().since(cpuBegan)
	latencies := watchers.firstSeen(imageV2, resumed)
	if len(latencies) != o.resources*o.members {
		return fmt.Errorf("the member watches saw %d objects take the new image, want %d", len(latencies), o.resources*o.members)
	}
	r.ResumeP50, r.ResumeP99, r.ResumeAll = quantile(latencies, 0.5), quantile(latencies, 0.99), latencies[len(latencies)-1]
	afterCycle, err := quiet(ctx, hubCS)
	if err != nil {
		return err
	}
	r.cycleRaw = afterCycle.Since(afterFreeze)
	r.CycleWrites = perTemplate(r.cycleRaw, o.resources)
	reconcilesCycle, err := scrapeReconciles(ctx, metricsAddr)
	if err != nil {
		return err
	}
	r.CycleReconciles = perTemplateCount(framework.Delta(reconcilesCycle, reconcilesFreeze), o.resources)
	r.FederatorCPU = cpuSeconds(ctrl.pid()) - cpuBefore[0]
	r.HubAPIServCPU = cpuSeconds(apiserverPID) - cpuBefore[1]
	r.FederatorPeak = peakRSSMB(ctrl.pid())
	return nil
}

// freezeUnderLoad times one template's freeze while the hub is busy: every
// template takes imageLoad (1,500 Works rewritten and dispatched) and,
// meanwhile, one template after another, freezeEvery apart, is annotated
// suspended; each try is timed from its annotation to every Work of that
// template held on the hub. Then the frozen templates are released and the
// phase ends when every member has imageLoad.
func freezeUnderLoad(ctx context.Context, hc client.Client, hub *hubWatch, members *memberWatches, o options, r *result) error {
	tries := min(freezeTries, o.resources)
	stride := o.resources / tries
	frozen := func(k int) string { return name(k * stride) }
	annotate := func(tpl string, value any) error {
		patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{policy.SuspendedAnnotation: value}}})
		if err != nil {
			return err
		}
		d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: tpl}}
		return hc.Patch(ctx, d, client.RawPatch(types.MergePatchType, patch))
	}
	var wg sync.WaitGroup
	errs := make(chan error, tries+1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := parallel(16, o.resources, func(i int) error {
			return framework.SetImage(ctx, hc, ns, name(i), imageLoad)
		}); err != nil {
			errs <- err
		}
	}()
	latencies := make([]float64, tries)
	for k := range tries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			began := time.Now()
			if err := annotate(frozen(k), "freeze-probe"); err != nil {
				errs <- err
				return
			}
			if err := waitFor(ctx, "every Work of "+frozen(k)+" held", func() (bool, error) {
				return hub.held(frozen(k)) == o.members, nil
			}); err != nil {
				errs <- err
				return
			}
			latencies[k] = time.Since(began).Seconds()
		}()
		time.Sleep(freezeEvery)
	}
	wg.Wait()
	close(errs)
	var failed []error
	for err := range errs {
		failed = append(failed, err)
	}
	if err := errors.Join(failed...); err != nil {
		return err
	}
	sort.Float64s(latencies)
	logf("federator: freeze latencies, sorted: %s", fmt.Sprint(latencies))
	r.FreezeP50, r.FreezeP99, r.FreezeTries = quantile(latencies, 0.5), quantile(latencies, 0.99), tries
	if err := parallel(16, tries, func(k int) error { return annotate(frozen(k), nil) }); err != nil {
		return err
	}
	return waitFor(ctx, "every member has "+imageLoad, func() (bool, error) {
		return members.have(imageLoad) == o.resources*o.members, nil
	})
}

// controller is bin/federator controller, run as its own process.
type controller struct {
	cmd  *exec.Cmd
	done chan error
}

func startController(ctx context.Context, binary, kubeconfig, logPath string, args []string) (*controller, error) {
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(binary, append([]string{"controller", "--kubeconfig", kubeconfig}, args...)...)
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = io.MultiWriter(logFile, pw), logFile
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, err
	}
	c := &controller{cmd: cmd, done: make(chan error, 1)}
	go func() { c.done <- cmd.Wait(); logFile.Close(); pw.Close() }()
	running := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(pr)
		signalled := false
		for sc.Scan() {
			if !signalled && strings.Contains(sc.Text(), "controllers running against") {
				close(running)
				signalled = true
			}
		}
	}()
	select {
	case <-running:
		return c, nil
	case err := <-c.done:
		return nil, fmt.Errorf("federator controller exited before running (%v); its log: %s", err, logPath)
	case <-time.After(2 * time.Minute):
	case <-ctx.Done():
	}
	return nil, errors.Join(fmt.Errorf("federator controller did not start (log: %s)", logPath), c.stop())
}

func (c *controller) pid() int { return c.cmd.Process.Pid }

// stop ends the controller with SIGTERM, then SIGKILL after 10 s.
func (c *controller) stop() error {
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.done:
	case <-time.After(10 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.done
	}
	return nil
}

// quiet waits until the hub has written nothing but leases and events for
// 3 s, and returns its write counters then.
func quiet(ctx context.Context, hubCS kubernetes.Interface) (framework.Writes, error) {
	w, _, ok, err := framework.WaitQuiet(ctx, hubCS, 3*time.Second, waitLimit, "leases", "events")
	if err == nil && !ok {
		err = fmt.Errorf("the hub kept writing for %s", waitLimit)
	}
	return w, err
}

func waitFor(ctx context.Context, what string, done func() (bool, error)) error {
	deadline := time.Now().Add(waitLimit)
	for {
		ok, err := done()
		if err != nil {
			return fmt.Errorf("waiting for %s: %w", what, err)
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("waiting for %s: still not after %s", what, waitLimit)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(poll):
		}
	}
}

func parallel(workers, n int, do func(i int) error) error {
	var wg sync.WaitGroup
	next := make(chan int)
	errs := make(chan error, workers)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := do(i); err != nil {
					errs <- err
					for range next {
					}
					return
				}
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	close(errs)
	return <-errs
}

// hubWatch follows, by watches, every Work of the benchmark's Deployments
// and every binding of its namespace: which are suspended, and which image
// each Work carries.
type hubWatch struct {
	mu       sync.Mutex
	works    map[string]workState // namespace/name → state
	bindings map[string]bool      // name → suspended
	cancel   context.CancelFunc
}

type workState struct {
	suspended bool
	image     string
	template  string
}

func watchWorks(ctx context.Context, cfg *rest.Config) (*hubWatch, error) {
	wc, err := client.NewWithWatch(cfg, client.Options{Scheme: policy.NewScheme()})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	h := &hubWatch{works: map[string]workState{}, bindings: map[string]bool{}, cancel: cancel}
	go follow(ctx, wc, &workv1alpha1.WorkList{}, nil, func(obj client.Object, deleted bool) {
		w := obj.(*workv1alpha1.Work)
		m := works.FirstManifest(w)
		if m == nil || m.GetKind() != "Deployment" || m.GetNamespace() != ns {
			return
		}
		key := w.Namespace + "/" + w.Name
		h.mu.Lock()
		defer h.mu.Unlock()
		if deleted {
			delete(h.works, key)
			return
		}
		st := workState{suspended: w.Spec.SuspendDispatching != nil && *w.Spec.SuspendDispatching, template: m.GetName()}
		if c, ok, _ := unstructured.NestedSlice(m.Object, "spec", "template", "spec", "containers"); ok && len(c) > 0 {
			if first, ok := c[0].(map[string]any); ok {
				st.image, _ = first["image"].(string)
			}
		}
		h.works[key] = st
	})
	go follow(ctx, wc, &workv1alpha2.ResourceBindingList{}, []client.ListOption{client.InNamespace(ns)}, func(obj client.Object, deleted bool) {
		b := obj.(*workv1alpha2.ResourceBinding)
		h.mu.Lock()
		defer h.mu.Unlock()
		s := b.Spec.Suspension
		h.bindings[b.Name] = !deleted && s != nil && s.Dispatching != nil && *s.Dispatching
	})
	return h, nil
}

// follow lists, then watches, calling seen for every object and change;
// an ended watch is started again from a new list. It returns when ctx
// ends.
func follow(ctx context.Context, wc client.WithWatch, list client.ObjectList, opts []client.ListOption, seen func(obj client.Object, deleted bool)) {
	for ctx.Err() == nil {
		l := list.DeepCopyObject().(client.ObjectList)
		if err := wc.List(ctx, l, opts...); err != nil {
			time.Sleep(poll)
			continue
		}
		_ = meta.EachListItem(l, func(o k8sruntime.Object) error { seen(o.(client.Object), false); return nil })
		w, err := wc.Watch(ctx, list.DeepCopyObject().(client.ObjectList),
			append(slices.Clone(opts), &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: l.GetResourceVersion()}})...)
		if err != nil {
			time.Sleep(poll)
			continue
		}
		for ev := range w.ResultChan() {
			if obj, ok := ev.Object.(client.Object); ok && (ev.Type == watch.Added || ev.Type == watch.Modified || ev.Type == watch.Deleted) {
				seen(obj, ev.Type == watch.Deleted)
			}
		}
	}
}

// suspended is how many Works are suspended.
func (h *hubWatch) suspended() int {
	return h.count(func(w workState) bool { return w.suspended })
}

// held is how many Works of the template are suspended.
func (h *hubWatch) held(template string) int {
	return h.count(func(w workState) bool { return w.template == template && w.suspended })
}

// have is how many Works carry image.
func (h *hubWatch) have(image string) int {
	return h.count(func(w workState) bool { return w.image == image })
}

func (h *hubWatch) count(pred func(workState) bool) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, w := range h.works {
		if pred(w) {
			n++
		}
	}
	return n
}

// suspendedBindings is how many bindings carry the suspension.
func (h *hubWatch) suspendedBindings() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, s := range h.bindings {
		if s {
			n++
		}
	}
	return n
}

func (h *hubWatch) stop() { h.cancel() }

// memberWatches watch the benchmark's Deployments in every member: every
// change while suspended is counted, and when each object first took an
// image is noted.
type memberWatches struct {
	mu      sync.Mutex
	changed int
	current map[string]string // member/name → image now
	rv      map[string]string // member/name → resourceVersion last seen
	cancel  context.CancelFunc
	seen    map[string]map[string]time.Time // image → member/name → first seen
}

func watchMembers(ctx context.Context, members map[string]*rest.Config) (*memberWatches, error) {
	ctx, cancel := context.WithCancel(ctx)
	w := &memberWatches{seen: map[string]map[string]time.Time{}, current: map[string]string{}, rv: map[string]string{}, cancel: cancel}
	for m, cfg := range members {
		wc, err := client.NewWithWatch(cfg, client.Options{Scheme: policy.NewScheme()})
		if err != nil {
			cancel()
			return nil, err
		}
		go follow(ctx, wc, &appsv1.DeploymentList{}, []client.ListOption{client.InNamespace(ns)}, func(obj client.Object, deleted bool) {
			d := obj.(*appsv1.Deployment)
			key := m + "/" + d.Name
			at := time.Now()
			w.mu.Lock()
			defer w.mu.Unlock()
			if deleted {
				delete(w.current, key)
				delete(w.rv, key)
				return
			}
			if w.rv[key] == d.ResourceVersion {
				return // seen again by a new list after a watch ended
			}
			if w.rv[key] != "" {
				w.changed++
			}
			w.rv[key] = d.ResourceVersion
			img := imageOf(d)
			if w.seen[img] == nil {
				w.seen[img] = map[string]time.Time{}
			}
			if _, ok := w.seen[img][key]; !ok {
				w.seen[img][key] = at
			}
			w.current[key] = img
		})
	}
	return w, nil
}

// have is how many member objects hold image now.
func (w *memberWatches) have(image string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, img := range w.current {
		if img == image {
			n++
		}
	}
	return n
}

// changes is how many member writes the watches saw so far (each
// resets the count).
func (w *memberWatches) changes() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := w.changed
	w.changed = 0
	return n
}

// firstSeen is, sorted, how long after since each object first showed image.
func (w *memberWatches) firstSeen(image string, since time.Time) []float64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []float64
	for _, at := range w.seen[image] {
		out = append(out, at.Sub(since).Seconds())
	}
	sort.Float64s(out)
	return out
}

func (w *memberWatches) stop() { w.cancel() }

func quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(len(sorted)-1, int(q*float64(len(sorted))))]
}

// perTemplate is writes per template by "VERB resource".
func perTemplate(w framework.Writes, n int) map[string]float64 {
	out := map[string]float64{}
	for k, v := range w {
		if k.Resource == "leases" {
			continue
		}
		res := k.Resource
		if k.Subresource != "" {
			res += "/" + k.Subresource
		}
		key := k.Verb + " " + res
		if k.Code == "409" {
			key += " (409 Conflict)"
		}
		out[key] += v / float64(n)
	}
	return out
}

// scrapeReconciles reads federator's controller_runtime_reconcile_total,
// by "controller (result)".
func scrapeReconciles(ctx context.Context, addr string) (map[string]float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("federator metrics: %w", err)
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	const prefix = `controller_runtime_reconcile_total{`
	for sc.Scan() {
		line := sc.Text()
		end := strings.LastIndexByte(line, '}')
		if !strings.HasPrefix(line, prefix) || end < 0 {
			continue
		}
		labels := map[string]string{}
		for _, l := range strings.Split(line[len(prefix):end], ",") {
			if k, v, ok := strings.Cut(l, "="); ok {
				labels[k] = strings.Trim(v, `"`)
			}
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(line[end+1:]), 64)
		if err != nil {
			return nil, fmt.Errorf("federator metrics: %q: %w", line, err)
		}
		out[labels["controller"]+" ("+labels["result"]+")"] += v
	}
	return out, sc.Err()
}

func perTemplateCount(m map[string]float64, n int) map[string]float64 {
	out := map[string]float64{}
	for k, v := range m {
		out[k] = v / float64(n)
	}
	return out
}

func freeAddress() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// cpuSeconds is the user + system CPU time of pid so far.
func cpuSeconds(pid int) float64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// Fields after the command (which may hold spaces) in parentheses.
	fields := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+2:]))
	if len(fields) < 13 {
		return 0
	}
	utime, _ := strconv.ParseFloat(fields[11], 64)
	stime, _ := strconv.ParseFloat(fields[12], 64)
	return (utime + stime) / 100 // USER_HZ
}

// peakRSSMB is pid's peak resident set (VmHWM), in MB.
func peakRSSMB(pid int) float64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}

func machine() string {
	model := ""
	if raw, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(raw), "\n") {
			if strings.HasPrefix(line, "model name") {
				model = strings.TrimSpace(line[strings.IndexByte(line, ':')+1:])
				break
			}
		}
	}
	return fmt.Sprintf("%d cores, %s", runtime.NumCPU(), model)
}

func commit() string {
	out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
}

func (r *result) print(out io.Writer) {
	fmt.Fprintf(out, "benchfleet: %d Deployments × %d members; per member QPS/burst %s, %d writers; %s; %s; commit %s",
		r.Resources, r.Members, r.QPS, r.Concurrency, r.Machine, r.Date, r.Commit)
	if r.ControllerArgs != "" {
		fmt.Fprintf(out, "; federator controller %s", r.ControllerArgs)
	}
	fmt.Fprint(out, "\n\n")
	t := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	ratio := func(a, b float64) string {
		if b <= 0 {
			return "-"
		}
		return fmt.Sprintf("%.1f×", a/b)
	}
	fmt.Fprintln(t, "MEASURE\tFEDERATOR\tDIRECT\tRATIO")
	fmt.Fprintf(t, "every member object exists\t%.2fs\t%.2fs\t%s\n", r.Propagate, r.BaselineCreate, ratio(r.Propagate, r.BaselineCreate))
	fmt.Fprintf(t, "  of which: every Work written on the hub\t%.2fs\t\t\n", r.WorksWritten)
	// A suspension writes every binding and every Work: at the hub's
	// measured write rate, that alone takes (M + M×K) / rate.
	floor := float64(r.Resources+r.Resources*r.Members) / r.HubWriteRate
	fmt.Fprintf(t, "suspension on every binding and Work\t%.2fs\t%.2fs\t%s (direct: %d writes at the hub's %.0f/s)\n",
		r.SuspendVisible, floor, ratio(r.SuspendVisible, floor), r.Resources+r.Resources*r.Members, r.HubWriteRate)
	holdFloor := float64(r.Resources+r.Resources*r.Members) / r.HubHoldRate
	fmt.Fprintf(t, "  against the hub's rate of hold patches\t\t%.2fs\t%s (%d patches at the hub's %.0f Work hold patches/s)\n",
		holdFloor, ratio(r.SuspendVisible, holdFloor), r.Resources+r.Resources*r.Members, r.HubHoldRate)
	// What the hub alone needs for the writes each phase made, at the rate
	// it takes Works: below this no change to federator's own code goes
	// without cutting writes (or the hub's cost per write).
	for _, phase := range []struct {
		name   string
		writes framework.Writes
	}{{"propagation", r.propagationRaw}, {"suspend → update → resume", r.cycleRaw}} {
		n := phase.writes.Total("leases")
		fmt.Fprintf(t, "hub alone, the writes of the %s\t%.2fs\t\t(%.0f writes at the hub's %.0f Work writes/s)\n",
			phase.name, n/r.HubWorkWriteRate, n, r.HubWorkWriteRate)
	}
	fmt.Fprintf(t, "one template frozen under load, p50\t%.2fs\t\t(%d tries while every template changes)\n", r.FreezeP50, r.FreezeTries)
	fmt.Fprintf(t, "one template frozen under load, p99\t%.2fs\t\t\n", r.FreezeP99)
	fmt.Fprintf(t, "resume → new version, p50\t%.2fs\t\t\n", r.ResumeP50)
	fmt.Fprintf(t, "resume → new version, p99\t%.2fs\t\t\n", r.ResumeP99)
	fmt.Fprintf(t, "resume → new version, all\t%.2fs\t%.2fs\t%s\n", r.ResumeAll, r.BaselineUpdate, ratio(r.ResumeAll, r.BaselineUpdate))
	fmt.Fprintf(t, "member objects changed while suspended\t%d\t\t(must be 0)\n", r.ChangedHeld)
	fmt.Fprintf(t, "CPU seconds, federator\t%.1f\t\t\n", r.FederatorCPU)
	fmt.Fprintf(t, "CPU seconds, hub API server\t%.1f\t\t\n", r.HubAPIServCPU)
	fmt.Fprintf(t, "federator peak RSS\t%.0f MB\t\t\n", r.FederatorPeak)
	_ = t.Flush()
	printCPU(out, r.CPU, r.Resources*r.Members, runtime.NumCPU())
	for _, part := range []struct {
		name string
		w    map[string]float64
	}{{"hub writes per template, propagation (leases left out)", r.PropagationWrites}, {"hub writes per template, suspend → update → resume (leases left out)", r.CycleWrites},
		{"hub requests per template, suspension until visible (reads included, leases left out)", r.SuspensionRequests},
		{"federator reconciles per template, propagation", r.PropagationReconciles},
		{"federator reconciles per template, suspend → update → resume", r.CycleReconciles}} {
		var total float64
		keys := make([]string, 0, len(part.w))
		for k, v := range part.w {
			total += v
			keys = append(keys, k)
		}
		slices.SortFunc(keys, func(a, b string) int {
			if part.w[a] != part.w[b] {
				if part.w[a] > part.w[b] {
					return -1
				}
				return 1
			}
			return strings.Compare(a, b)
		})
		fmt.Fprintf(out, "\n%s: %.2f\n", part.name, total)
		t := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
		for _, k := range keys {
			fmt.Fprintf(t, "  %s\t%.2f\n", k, part.w[k])
		}
		_ = t.Flush()
	}
}

func imageOf(d *appsv1.Deployment) string {
	if c := d.Spec.Template.Spec.Containers; len(c) > 0 {
		return c[0].Image
	}
	return ""
}
