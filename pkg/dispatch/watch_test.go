package dispatch

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"

	workkeys "github.com/federator-dev/federator/apis/work"
)

// memberObject is a member Deployment as the member watch sees it: the
// applied hash annotation and, when status is not nil, a status.
func memberObject(hash string, status map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment"}}
	u.SetNamespace("demo")
	u.SetName("web")
	u.SetAnnotations(map[string]string{workkeys.AppliedHashAnnotation: hash})
	if status != nil {
		u.Object["status"] = status
	}
	return u
}

func TestNotOwnApply(t *testing.T) {
	ready := map[string]any{"readyReplicas": int64(2)}
	creates := []struct {
		name   string
		object *unstructured.Unstructured
		want   bool
	}{
		{"own create: no status yet", memberObject("a", nil), false},
		{"own create: empty status", memberObject("a", map[string]any{}), false},
		// The watch (re)listed an object whose status changed while the
		// member's watch was down: the only news of that status.
		{"listed with a status", memberObject("a", ready), true},
	}
	for _, c := range creates {
		if got := (notOwnApply{}).Create(event.CreateEvent{Object: c.object}); got != c.want {
			t.Errorf("Create, %s: got %v, want %v", c.name, got, c.want)
		}
	}

	updates := []struct {
		name     string
		old, new *unstructured.Unstructured
		want     bool
	}{
		{"own apply stamps a new hash", memberObject("a", ready), memberObject("b", ready), false},
		// Relisted after an outage: our apply and a status change in one event.
		{"new hash and new status", memberObject("a", nil), memberObject("b", ready), true},
		{"status change", memberObject("a", nil), memberObject("a", ready), true},
		{"edit by someone else", memberObject("a", ready), memberObject("a", ready), true},
	}
	for _, u := range updates {
		if got := (notOwnApply{}).Update(event.UpdateEvent{ObjectOld: u.old, ObjectNew: u.new}); got != u.want {
			t.Errorf("Update, %s: got %v, want %v", u.name, got, u.want)
		}
	}
	if !(notOwnApply{}).Delete(event.DeleteEvent{Object: memberObject("a", nil)}) {
		t.Error("a deletion in the member must requeue its Work")
	}
}

// unusedController stands in for a member's Work controller in tests that
// never get as far as adding a watch to it.
type unusedController struct{ controller.Controller }

// TestMemberWatchObeysMemberLimits: the member's watch cache talks to the
// member within --member-qps/--member-burst, like its client, not with the
// limits the registration's config carries.
func TestMemberWatchObeysMemberLimits(t *testing.T) {
	registered := &rest.Config{Host: "https://member1.example:6443", BearerToken: "token",
		QPS: 1000, Burst: 2000, Timeout: 32 * time.Second}
	members := NewMembers(func(context.Context, string) (*rest.Config, error) { return registered, nil },
		ClientOptions{QPS: 7, Burst: 9})
	var built *rest.Config
	refused := errors.New("no cache in this test")
	w := newMemberWatch(context.Background(), members, "member1")
	w.controller = unusedController{}
	w.newCache = func(cfg *rest.Config, _ cache.Options) (cache.Cache, error) {
		built = cfg
		return nil, refused
	}

	err := w.ensure(context.Background(), registered, []schema.GroupVersionKind{{Group: "apps", Version: "v1", Kind: "Deployment"}})
	if !errors.Is(err, refused) {
		t.Fatalf("ensure: got %v, want the cache constructor's error", err)
	}
	if built.QPS != 7 || built.Burst != 9 {
		t.Errorf("member watch cache built with QPS %v, burst %d; want the member options 7 and 9", built.QPS, built.Burst)
	}
	if built.Timeout != 0 {
		t.Errorf("member watch cache built with a %v request timeout; watches must not time out", built.Timeout)
	}
	if registered.QPS != 1000 {
		t.Errorf("the registration's config was changed in place (QPS %v)", registered.QPS)
	}
}

// TestStoppedMemberWatchStaysStopped: a reconcile still in flight when its
// member left must not start the member's watch again.
func TestStoppedMemberWatchStaysStopped(t *testing.T) {
	registered := &rest.Config{Host: "https://member1.example:6443", BearerToken: "token"}
	members := NewMembers(func(context.Context, string) (*rest.Config, error) { return registered, nil }, ClientOptions{})
	w := newMemberWatch(context.Background(), members, "member1")
	w.controller = unusedController{}
	caches := 0
	w.newCache = func(*rest.Config, cache.Options) (cache.Cache, error) {
		caches++
		return nil, errors.New("no cache in this test")
	}

	w.stop()
	err := w.ensure(context.Background(), registered, []schema.GroupVersionKind{{Group: "apps", Version: "v1", Kind: "Deployment"}})
	if err == nil || !strings.Contains(err.Error(), "member1") {
		t.Errorf("ensure after stop: got %v, want an error naming the cluster", err)
	}
	if caches != 0 {
		t.Errorf("ensure after stop built %d caches for a member that left", caches)
	}
}

// A member whose watch cannot start is retried later and later, by how
// long it has been failing, and a person reads one line per new error and
// one when it works again, not one per Work per retry.
func TestMemberWatchBacksOffAndLogsTransitions(t *testing.T) {
	w := newMemberWatch(context.Background(), nil, "member1")
	t0 := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	refused := errors.New("dial tcp 127.0.0.1:6443: connect: connection refused")
	steps := []struct {
		at        time.Duration
		err       error
		wantRetry time.Duration
		wantLog   bool
	}{
		{0, nil, 0, false},
		{0, refused, 5 * time.Second, true},
		{time.Second, refused, 5 * time.Second, false}, // another Work of the member
		{5 * time.Second, refused, 5 * time.Second, false},
		{10 * time.Second, refused, 10 * time.Second, false},
		{20 * time.Second, refused, 20 * time.Second, false},
		{40 * time.Second, errors.New("Unauthorized"), 40 * time.Second, true},
		{time.Hour, errors.New("Unauthorized"), 5 * time.Minute, false},
		{time.Hour + time.Second, nil, 0, true},
		{time.Hour + 2*time.Second, nil, 0, false},
		{time.Hour + 3*time.Second, refused, 5 * time.Second, true},
	}
	for i, s := range steps {
		retry, line := w.record(s.err, t0.Add(s.at))
		if retry != s.wantRetry || (line != "") != s.wantLog {
			t.Errorf("step %d (%v at +%s): retry %s, log %q; want retry %s, a log line %v", i, s.err, s.at, retry, line, s.wantRetry, s.wantLog)
		}
	}
}
