package redecide

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"
)

var (
	web = Binding{Namespace: "shop", Name: "web-deployment",
		Template: Template{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: "web"}}
	quota = Binding{Name: "quota-clusterrole",
		Template: Template{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: "quota"}}
)

// started runs r until the test ends, and returns the templates the round
// asks the detector to decide.
func started(t *testing.T, r *Round) <-chan Template {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = r.Start(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	out := make(chan Template, 10)
	go func() {
		for {
			select {
			case e := <-r.Templates():
				out <- e.Object
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}

func asked(t *testing.T, templates <-chan Template, n int) []Template {
	t.Helper()
	var got []Template
	for range n {
		select {
		case tpl := <-templates:
			got = append(got, tpl)
		case <-time.After(5 * time.Second):
			t.Fatalf("the round asked the detector for %d templates, want %d", len(got), n)
		}
	}
	return got
}

// caughtUp completes the round that runs for bindings, as the detector
// and the binding controller would.
func caughtUp(t *testing.T, r *Round, templates <-chan Template, bindings ...Binding) {
	t.Helper()
	asked(t, templates, len(bindings))
	first := BindingKey(bindings[0].Namespace, bindings[0].Name)
	waitFor(t, "the round lists its bindings", func() bool { return strings.Contains(currentErr(r, first), "still to be decided again") })
	for _, b := range bindings {
		r.Detected(BindingKey(b.Namespace, b.Name), r.Begin(), 1)
		<-r.Bindings(b.Namespace == "")
		r.Decided(BindingKey(b.Namespace, b.Name), r.Begin(), 1)
	}
	for _, b := range bindings {
		if got := currentErr(r, BindingKey(b.Namespace, b.Name)); got != "" {
			t.Fatalf("every binding decided again: %q, want current", got)
		}
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal(what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func currentErr(r *Round, binding string) string {
	if err := r.Current(binding); err != nil {
		return err.Error()
	}
	return ""
}

// After a break nothing is dispatched until the round has listed its
// bindings; then a binding's Works wait until the detector has decided
// its template in a pass begun after the round started, and then the
// binding controller has decided the binding in a pass begun after that,
// reading at least the generation the detector left. Each pass that
// misses one of these counts for nothing; one binding decided does not
// wait for the others.
func TestARoundEndsOnlyWhenEveryBindingWasDecidedAgainInOrder(t *testing.T) {
	r := New(func(context.Context) ([]Binding, error) { return []Binding{web, quota}, nil }, time.Minute, logr.Discard())
	webKey, quotaKey := BindingKey("shop", "web-deployment"), BindingKey("", "quota-clusterrole")
	if got := currentErr(r, ""); !strings.Contains(got, "this replica began to lead") {
		t.Errorf("before it leads: %q", got)
	}
	templates := started(t, r)
	caughtUp(t, r, templates, web, quota)
	r.Break()
	if got := currentErr(r, webKey); !strings.Contains(got, "stopped watching the hub") {
		t.Errorf("broken: %q", got)
	}
	if got := currentErr(r, ""); got == "" {
		t.Error("broken, before the round lists its bindings: a Work no binding wrote is dispatched")
	}
	early := r.Begin() // a detector pass begun before the round
	r.Recovered()
	got := asked(t, templates, 2)
	if got[0] != web.Template || got[1] != quota.Template {
		t.Errorf("templates asked for: %+v", got)
	}
	waitFor(t, "the round lists its bindings", func() bool { return strings.Contains(currentErr(r, webKey), "2 of 2 bindings") })

	r.Detected(webKey, early, 3)
	beforeDetection := r.Begin()
	r.Decided(webKey, beforeDetection, 3)
	if got := currentErr(r, webKey); !strings.Contains(got, "2 of 2") {
		t.Errorf("a detector pass begun before the round, a binding pass before any detection: %q", got)
	}

	// The detector decides web's template, writing generation 4: the
	// binding controller is asked to decide web again.
	d := r.Begin()
	r.Detected(webKey, d, 4)
	select {
	case e := <-r.Bindings(false):
		if e.Object != (types.NamespacedName{Namespace: "shop", Name: "web-deployment"}) {
			t.Errorf("binding asked for: %v", e.Object)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the binding controller was not asked to decide web again")
	}
	r.Decided(webKey, beforeDetection, 4)
	stale := r.Begin()
	r.Decided(webKey, stale, 3)
	if got := currentErr(r, webKey); !strings.Contains(got, "2 of 2") {
		t.Errorf("binding passes begun before the detection, or reading generation 3 < 4: %q", got)
	}
	r.Decided(webKey, r.Begin(), 4)
	if got := currentErr(r, webKey); got != "" {
		t.Errorf("web decided again: its Works wait: %q", got)
	}
	if got := currentErr(r, quotaKey); !strings.Contains(got, "ClusterResourceBinding/quota-clusterrole is among the 1 of 2") {
		t.Errorf("quota not decided again yet: %q", got)
	}
	if got := currentErr(r, ""); got != "" {
		t.Errorf("a Work no binding wrote, once the round listed its bindings: %q, want current", got)
	}

	// quota: the detector writes nothing (floor 0); the binding is gone
	// by the time the binding controller looks.
	r.Detected(quotaKey, r.Begin(), 0)
	<-r.Bindings(true)
	r.Decided(quotaKey, r.Begin(), 1<<62)
	if got := currentErr(r, quotaKey); got != "" {
		t.Errorf("every binding decided again: %q, want current", got)
	}
}

// A break during a round starts it over: what was decided before the
// break may rest on caches that missed writes again.
func TestABreakDuringARoundStartsItOver(t *testing.T) {
	var lists atomic.Int32
	r := New(func(context.Context) ([]Binding, error) { lists.Add(1); return []Binding{web}, nil }, time.Minute, logr.Discard())
	templates := started(t, r)
	caughtUp(t, r, templates, web)
	r.Recovered()
	asked(t, templates, 1)
	key := BindingKey("shop", "web-deployment")
	waitFor(t, "the round lists its bindings", func() bool { return strings.Contains(currentErr(r, key), "1 of 1") })
	r.Detected(key, r.Begin(), 2)
	<-r.Bindings(false)

	r.Break()
	r.Decided(key, r.Begin(), 2)
	if got := currentErr(r, key); !strings.Contains(got, "stopped watching the hub") {
		t.Errorf("a break during the round: %q", got)
	}
	r.Recovered()
	asked(t, templates, 1)
	waitFor(t, "the second round lists its bindings", func() bool { return strings.Contains(currentErr(r, key), "1 of 1") })
	r.Detected(key, r.Begin(), 2)
	<-r.Bindings(false)
	r.Decided(key, r.Begin(), 2)
	if got := currentErr(r, key); got != "" {
		t.Errorf("decided again in the second round: %q, want current", got)
	}
	if n := lists.Load(); n != 3 {
		t.Errorf("listed %d times, want 3 (leading, two breaks)", n)
	}
}

// A binding that cannot be decided does not hold dispatching back for
// ever: after the round's patience, dispatching resumes.
func TestARoundGivesUpAfterItsPatience(t *testing.T) {
	r := New(func(context.Context) ([]Binding, error) { return []Binding{web}, nil }, 200*time.Millisecond, logr.Discard())
	started(t, r)
	waitFor(t, "the round gives up", func() bool { return currentErr(r, BindingKey("shop", "web-deployment")) == "" })
	var none *Round
	none.Break()
	if err := none.Current("ResourceBinding/shop/web-deployment"); err != nil {
		t.Errorf("a nil Round is current: %v", err)
	}
}
