package softdelete

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/federator-dev/federator/apis/policy"
	"github.com/federator-dev/federator/internal/countdown"
	"github.com/federator-dev/federator/internal/fixture"
)

// keptTest is a countdown the hub keeps a Pull cluster's Work for, as
// countdown.KeepWork leaves it: the Work held and marked since started,
// its tombstone naming it.
type keptTest struct {
	hub       client.Client
	clock     *clocktesting.FakeClock
	recorder  *record.FakeRecorder
	tombstone countdown.Tombstone
	work      client.ObjectKey
}

func newKeptTest(t *testing.T, delay string) *keptTest {
	t.Helper()
	manifest, _ := json.Marshal(map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"namespace": "demo", "name": "web", "annotations": map[string]any{"federator.dev/deletion-delay": delay}}})
	work := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: "karmada-es-edge1", Name: "web-6b8d", UID: "w-1",
		Finalizers:  []string{"karmada.io/execution-controller"},
		Annotations: map[string]string{"federator.dev/deletion-timestamp": started.Format(time.RFC3339)}},
		Spec: workv1alpha1.WorkSpec{Workload: workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: manifest}}}}}}
	tomb := countdown.Tombstone{Cluster: "edge1", APIVersion: "apps/v1", Kind: "Deployment", Namespace: "demo", Name: "web",
		UID: "w-1", Work: "web-6b8d", StartedAt: started, Delay: delay, Due: started.Add(10 * time.Minute),
		Binding: countdown.Ref{Kind: "ResourceBinding", Namespace: "demo", Name: "web-deployment"}}
	hub := fake.NewClientBuilder().WithScheme(policy.NewScheme()).WithObjects(tomb.ConfigMap(), work,
		&clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "edge1"}, Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Pull}},
		&workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "web-deployment"}}).Build()
	return &keptTest{hub: hub, clock: clocktesting.NewFakeClock(started), recorder: record.NewFakeRecorder(10),
		tombstone: tomb, work: client.ObjectKeyFromObject(work)}
}

func (k *keptTest) reconcile(t *testing.T, agent bool, frozen error) ctrl.Result {
	t.Helper()
	r := &Reconciler{Hub: k.hub, Tombstones: k.hub, Members: staticMembers{}, Recorder: k.recorder, Clock: k.clock,
		MaxDelay: countdown.DefaultMaxDelay, Pull: agent,
		Frozen: func(context.Context, string) error { return frozen }}
	res, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(k.tombstone.ConfigMap())})
	if err != nil {
		t.Fatalf("reconcile: %v", err)
	}
	return res
}

// storedWork is the kept Work, nil once deleted (or being deleted: the
// agent's finalizer is still on it).
func (k *keptTest) storedWork(t *testing.T) *workv1alpha1.Work {
	t.Helper()
	w := &workv1alpha1.Work{}
	err := k.hub.Get(context.Background(), k.work, w)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	if !w.DeletionTimestamp.IsZero() {
		return nil
	}
	return w
}

func (k *keptTest) tombstoneLeft() bool {
	cm := k.tombstone.ConfigMap()
	err := k.hub.Get(context.Background(), client.ObjectKeyFromObject(cm), cm)
	return !apierrors.IsNotFound(err)
}

// The hub ends the countdown of a Work it keeps for a Pull cluster: it
// comes back when the delay ends, then deletes the Work with its
// manifest's delay removed (so an agent that counts down deletes at once),
// and tells; the cluster's agent leaves such a countdown to the hub.
func TestAKeptWorkIsDeletedWhenDue(t *testing.T) {
	k := newKeptTest(t, "10m")
	if res := k.reconcile(t, true, nil); res != (ctrl.Result{}) || k.storedWork(t) == nil || !k.tombstoneLeft() {
		t.Fatalf("the agent's controller acted on a Work the hub keeps: %+v", res)
	}
	if res := k.reconcile(t, false, nil); res.RequeueAfter != 10*time.Minute || k.storedWork(t) == nil {
		t.Fatalf("not due: RequeueAfter %s, Work kept %v; want 10m and kept", res.RequeueAfter, k.storedWork(t) != nil)
	}
	k.clock.Step(10 * time.Minute)
	k.reconcile(t, false, nil)
	w := &workv1alpha1.Work{}
	if err := k.hub.Get(context.Background(), k.work, w); err != nil {
		t.Fatal(err)
	}
	if w.DeletionTimestamp.IsZero() {
		t.Fatal("due: the kept Work is not deleted")
	}
	if strings.Contains(string(w.Spec.Workload.Manifests[0].Raw), "deletion-delay") {
		t.Errorf("due: the Work was deleted with its manifest's delay: %s", w.Spec.Workload.Manifests[0].Raw)
	}
	if k.tombstoneLeft() {
		t.Error("due: the tombstone is left")
	}
	events := fixture.Events(k.recorder)
	if len(events) != 1 || !strings.Contains(events[0], "SoftDeletionCompleted") || !strings.Contains(events[0], "Deployment demo/web deleted from edge1") {
		t.Errorf("events %q; want one SoftDeletionCompleted naming the object and the cluster", events)
	}
}

// A freeze of the cluster delays the Work's deletion: the agent would act
// on it at once.
func TestAFreezeDelaysAKeptWorksDeletion(t *testing.T) {
	k := newKeptTest(t, "10m")
	k.clock.Step(10 * time.Minute)
	if res := k.reconcile(t, false, frozenWrite{}); res.RequeueAfter != 2*time.Second || k.storedWork(t) == nil || !k.tombstoneLeft() {
		t.Fatalf("frozen: %+v, Work kept %v, tombstone left %v; want back in 2s with both", res, k.storedWork(t) != nil, k.tombstoneLeft())
	}
	k.reconcile(t, false, nil)
	if k.storedWork(t) != nil || k.tombstoneLeft() {
		t.Error("unfrozen: the Work or its tombstone is left")
	}
}

// Placed there again (the binding controller wrote the Work without the
// mark), the countdown ends and the Work stays.
func TestAKeptWorkWrittenAgainEndsItsCountdown(t *testing.T) {
	k := newKeptTest(t, "10m")
	w := k.storedWork(t)
	delete(w.Annotations, "federator.dev/deletion-timestamp")
	if err := k.hub.Update(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	k.clock.Step(time.Hour)
	k.reconcile(t, false, nil)
	if k.storedWork(t) == nil || k.tombstoneLeft() {
		t.Fatalf("taken back: Work kept %v, tombstone left %v; want the Work and no tombstone", k.storedWork(t) != nil, k.tombstoneLeft())
	}
	if events := fixture.Events(k.recorder); len(events) != 1 || !strings.Contains(events[0], "SoftDeletionCancelled") {
		t.Errorf("events %q; want one SoftDeletionCancelled", events)
	}
}
