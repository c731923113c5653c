package hubwatch

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
	clocktesting "k8s.io/utils/clock/testing"
)

// fakeLW is a ListerWatcher whose watch opens or fails as the test says.
type fakeLW struct {
	watchErr error
	watcher  *watch.FakeWatcher
}

func (f *fakeLW) List(metav1.ListOptions) (runtime.Object, error) {
	return &unstructured.UnstructuredList{}, nil
}

func (f *fakeLW) Watch(metav1.ListOptions) (watch.Interface, error) {
	if f.watchErr != nil {
		return nil, f.watchErr
	}
	f.watcher = watch.NewFake()
	return f.watcher, nil
}

var deployments = schema.GroupKind{Group: "apps", Kind: "Deployment"}

func newScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := workv1alpha1.Install(s); err != nil {
		t.Fatal(err)
	}
	return s
}

func template(kind schema.GroupKind) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(kind.WithVersion("v1"))
	return u
}

// behind is the error of Current, or "" when current.
func behind(tr *Tracker, templates ...schema.GroupKind) string {
	if err := tr.Current(templates...); err != nil {
		return err.Error()
	}
	return ""
}

// A cache counts as current only while its watch is open and has been for
// the settle time: before its first watch, while a watch fails (the hub
// restarting), once a watch ended, and just after one opened again, it may
// be behind the hub.
func TestACacheIsCurrentOnlyWhileItsWatchIsOpen(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC))
	tr := New(newScheme(t), time.Second, clk)
	lw := &fakeLW{}
	works := observe(tr, lw, &workv1alpha1.Work{})

	if got := behind(tr); !strings.Contains(got, "the hub cache of Work.work.karmada.io has not watched the hub") {
		t.Errorf("before its first watch: %q", got)
	}

	w, err := works.WatchWithContext(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := behind(tr); !strings.Contains(got, "watches the hub again only since 0s ago") {
		t.Errorf("just after the watch opened: %q", got)
	}
	clk.Step(time.Second)
	if got := behind(tr); got != "" {
		t.Errorf("watching for the settle time: %q, want current", got)
	}

	// Events pass through unchanged.
	lw.watcher.Add(&workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Name: "web-1"}})
	if ev := <-w.ResultChan(); ev.Type != watch.Added || ev.Object.(*workv1alpha1.Work).Name != "web-1" {
		t.Errorf("event passed on: %+v", ev)
	}

	// The hub goes away: the server ends the watch, and the next fails.
	lw.watcher.Stop()
	waitClosed(t, w)
	clk.Step(3 * time.Second)
	if got := behind(tr); !strings.Contains(got, "has not watched the hub for 3s") {
		t.Errorf("once the watch ended: %q", got)
	}
	lw.watchErr = errors.New("connection refused")
	if _, err := works.WatchWithContext(context.Background(), metav1.ListOptions{}); err == nil {
		t.Fatal("the watch that fails returns its error")
	}
	clk.Step(time.Second)
	if got := behind(tr); !strings.Contains(got, "has not watched the hub for 4s (connection refused)") {
		t.Errorf("while the watch fails: %q", got)
	}

	// It watches again: current one settle time later.
	lw.watchErr = nil
	w, err = works.WatchWithContext(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := behind(tr); got == "" {
		t.Error("current at once after the watch opened again, before the controllers acted on what it delivered")
	}
	clk.Step(time.Second)
	if got := behind(tr); got != "" {
		t.Errorf("watching again for the settle time: %q, want current", got)
	}

	// The reflector stops the watch itself (a timeout, an error event).
	w.Stop()
	waitClosed(t, w)
	if got := behind(tr); got == "" {
		t.Error("current after the informer stopped its watch")
	}
}

// Informers of templates (unstructured objects) count only for the kinds
// asked about: a Work of ConfigMaps does not wait on the Deployments'
// cache, while every typed cache (policies, bindings, Works) counts always.
func TestTemplateCachesCountOnlyForTheirKinds(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC))
	tr := New(newScheme(t), time.Second, clk)
	typed := observe(tr, &fakeLW{}, &workv1alpha1.Work{})
	observe(tr, &fakeLW{watchErr: errors.New("refused")}, template(deployments))
	configMaps := observe(tr, &fakeLW{}, template(schema.GroupKind{Kind: "ConfigMap"}))
	for _, lw := range []toolscache.ListerWatcherWithContext{typed, configMaps} {
		if _, err := lw.WatchWithContext(context.Background(), metav1.ListOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	clk.Step(time.Second)

	if got := behind(tr, schema.GroupKind{Kind: "ConfigMap"}); got != "" {
		t.Errorf("a Work of ConfigMaps: %q, want current", got)
	}
	if got := behind(tr, deployments); !strings.Contains(got, "the hub cache of Deployment.apps has not watched the hub") {
		t.Errorf("a Work of Deployments: %q", got)
	}
	if got := behind(tr); got != "" {
		t.Errorf("no template kinds asked: %q, want current", got)
	}
	// A user's custom resource in a group under karmada.io whose CRD was
	// deleted (its informer fails for good) holds back only its own Works.
	observe(tr, &fakeLW{watchErr: errors.New("the server could not find the requested resource")},
		template(schema.GroupKind{Group: "example-x7k2.karmada.io", Kind: "Foo"}))
	if got := behind(tr, schema.GroupKind{Kind: "ConfigMap"}); got != "" {
		t.Errorf("a Work of ConfigMaps, a user's custom resource cache failing: %q, want current", got)
	}
	// A Work read unstructured is no template: its cache counts always.
	unstructuredWork := &unstructured.Unstructured{}
	unstructuredWork.SetGroupVersionKind(workv1alpha1.SchemeGroupVersion.WithKind("Work"))
	observe(tr, &fakeLW{watchErr: errors.New("refused")}, unstructuredWork)
	if got := behind(tr, schema.GroupKind{Kind: "ConfigMap"}); !strings.Contains(got, "Work.work.karmada.io") {
		t.Errorf("a Work of ConfigMaps, the unstructured Work cache not watching: %q", got)
	}
	var nilTracker *Tracker
	if err := nilTracker.Current(deployments); err != nil {
		t.Errorf("a nil Tracker is current: %v", err)
	}
}

// observe is tr.Observe, watched with a context as informers do.
func observe(tr *Tracker, lw toolscache.ListerWatcher, obj runtime.Object) toolscache.ListerWatcherWithContext {
	return tr.Observe(lw, obj).(toolscache.ListerWatcherWithContext)
}

func waitClosed(t *testing.T, w watch.Interface) {
	t.Helper()
	timeout := time.After(5 * time.Second)
	for {
		select {
		case _, ok := <-w.ResultChan():
			if !ok {
				return
			}
		case <-timeout:
			t.Fatal("the observed watch's results did not end")
		}
	}
}

// breaks records what a Tracker tells of breaks.
type breaks struct{ told []string }

func (b *breaks) Break()     { b.told = append(b.told, "break") }
func (b *breaks) Recovered() { b.told = append(b.told, "recovered") }

// A cache whose watch or list fails, or that relists, broke: it may have
// missed writes, or may deliver them late, so the controllers must catch
// up. A watch that only ends (the API server's timeout) and opens again
// without an error is no break. A template cache that fails breaks nothing
// (its Works wait on its own Current), but its recovery needs catching up.
func TestBreaksAndRecoveriesAreTold(t *testing.T) {
	tr := New(newScheme(t), time.Second, nil)
	b := &breaks{}
	tr.CatchUp(b)
	worksLW, policiesLW := &fakeLW{}, &fakeLW{}
	works := observe(tr, worksLW, &workv1alpha1.Work{})
	policies := observe(tr, policiesLW, &workv1alpha1.Work{})
	deploymentsLW := &fakeLW{}
	templates := observe(tr, deploymentsLW, template(deployments))
	ctx := context.Background()
	step := func(what string, lw toolscache.ListerWatcherWithContext, list bool, want ...string) {
		t.Helper()
		b.told = nil
		if list {
			_, _ = lw.ListWithContext(ctx, metav1.ListOptions{})
		} else {
			_, _ = lw.WatchWithContext(ctx, metav1.ListOptions{})
		}
		if strings.Join(b.told, ",") != strings.Join(want, ",") {
			t.Errorf("%s: told %v, want %v", what, b.told, want)
		}
	}
	step("first list", works, true)
	step("first watch", works, false)
	step("first list", policies, true)
	step("first watch", policies, false)
	step("a watch opens again after a timeout", works, false)

	worksLW.watchErr, policiesLW.watchErr = errors.New("connection refused"), errors.New("connection refused")
	step("a Works watch fails", works, false, "break")
	step("a policies watch fails", policies, false, "break")
	worksLW.watchErr = nil
	step("the Works cache relists", works, true, "break")
	step("the Works cache watches again, the policies' not yet", works, false)
	policiesLW.watchErr = nil
	step("the policies' cache watches again: every one does", policies, false, "recovered")

	step("first list of templates", templates, true)
	deploymentsLW.watchErr = errors.New("the server could not find the requested resource")
	step("a template watch fails", templates, false)
	deploymentsLW.watchErr = nil
	step("the template cache watches again", templates, false, "recovered")
}

// Watching answers for one kind: whether its cache watches the hub now,
// with no settle time, whatever the other caches do.
func TestWatchingAnswersForOneKindNow(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC))
	tr := New(newScheme(t), time.Second, clk)
	workKind := schema.GroupKind{Group: "work.karmada.io", Kind: "Work"}
	if err := tr.Watching(workKind); err == nil || !strings.Contains(err.Error(), "no hub cache of Work.work.karmada.io has started") {
		t.Errorf("before any cache of the kind: %v", err)
	}
	lw := &fakeLW{}
	works := observe(tr, lw, &workv1alpha1.Work{})
	observe(tr, &fakeLW{watchErr: errors.New("refused")}, template(deployments))
	clk.Step(2 * time.Second)
	if err := tr.Watching(workKind); err == nil || !strings.Contains(err.Error(), "has not watched the hub for 2s") {
		t.Errorf("before its first watch: %v", err)
	}
	w, err := works.WatchWithContext(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Watching(workKind); err != nil {
		t.Errorf("watching, another kind's cache failing: %v", err)
	}
	lw.watcher.Stop()
	waitClosed(t, w)
	lw.watchErr = errors.New("connection refused")
	if _, err := works.WatchWithContext(context.Background(), metav1.ListOptions{}); err == nil {
		t.Fatal("the watch that fails returns its error")
	}
	if err := tr.Watching(workKind); err == nil || !strings.Contains(err.Error(), "(connection refused)") {
		t.Errorf("while its watch fails: %v", err)
	}
}
