package dispatch

import (
	"context"
	"testing"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	clusterkeys "github.com/federator-dev/federator/apis/cluster"
	"github.com/federator-dev/federator/apis/policy"
	"github.com/federator-dev/federator/internal/leaving"
)

func readyCondition(ready bool) []metav1.Condition {
	status := metav1.ConditionFalse
	if ready {
		status = metav1.ConditionTrue
	}
	return []metav1.Condition{{Type: clusterv1alpha1.ClusterConditionReady, Status: status}}
}

// leave starts the deletion of the test's Cluster, Ready or not, as
// `federator unjoin` does, the finalizer holding it.
func (d *dispatchTest) leave(t *testing.T, ready bool) {
	t.Helper()
	ctx := context.Background()
	c := &clusterv1alpha1.Cluster{}
	if err := d.hub.Get(ctx, client.ObjectKey{Name: testCluster}, c); err != nil {
		t.Fatal(err)
	}
	c.Finalizers = []string{clusterkeys.ControllerFinalizer}
	c.Status.Conditions = readyCondition(ready)
	if err := d.hub.Update(ctx, c); err != nil {
		t.Fatal(err)
	}
	if err := d.hub.Delete(ctx, c); err != nil {
		t.Fatal(err)
	}
}

func TestWorkDeletedWhileItsClusterLeaves(t *testing.T) {
	for _, c := range []struct {
		name     string
		work     func(t *testing.T) *workv1alpha1.Work
		ready    bool
		deleted  bool
		outcomes string
	}{
		{name: "a Ready cluster has the object deleted at once", ready: true, deleted: true,
			work: func(t *testing.T) *workv1alpha1.Work { return workFixture(t, false, nil) }},
		{name: "an object with a deletion delay stays, with no countdown", ready: true,
			work: func(t *testing.T) *workv1alpha1.Work { return delayedWork(t, "1h") }},
		{name: "an object whose Work preserves it stays", ready: true,
			work: func(t *testing.T) *workv1alpha1.Work {
				w := workFixture(t, false, nil)
				w.Spec.PreserveResourcesOnDeletion = ptr.To(true)
				return w
			}},
		{name: "a cluster not Ready is not reached: the Work is let go and the object stays", ready: false,
			work: func(t *testing.T) *workv1alpha1.Work { return workFixture(t, false, nil) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := c.work(t)
			failMember := false
			d := newDispatchTest(t, interceptor.Funcs{}, []client.Object{w})
			d.reconcile(t, w)
			if _, err := d.memberDeployment(); err != nil {
				t.Fatalf("not applied: %v", err)
			}
			d.leave(t, c.ready)
			if !c.ready {
				// Unreachable: a request would fail, so none must be made.
				failMember = true
				d.r.Members.clients[testCluster] = memberClient{identity: d.r.Members.clients[testCluster].identity,
					client: interceptor.NewClient(d.member.(client.WithWatch), interceptor.Funcs{
						Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
							if failMember {
								t.Errorf("the member of a cluster leaving while not Ready was reached")
							}
							return c.Get(ctx, key, obj, opts...)
						}})}
			}
			if err := d.hub.Delete(context.Background(), d.work(t, w)); err != nil {
				t.Fatal(err)
			}
			d.reconcile(t, w)
			failMember = false
			if err := d.hub.Get(context.Background(), client.ObjectKeyFromObject(w), &workv1alpha1.Work{}); !apierrors.IsNotFound(err) {
				t.Errorf("the Work is not released: %v", err)
			}
			_, err := d.memberDeployment()
			if c.deleted && !apierrors.IsNotFound(err) {
				t.Errorf("the member object is still there: %v", err)
			}
			if !c.deleted && err != nil {
				t.Errorf("the member object is gone: %v", err)
			}
			if dep, err := d.memberDeployment(); err == nil {
				if _, marked := dep.Annotations["federator.dev/deletion-timestamp"]; marked {
					t.Errorf("a countdown started in a cluster that leaves")
				}
			}
			if list := (&corev1.ConfigMapList{}); d.hub.List(context.Background(), list) == nil && len(list.Items) > 0 {
				t.Errorf("tombstones recorded: %v", list.Items)
			}
		})
	}
}

// leavingTest is a clusterReconciler over a fake hub holding objs and a
// Cluster of testCluster being deleted.
func leavingTest(t *testing.T, objs ...client.Object) (*clusterReconciler, client.Client) {
	t.Helper()
	now := metav1.Now()
	cluster := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: testCluster, DeletionTimestamp: &now,
		Finalizers: []string{clusterkeys.ControllerFinalizer, "example.com/another"}}}
	hub := fake.NewClientBuilder().WithScheme(policy.NewScheme()).WithObjects(append(objs, cluster)...).Build()
	return &clusterReconciler{hub: hub}, hub
}

func (r *clusterReconciler) leavingPass(t *testing.T) (requeue bool) {
	t.Helper()
	c := &clusterv1alpha1.Cluster{}
	if err := r.hub.Get(context.Background(), client.ObjectKey{Name: testCluster}, c); err != nil {
		t.Fatal(err)
	}
	res, err := r.finishLeaving(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	return res.RequeueAfter > 0
}

func clusterFinalizers(t *testing.T, hub client.Client) []string {
	t.Helper()
	c := &clusterv1alpha1.Cluster{}
	if err := hub.Get(context.Background(), client.ObjectKey{Name: testCluster}, c); err != nil {
		t.Fatal(err)
	}
	return c.Finalizers
}

func TestClusterLeaves(t *testing.T) {
	t.Run("its Works are deleted, and the finalizer stays until they are gone", func(t *testing.T) {
		w := workFixture(t, false, nil)
		ns := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: w.Namespace, Name: "shop-namespace"}}
		elsewhere := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: "karmada-es-member2", Name: "web-1"}}
		r, hub := leavingTest(t, w, ns, elsewhere)
		if !r.leavingPass(t) {
			t.Fatal("no wait while Works are left")
		}
		got := &workv1alpha1.Work{}
		if err := hub.Get(context.Background(), client.ObjectKeyFromObject(w), got); err != nil || got.DeletionTimestamp.IsZero() {
			t.Errorf("the Work carrying the execution finalizer is not being deleted: %v, %v", err, got.DeletionTimestamp)
		}
		if err := hub.Get(context.Background(), client.ObjectKeyFromObject(ns), got); !apierrors.IsNotFound(err) {
			t.Errorf("the namespace Work is not deleted: %v", err)
		}
		if err := hub.Get(context.Background(), client.ObjectKeyFromObject(elsewhere), got); err != nil {
			t.Errorf("another cluster's Work: %v", err)
		}
		if f := clusterFinalizers(t, hub); len(f) != 2 {
			t.Errorf("finalizers = %v while a Work is left", f)
		}

		// As the member's Work controller does once its objects are deleted.
		got = &workv1alpha1.Work{}
		_ = hub.Get(context.Background(), client.ObjectKeyFromObject(w), got)
		got.Finalizers = nil
		if err := hub.Update(context.Background(), got); err != nil {
			t.Fatal(err)
		}
		if r.leavingPass(t) {
			t.Error("still waiting with no Work left")
		}
		if f := clusterFinalizers(t, hub); len(f) != 1 || f[0] != "example.com/another" {
			t.Errorf("finalizers = %v, want only the other one left", f)
		}
	})

	t.Run("a Pull cluster with no agent reporting leaves: the hub lets go of its Works, for no agent will", func(t *testing.T) {
		for _, ready := range []bool{false, true} {
			w := workFixture(t, false, nil)
			r, hub := leavingTest(t, w)
			c := &clusterv1alpha1.Cluster{}
			_ = hub.Get(context.Background(), client.ObjectKey{Name: testCluster}, c)
			c.Spec.SyncMode = clusterv1alpha1.Pull
			if ready {
				c.Status.Conditions = []metav1.Condition{{Type: clusterv1alpha1.ClusterConditionReady, Status: metav1.ConditionTrue}}
			}
			if err := hub.Update(context.Background(), c); err != nil {
				t.Fatal(err)
			}
			// The first pass deletes the Work, the next finds it deleting.
			r.leavingPass(t)
			waits := r.leavingPass(t)
			err := hub.Get(context.Background(), client.ObjectKeyFromObject(w), &workv1alpha1.Work{})
			switch {
			case !ready && (!apierrors.IsNotFound(err) || r.leavingPass(t)):
				t.Errorf("agent not reporting: the Work is still there (%v) or the Cluster still waits", err)
			case ready && (err != nil || !waits):
				t.Errorf("agent reporting: its Work should wait for the agent to let go (%v, waiting %v)", err, waits)
			}
		}
	})

	t.Run("the finalizer stays while a binding still targets the cluster", func(t *testing.T) {
		rb := &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-deployment"},
			Spec: workv1alpha2.ResourceBindingSpec{Clusters: []workv1alpha2.TargetCluster{{Name: "member2"}, {Name: testCluster}}}}
		r, hub := leavingTest(t, rb)
		if !r.leavingPass(t) {
			t.Fatal("no wait while a binding targets the cluster")
		}
		if f := clusterFinalizers(t, hub); len(f) != 2 {
			t.Errorf("finalizers = %v while a binding targets the cluster", f)
		}
		rb.Spec.Clusters = rb.Spec.Clusters[:1]
		if err := hub.Update(context.Background(), rb); err != nil {
			t.Fatal(err)
		}
		if r.leavingPass(t) {
			t.Error("still waiting once no binding targets it")
		}
		if f := clusterFinalizers(t, hub); len(f) != 1 {
			t.Errorf("finalizers = %v, want ours gone", f)
		}
	})

	t.Run("a Cluster gets the finalizer, once", func(t *testing.T) {
		hub := fake.NewClientBuilder().WithScheme(policy.NewScheme()).
			WithObjects(&clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: testCluster}}).Build()
		r := &clusterReconciler{hub: hub}
		for range 2 {
			c := &clusterv1alpha1.Cluster{}
			_ = hub.Get(context.Background(), client.ObjectKey{Name: testCluster}, c)
			if err := r.ensureFinalizer(context.Background(), c); err != nil {
				t.Fatal(err)
			}
		}
		if f := clusterFinalizers(t, hub); len(f) != 1 || f[0] != clusterkeys.ControllerFinalizer {
			t.Errorf("finalizers = %v", f)
		}
	})
}

func TestOnLeaveSaysWhatTheWorkControllerWillDo(t *testing.T) {
	namespaceWork := &workv1alpha1.Work{Spec: workv1alpha1.WorkSpec{Workload: workv1alpha1.WorkloadTemplate{
		Manifests: []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: []byte(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"shop"}}`)}}}}}}
	preserved := workFixture(t, false, nil)
	preserved.Spec.PreserveResourcesOnDeletion = ptr.To(true)
	for _, c := range []struct {
		name  string
		ready bool
		work  *workv1alpha1.Work
		want  leaving.Outcome
	}{
		{"an object with no delay is deleted", true, workFixture(t, false, nil), leaving.Deleted},
		{"a zero delay is none", true, delayedWork(t, "0s"), leaving.Deleted},
		{"an object with a delay is kept", true, delayedWork(t, "1h"), leaving.Delayed},
		{"an object with a delay that cannot be read is kept", true, delayedWork(t, "a day"), leaving.Delayed},
		{"a namespace is kept", true, namespaceWork, leaving.Namespace},
		{"a preserved object is kept", true, preserved, leaving.Preserved},
		{"a preserved object is kept, Ready or not", false, preserved, leaving.Preserved},
		{"nothing is touched in a cluster not Ready", false, workFixture(t, false, nil), leaving.Unreachable},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := leaving.OnLeave(c.ready, c.work); len(got) != 1 || got[c.want] != 1 {
				t.Errorf("OnLeave = %v, want one %q", got, c.want)
			}
		})
	}
}
