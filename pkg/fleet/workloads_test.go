package fleet

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestFleetWorkloads: a member that runs workloads schedules pods onto its
// simulated nodes within their allocatable resources, a Deployment becomes
// Available and a Job completes; the failure versions fail as documented;
// the hub runs none of it; Stop leaves no process behind.
func TestFleetWorkloads(t *testing.T) {
	bins := requireWorkloadBinaries(t)
	tmp := isolateTempDir(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	f, err := Start(ctx, Options{Dir: t.TempDir(), Members: 1, BinDir: bins, Workloads: true, Log: testLog{t}})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _ = f.Stop() })
	var pids []int
	for _, c := range f.Clusters() {
		pids = append(pids, processesUnder(t, c.workDir)...)
	}
	if n := len(processesUnder(t, f.Hub.workDir)); n != 3 {
		t.Errorf("the hub runs %d processes; want etcd, kube-apiserver, kube-controller-manager only", n)
	}
	member := newClient(t, f.Members[0].Config, nil)

	var nodes corev1.NodeList
	if err := member.List(ctx, &nodes); err != nil {
		t.Fatal(err)
	}
	if len(nodes.Items) != DefaultNodes {
		t.Fatalf("%d nodes, want %d", len(nodes.Items), DefaultNodes)
	}

	nodeLeasesRenewed(ctx, t, member, nodes.Items)

	for _, d := range []*appsv1.Deployment{
		workload("web", "nginx:1.25", "100m"),
		workload("bad", "nginx:1.26-broken", "100m"),
		workload("loop", "nginx:1.26-crash", "100m"),
		workload("huge", "nginx:1.25", "5"), // more CPU than a node has
	} {
		if err := member.Create(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "once"},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers:    []corev1.Container{{Name: "once", Image: "busybox:1.36"}},
		}}},
	}
	if err := member.Create(ctx, job); err != nil {
		t.Fatal(err)
	}

	deployment := func(name string) *appsv1.Deployment {
		d := &appsv1.Deployment{}
		if err := member.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, d); err != nil {
			t.Fatal(err)
		}
		return d
	}
	waitFor(ctx, t, 2*time.Minute, "Deployment web Available with 2 ready replicas", func() bool {
		d := deployment("web")
		return d.Status.ReadyReplicas == 2 && d.Status.AvailableReplicas == 2 && available(d) == "True"
	})
	readyAgainAfterNodeBlip(ctx, t, member, podsOf(ctx, t, member, "web")[0])
	waitFor(ctx, t, 2*time.Minute, "Job once complete", func() bool {
		got := &batchv1.Job{}
		return member.Get(ctx, client.ObjectKeyFromObject(job), got) == nil && got.Status.Succeeded == 1
	})
	waitFor(ctx, t, time.Minute, "a restart counted on the -crash pods", func() bool {
		return minRestarts(ctx, t, member, "loop") >= 1
	})
	pods := podsOf(ctx, t, member, "bad")
	for _, p := range pods {
		if p.Spec.NodeName == "" || p.Status.Phase != corev1.PodRunning || ready(p) {
			t.Errorf("-broken pod %s: node %q, phase %s, ready %v; want scheduled, Running, never Ready", p.Name, p.Spec.NodeName, p.Status.Phase, ready(p))
		}
	}
	if d := deployment("bad"); d.Status.AvailableReplicas != 0 || d.Status.ReadyReplicas != 0 {
		t.Errorf("-broken Deployment: %d ready, %d available; want 0", d.Status.ReadyReplicas, d.Status.AvailableReplicas)
	}
	if d := deployment("loop"); d.Status.ReadyReplicas != 0 {
		t.Errorf("-crash Deployment: %d ready; want 0", d.Status.ReadyReplicas)
	}
	for _, p := range podsOf(ctx, t, member, "huge") {
		if p.Spec.NodeName != "" {
			t.Errorf("pod %s requesting 5 CPUs was scheduled onto %s, whose allocatable CPU is %s", p.Name, p.Spec.NodeName, NodeAllocatable.Cpu())
		}
	}

	stopLeavesNothing(t, f, pids, tmp)
}

// nodeLeasesRenewed: kwok holds a Lease in kube-node-lease for every
// simulated node, as a kubelet does, and renews it (every quarter of its
// duration), which is what keeps the nodes Ready under the node lifecycle
// controller's default grace.
func nodeLeasesRenewed(ctx context.Context, t *testing.T, member client.Client, nodes []corev1.Node) {
	t.Helper()
	renewed := func(name string) (time.Time, bool) {
		l := &coordinationv1.Lease{}
		if err := member.Get(ctx, client.ObjectKey{Namespace: corev1.NamespaceNodeLease, Name: name}, l); err != nil || l.Spec.RenewTime == nil {
			return time.Time{}, false
		}
		if d := ptr.Deref(l.Spec.LeaseDurationSeconds, 0); d != nodeLeaseSeconds {
			t.Fatalf("node %s's Lease lasts %d s; want %d", name, d, nodeLeaseSeconds)
		}
		return l.Spec.RenewTime.Time, true
	}
	first := map[string]time.Time{}
	for _, n := range nodes {
		waitFor(ctx, t, 30*time.Second, "a Lease for node "+n.Name+" in "+corev1.NamespaceNodeLease, func() bool {
			at, ok := renewed(n.Name)
			first[n.Name] = at
			return ok
		})
	}
	for _, n := range nodes {
		waitFor(ctx, t, 3*nodeLeaseSeconds/4*time.Second, "node "+n.Name+"'s Lease renewed", func() bool {
			at, ok := renewed(n.Name)
			return ok && at.After(first[n.Name])
		})
	}
}

// readyAgainAfterNodeBlip: a pod marked not ready as the node lifecycle
// controller marks the pods of a node it takes for dead (MarkPodsNotReady:
// Ready False, every other condition as it was) is Ready again once kwok
// plays it, as a kubelet that is back makes it.
func readyAgainAfterNodeBlip(ctx context.Context, t *testing.T, member client.Client, p corev1.Pod) {
	t.Helper()
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == corev1.PodReady {
			p.Status.Conditions[i].Status = corev1.ConditionFalse
			p.Status.Conditions[i].LastTransitionTime = metav1.Now()
		}
	}
	if err := member.Status().Update(ctx, &p); err != nil {
		t.Fatal(err)
	}
	waitFor(ctx, t, 30*time.Second, "pod "+p.Name+" Ready again after the node lifecycle controller marked it not ready", func() bool {
		got := corev1.Pod{}
		return member.Get(ctx, client.ObjectKeyFromObject(&p), &got) == nil && ready(got)
	})
}

func workload(name, image, cpu string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: name, Image: image,
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}}},
			},
		},
	}
}

func podsOf(ctx context.Context, t *testing.T, c client.Client, app string) []corev1.Pod {
	t.Helper()
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace("default"), client.MatchingLabels{"app": app}); err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) == 0 {
		t.Fatalf("no pods of %s", app)
	}
	return pods.Items
}

// minRestarts is the fewest restarts any container of app's pods counted.
func minRestarts(ctx context.Context, t *testing.T, c client.Client, app string) int32 {
	fewest := int32(1 << 30)
	for _, p := range podsOf(ctx, t, c, app) {
		if len(p.Status.ContainerStatuses) == 0 {
			return 0
		}
		for _, s := range p.Status.ContainerStatuses {
			fewest = min(fewest, s.RestartCount)
		}
	}
	return fewest
}

func ready(p corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func available(d *appsv1.Deployment) string {
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentAvailable {
			return string(c.Status)
		}
	}
	return fmt.Sprintf("no %s condition", appsv1.DeploymentAvailable)
}

// requireWorkloadBinaries is requireBinaries with kube-scheduler and kwok.
func requireWorkloadBinaries(t *testing.T) string {
	t.Helper()
	dir := requireBinaries(t, true)
	if _, err := findBinaries(dir, true, true); err != nil {
		t.Fatalf("%v\n(the workload tests run kube-scheduler and kwok from %s)", err, dir)
	}
	return dir
}
