package dispatch

import (
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	gatingv1alpha1 "github.com/federator-dev/federator/apis/gating/v1alpha1"
)

// Every write to a member goes through the guard first: refused while a
// Freeze holds the member, or while whether one does cannot be told;
// reads go through whatever the freezes.
func TestAGuardedMemberClientWritesNothingWhileFrozen(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := gatingv1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakeClock(t0)
	hub := fake.NewClientBuilder().WithScheme(scheme).Build()
	var watching error
	g := &FreezeGuard{Reader: hub, Clock: clk, Watching: func() error { return watching }}
	memberScheme := runtime.NewScheme()
	if err := corev1.AddToScheme(memberScheme); err != nil {
		t.Fatal(err)
	}
	member := fake.NewClientBuilder().WithScheme(memberScheme).
		WithObjects(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "kept"}}).Build()
	c := guarded(member, "member2", g)
	ctx := t.Context()
	write := func(name string) error {
		return c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: name}})
	}
	if err := write("before"); err != nil {
		t.Fatalf("no freeze: %v", err)
	}

	freeze := &gatingv1alpha1.Freeze{ObjectMeta: metav1.ObjectMeta{Name: "incident-42", CreationTimestamp: metav1.NewTime(t0)},
		Spec: gatingv1alpha1.FreezeSpec{Clusters: []string{"member2"}, Message: "payments", Duration: &metav1.Duration{Duration: time.Hour}}}
	if err := hub.Create(ctx, freeze); err != nil {
		t.Fatal(err)
	}
	kept := &corev1.ConfigMap{}
	for name, err := range map[string]error{
		"create": write("during"),
		"delete": c.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "kept"}}),
		"patch": c.Patch(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "kept"}},
			client.RawPatch("application/merge-patch+json", []byte(`{"data":{"a":"b"}}`))),
	} {
		fe := asFrozen(err)
		if fe == nil || fe.Freeze != "incident-42" || !fe.Ends.Equal(t0.Add(time.Hour)) ||
			!strings.Contains(fe.Message, "Freeze incident-42 holds every write to member2: payments") {
			t.Errorf("%s while frozen: %v", name, err)
		}
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "demo", Name: "kept"}, kept); err != nil || len(kept.Data) > 0 {
		t.Errorf("read while frozen: %v, %+v (the refused patch must not have been sent)", err, kept.Data)
	}
	if err := member.Get(ctx, client.ObjectKey{Namespace: "demo", Name: "during"}, &corev1.ConfigMap{}); err == nil {
		t.Error("the refused create reached the member")
	}
	if err := guarded(member, "member1", g).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "other"}}); err != nil {
		t.Errorf("a member the freeze does not name: %v", err)
	}

	// Whether a freeze holds it cannot be told: nothing is written.
	clk.Step(time.Hour)
	watching = errors.New("the hub cache of Freeze.gating.federator.dev has not watched the hub for 3s")
	if fe := asFrozen(write("unknown")); fe == nil || fe.Freeze != "" || !strings.Contains(fe.Message, "cannot be told") {
		t.Errorf("with the cache of Freezes not watching: %v", fe)
	}
	// The freeze ended by the hub's clock: writes go out again.
	watching = nil
	if err := write("after"); err != nil {
		t.Errorf("after the freeze ended: %v", err)
	}
}
