package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/federator-dev/federator/apis/policy"
	"github.com/federator-dev/federator/pkg/fleet"
	"github.com/federator-dev/federator/pkg/hub"
	"github.com/federator-dev/federator/pkg/hubinstall"
	"github.com/federator-dev/federator/pkg/membership"
	"github.com/federator-dev/federator/test/framework"
)

// The phases a run times: the direct baseline, the hub's own write
// rates, and federator's propagation, suspension, resume and freeze.

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
	if _, err := hubinstall.Install(ctx, c); err != nil {
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

	if o.templateFreezes {
		logf("federator: %d templates frozen one by one while every template takes a new image", min(freezeTries, o.resources))
		waitsBefore, err := scrapeHoldWaits(ctx, metricsAddr)
		if err != nil {
			return err
		}
		// The waits of the tries alone: the release after them is one burst
		// of hold changes.
		if err := freezeUnderLoad(ctx, hc, hubState, watchers, o, r, func() error {
			waitsAfter, err := scrapeHoldWaits(ctx, metricsAddr)
			r.FreezeHoldWaits = holdWaits(waitsAfter, waitsBefore)
			return err
		}); err != nil {
			return err
		}
		logf("federator: freeze under load p50 %.2fs, p99 %.2fs", r.FreezeP50, r.FreezeP99)
	}
	if o.freezes > 0 {
		logf("federator: %d fleet-wide freezes while every template takes a new image", o.freezes)
		if err := fleetFreezes(ctx, hc, hubState, watchers, o, r); err != nil {
			return err
		}
		logf("federator: fleet freeze, last member write p50 %.3fs, p99 %.3fs; every Work recorded it in %.2fs", r.FleetFreezeP50, r.FleetFreezeP99, r.FleetFreezeRecorded)
	}
	if o.cycle {
		if err := suspendUpdateResume(ctx, hc, hubCS, hubState, watchers, o, r, sample, metricsAddr); err != nil {
			return err
		}
	}
	r.FederatorCPU = cpuSeconds(ctrl.pid()) - cpuBefore[0]
	r.HubAPIServCPU = cpuSeconds(apiserverPID) - cpuBefore[1]
	r.FederatorPeak = peakRSSMB(ctrl.pid())
	// Events are written behind other writes: counted once the hub has
	// written nothing but leases for 3 s, Events included.
	if _, _, ok, err := framework.WaitQuiet(ctx, hubCS, 3*time.Second, waitLimit, "leases"); err != nil {
		return err
	} else if !ok {
		return fmt.Errorf("the hub kept writing Events for %s", waitLimit)
	}
	if r.DispatchingEvents, err = dispatchingEvents(ctx, hubCS, o.resources*o.members); err != nil {
		return err
	}
	r.EventsDropped, err = scrapeDroppedEvents(ctx, metricsAddr)
	return err
}

// suspendUpdateResume suspends the policy, sets a new image on every
// template, and resumes, with every member watched throughout: the
// suspension until it is on every binding and Work, what reached a member
// while suspended (must be nothing), and the resume until every member has
// the new image.
func suspendUpdateResume(ctx context.Context, hc client.Client, hubCS kubernetes.Interface, hubState *hubWatch, watchers *memberWatches, o options, r *result, sample func() cpuSample, metricsAddr string) error {
	all := o.resources * o.members
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
	cpuBegan := sample()
	began := time.Now()
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
	return nil
}
