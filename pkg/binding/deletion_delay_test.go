package binding

import (
	"context"
	"strings"
	"testing"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	workkeys "github.com/federator-dev/federator/apis/work"
	"github.com/federator-dev/federator/internal/countdown"
)

func (b *bindingTest) setDelay(t *testing.T, obj client.Object, value string) {
	t.Helper()
	patch := `{"metadata":{"annotations":{"federator.dev/deletion-delay":"` + value + `"}}}`
	if err := b.hub.Patch(context.Background(), obj, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		t.Fatal(err)
	}
}

func (b *bindingTest) manifestDelay(t *testing.T, cluster string) string {
	t.Helper()
	return workkeys.FirstManifest(b.work(t, cluster)).GetAnnotations()["federator.dev/deletion-delay"]
}

func (b *bindingTest) delayCondition(t *testing.T) *metav1.Condition {
	t.Helper()
	rb := &workv1alpha2.ResourceBinding{}
	if err := b.hub.Get(context.Background(), bindingKey, rb); err != nil {
		t.Fatal(err)
	}
	return meta.FindStatusCondition(rb.Status.Conditions, "DeletionDelay")
}

func TestDeletionDelayOnWorks(t *testing.T) {
	template := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"}}
	pp := &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"}}

	t.Run("the policy's default travels to every member copy; the template's own value wins", func(t *testing.T) {
		b := newBindingTest(t, nil, interceptor.Funcs{})
		b.works.MaxDeletionDelay = countdown.DefaultMaxDelay
		b.reconcile(t)
		if got := b.manifestDelay(t, "member1"); got != "" {
			t.Errorf("no delay set, manifest carries %q", got)
		}
		if c := b.delayCondition(t); c != nil {
			t.Errorf("no delay set, condition %+v", c)
		}
		b.setDelay(t, pp, "24h")
		b.reconcile(t)
		if got := b.manifestDelay(t, "member2"); got != "24h" {
			t.Errorf("policy default: manifest carries %q, want 24h", got)
		}
		b.setDelay(t, template, "90m")
		b.reconcile(t)
		if got := b.manifestDelay(t, "member2"); got != "90m" {
			t.Errorf("template's own: manifest carries %q, want 90m", got)
		}
		if c := b.delayCondition(t); c == nil || c.Status != metav1.ConditionTrue || c.Reason != "DeletionDelayValid" {
			t.Errorf("condition %+v", c)
		}
		if events := b.events(); len(events) != 0 {
			t.Errorf("a valid delay is no news: events %q", events)
		}
	})

	t.Run("a delay above the maximum is capped, and that is said on the binding and the template", func(t *testing.T) {
		b := newBindingTest(t, nil, interceptor.Funcs{})
		b.works.MaxDeletionDelay = countdown.DefaultMaxDelay
		b.setDelay(t, template, "1000h")
		b.reconcile(t)
		if got := b.manifestDelay(t, "member1"); got != "720h0m0s" {
			t.Errorf("manifest carries %q, want the cap", got)
		}
		if c := b.delayCondition(t); c == nil || c.Reason != "DeletionDelayCapped" || !strings.Contains(c.Message, "1000h") {
			t.Errorf("condition %+v", c)
		}
		events := b.events()
		if len(events) != 2 || !strings.HasPrefix(events[0], "Warning DeletionDelayCapped deletion delay 1000h on Deployment shop/web is above --max-deletion-delay") {
			t.Errorf("events = %q, want one on the template and one on the binding", events)
		}
	})

	for _, bad := range []string{"24 hours", "-5m", "0x10"} {
		t.Run("a bad value ("+bad+") is reported naming it, and a dropped cluster's Work is kept", func(t *testing.T) {
			b := newBindingTest(t, nil, interceptor.Funcs{})
			b.reconcile(t)
			b.setDelay(t, template, bad)
			b.reconcile(t)
			c := b.delayCondition(t)
			if c == nil || c.Status != metav1.ConditionFalse || c.Reason != "InvalidDeletionDelay" || !strings.Contains(c.Message, `"`+bad+`"`) {
				t.Errorf("condition %+v", c)
			}
			events := b.events()
			if len(events) != 2 || !strings.Contains(events[0], "InvalidDeletionDelay") || !strings.Contains(events[1], `"`+bad+`"`) {
				t.Errorf("events = %q", events)
			}
			patch := `{"spec":{"placement":{"clusterAffinity":{"clusterNames":["member1"]}}}}`
			rb := &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: bindingName}}
			if err := b.hub.Patch(context.Background(), rb, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
				t.Fatal(err)
			}
			b.reconcile(t)
			w := b.work(t, "member2")
			if !w.DeletionTimestamp.IsZero() {
				t.Errorf("member2's Work is deleted while the delay cannot be read")
			}

			b.setDelay(t, template, "5s")
			b.reconcile(t)
			list := b.worksIn(t, "member2")
			if len(list) != 0 && list[0].DeletionTimestamp.IsZero() {
				t.Errorf("fixed: member2's Work is still kept")
			}
			if len(list) == 1 && workkeys.FirstManifest(&list[0]).GetAnnotations()["federator.dev/deletion-delay"] != "5s" {
				t.Errorf("the deleted Work carries the old delay: the dispatcher would keep the object for good")
			}
		})
	}
}

func (b *bindingTest) worksIn(t *testing.T, cluster string) []workv1alpha1.Work {
	t.Helper()
	list := &workv1alpha1.WorkList{}
	if err := b.hub.List(context.Background(), list, client.InNamespace("karmada-es-"+cluster)); err != nil {
		t.Fatal(err)
	}
	return list.Items
}
