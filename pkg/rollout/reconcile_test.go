package rollout

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	"github.com/prometheus/client_golang/prometheus/testutil"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/federator-dev/federator/apis/policy"
	v1 "github.com/federator-dev/federator/apis/rollouts/v1alpha1"
	"github.com/federator-dev/federator/pkg/metrics"
)

// fakeHub is a hub in a fake client: PropagationPolicy shop/web claiming
// Deployment shop/web, placed on member1..member3, and a Rollout of it; the
// reconciler runs on a fake clock.
type fakeHub struct {
	t      *testing.T
	client client.Client
	clock  *clocktesting.FakeClock
	r      *Reconciler
	events *record.FakeRecorder
	key    client.ObjectKey
}

func newFakeHub(t *testing.T, ro *v1.Rollout) *fakeHub {
	t.Helper()
	members := []string{"member1", "member2", "member3"}
	objs := []client.Object{
		ro,
		&policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: ro.Spec.PolicyRef.Name}},
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"},
			Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "web", Image: "nginx:1"}}}}}},
	}
	rb := &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-deployment",
		Annotations: map[string]string{policyv1alpha1.PropagationPolicyNamespaceAnnotation: "shop",
			policyv1alpha1.PropagationPolicyNameAnnotation: ro.Spec.PolicyRef.Name}},
		Spec: workv1alpha2.ResourceBindingSpec{Resource: workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment",
			Namespace: "shop", Name: "web"}},
		Status: workv1alpha2.ResourceBindingStatus{Conditions: []metav1.Condition{{Type: workv1alpha2.Scheduled,
			Status: metav1.ConditionTrue, Reason: "Success", LastTransitionTime: metav1.Now()}}}}
	for _, m := range members {
		rb.Spec.Clusters = append(rb.Spec.Clusters, workv1alpha2.TargetCluster{Name: m})
		objs = append(objs, &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: m}})
	}
	objs = append(objs, rb)
	c := fake.NewClientBuilder().WithScheme(policy.NewScheme()).WithObjects(objs...).
		WithStatusSubresource(&v1.Rollout{}, &workv1alpha2.ResourceBinding{}).Build()
	clock := clocktesting.NewFakeClock(t0)
	events := record.NewFakeRecorder(100)
	return &fakeHub{t: t, client: c, clock: clock, events: events, key: client.ObjectKeyFromObject(ro),
		r: &Reconciler{Client: c, Recorder: events, Clock: clock}}
}

// reconcile runs one reconcile at t0+at and returns the Rollout it left.
func (h *fakeHub) reconcile(at time.Duration) *v1.Rollout {
	h.t.Helper()
	h.clock.SetTime(t0.Add(at))
	if _, err := h.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: h.key}); err != nil {
		h.t.Fatal(err)
	}
	ro := &v1.Rollout{}
	if err := h.client.Get(context.Background(), h.key, ro); err != nil {
		h.t.Fatal(err)
	}
	return ro
}

// setImage changes the template's content: the next reconcile takes in a
// new revision.
func (h *fakeHub) setImage(image string) {
	h.t.Helper()
	d := &appsv1.Deployment{}
	if err := h.client.Get(context.Background(), client.ObjectKey{Namespace: "shop", Name: "web"}, d); err != nil {
		h.t.Fatal(err)
	}
	d.Spec.Template.Spec.Containers[0].Image = image
	if err := h.client.Update(context.Background(), d); err != nil {
		h.t.Fatal(err)
	}
}

func states(ro *v1.Rollout) map[string]string {
	out := map[string]string{}
	for _, c := range ro.Status.Clusters {
		out[c.Name] = fmt.Sprintf("%s %d %s", c.State, c.Revision, c.Reason)
	}
	return out
}

func oneStage(name string, maxConcurrency *intstr.IntOrString) *v1.Rollout {
	ro := testRollout(name, "web", t0)
	ro.Spec.Stages = []v1.Stage{{Name: "all", Clusters: []string{"member1", "member2", "member3"}, MaxConcurrency: maxConcurrency}}
	return ro
}

// A maxConcurrency stored before admission refused it does not release
// every cluster of the stage at once: one at a time, and the status says
// why.
func TestReconcileReleasesOneAtATimeWhenMaxConcurrencyCannotBeRead(t *testing.T) {
	for _, v := range []intstr.IntOrString{intstr.FromString("5O%"), intstr.FromInt32(-1)} {
		t.Run(v.String(), func(t *testing.T) {
			h := newFakeHub(t, oneStage("web", &v))
			h.reconcile(0)
			h.setImage("nginx:2")
			ro := h.reconcile(time.Minute)
			want := map[string]string{"member1": "Progressing 2 Released",
				"member2": "Pending 1 WaitingForConcurrency", "member3": "Pending 1 WaitingForConcurrency"}
			if got := states(ro); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("clusters %v, want %v", got, want)
			}
			problem := fmt.Sprintf("maxConcurrency %q is not a whole number or a percentage: one cluster at a time until it is fixed", v.String())
			for _, c := range ro.Status.Clusters {
				if c.State == v1.StatePending && !strings.Contains(c.Message, problem) {
					t.Errorf("%s says %q, want it to say %q", c.Name, c.Message, problem)
				}
			}
			for _, c := range ro.Status.Conditions {
				if c.Type == v1.ConditionProgressing && !strings.Contains(c.Message, problem) {
					t.Errorf("Progressing says %q, want it to say %q", c.Message, problem)
				}
			}
		})
	}
}

// federator_rollout_failures_total counts each cluster that fails a
// revision once, when it fails.
func TestReconcileCountsEachFailedClusterOnce(t *testing.T) {
	h := newFakeHub(t, oneStage("counted", nil))
	failures := metrics.RolloutFailures.WithLabelValues("Rollout", "shop", "counted")
	before := testutil.ToFloat64(failures)
	h.reconcile(0)
	h.setImage("nginx:2")
	ro := h.reconcile(time.Minute)
	if got := testutil.ToFloat64(failures) - before; got != 0 {
		t.Fatalf("%v failures counted before any deadline passed; clusters %v", got, states(ro))
	}
	ro = h.reconcile(12 * time.Minute) // past the default progress deadline of 10m
	if got := testutil.ToFloat64(failures) - before; got != 3 {
		t.Errorf("%v failures counted, want 3 (every cluster failed); clusters %v", got, states(ro))
	}
	h.reconcile(13 * time.Minute)
	if got := testutil.ToFloat64(failures) - before; got != 3 {
		t.Errorf("%v failures counted after another step, want still 3", got)
	}
}

// The kept revisions are bounded: the last 10 by default, or
// spec.revisionHistoryLimit; older ones are deleted.
func TestReconcileKeepsABoundedHistory(t *testing.T) {
	for _, tc := range []struct {
		name  string
		limit *int32
		want  []int64
	}{
		{"the default keeps the last 10", nil, []int64{3, 4, 5, 6, 7, 8, 9, 10, 11, 12}},
		{"revisionHistoryLimit 3 keeps the last 3", ptr.To[int32](3), []int64{10, 11, 12}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ro := oneStage("web", nil)
			ro.Spec.RevisionHistoryLimit = tc.limit
			h := newFakeHub(t, ro)
			for i := range 12 {
				if i > 0 {
					h.setImage(fmt.Sprintf("nginx:%d", i+1))
				}
				if got := h.reconcile(time.Duration(i) * time.Second).Status.Revision; got != int64(i+1) {
					t.Fatalf("revision %d after %d changes, want %d", got, i, i+1)
				}
			}
			list := &appsv1.ControllerRevisionList{}
			if err := h.client.List(context.Background(), list, client.InNamespace("shop")); err != nil {
				t.Fatal(err)
			}
			var kept []int64
			for _, cr := range list.Items {
				kept = append(kept, cr.Revision)
			}
			slices.Sort(kept)
			if !slices.Equal(kept, tc.want) {
				t.Errorf("kept revisions %v, want %v", kept, tc.want)
			}
		})
	}
}
