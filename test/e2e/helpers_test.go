package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	"github.com/karmada-io/karmada/pkg/util/names"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/federator-dev/federator/internal/fixture"
	"github.com/federator-dev/federator/pkg/yamldocs"
)

var ctx = context.Background()

// apply server-side applies YAML documents to the hub, as `kubectl apply
// --server-side` would, and returns the first error.
func apply(yaml string, args ...any) error {
	return yamldocs.Apply(ctx, hubClient, []byte(fmt.Sprintf(yaml, args...)), client.FieldOwner("e2e"), client.ForceOwnership)
}

func mustApply(yaml string, args ...any) {
	GinkgoHelper()
	Expect(apply(yaml, args...)).To(Succeed())
}

// namespace creates a hub namespace (propagated to every member) and waits
// until every member has it.
func namespace(name string) {
	mustApply(`{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": %q}}`, name)
	for m, c := range members {
		Eventually(func() error {
			return c.Get(ctx, client.ObjectKey{Name: name}, &corev1.Namespace{})
		}).Should(Succeed(), "namespace %s in %s", name, m)
	}
}

// propagatedEverywhere starts a spec from a propagated Deployment: namespace
// ns, Deployment ns/name at nginx:1.25 and a PropagationPolicy to every
// member, and waits until every member runs it.
func propagatedEverywhere(ns, name string) {
	GinkgoHelper()
	namespace(ns)
	deployment(ns, name, "nginx:1.25")
	propagationPolicy(ns, name, "")
	Eventually(func() map[string]string { return imagesEverywhere(ns, name) }).Should(Equal(everywhere("nginx:1.25")))
}

func deployment(ns, name, image string) {
	mustApply(`
apiVersion: apps/v1
kind: Deployment
metadata: {name: %[2]s, namespace: %[1]s, labels: {app: %[2]s}}
spec:
  replicas: 2
  selector: {matchLabels: {app: %[2]s}}
  template:
    metadata: {labels: {app: %[2]s}}
    spec: {containers: [{name: app, image: %[3]q}]}
`, ns, name, image)
}

// memberImage is the image of a Deployment in a member, "" when absent.
func memberImage(member, ns, name string) string {
	d := &appsv1.Deployment{}
	if err := members[member].Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, d); err != nil {
		if apierrors.IsNotFound(err) {
			return ""
		}
		return "error: " + err.Error()
	}
	return d.Spec.Template.Spec.Containers[0].Image
}

// workImage is the image a cluster's Work for a Deployment carries: what
// the hub wants there, dispatched or not.
func workImage(member, ns, name string) string {
	w := &workv1alpha1.Work{}
	key := client.ObjectKey{Namespace: names.GenerateExecutionSpaceName(member), Name: names.GenerateWorkName("Deployment", name, ns)}
	if err := hubClient.Get(ctx, key, w); err != nil {
		return ""
	}
	return fixture.WorkImage(w)
}

// dispatching is the Dispatching condition of a cluster's Work.
func dispatching(member, kind, ns, name string) *metav1.Condition {
	return workCondition(member, kind, ns, name, workv1alpha1.WorkDispatching)
}

// applied is the Applied condition of a cluster's Work.
func applied(member, kind, ns, name string) *metav1.Condition {
	return workCondition(member, kind, ns, name, workv1alpha1.WorkApplied)
}

func workCondition(member, kind, ns, name, conditionType string) *metav1.Condition {
	w := &workv1alpha1.Work{}
	key := client.ObjectKey{Namespace: names.GenerateExecutionSpaceName(member), Name: names.GenerateWorkName(kind, name, ns)}
	if err := hubClient.Get(ctx, key, w); err != nil {
		return nil
	}
	for i := range w.Status.Conditions {
		if w.Status.Conditions[i].Type == conditionType {
			return &w.Status.Conditions[i]
		}
	}
	return nil
}

// imagesEverywhere is each member's image of a Deployment.
func imagesEverywhere(ns, name string) map[string]string {
	out := map[string]string{}
	for m := range members {
		out[m] = memberImage(m, ns, name)
	}
	return out
}

// setImage changes a hub Deployment's image, as `kubectl set image` does.
func setImage(ns, name, image string) {
	GinkgoHelper()
	d := &appsv1.Deployment{}
	Expect(hubClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, d)).To(Succeed())
	patch := client.MergeFrom(d.DeepCopy())
	d.Spec.Template.Spec.Containers[0].Image = image
	Expect(hubClient.Patch(ctx, d, patch)).To(Succeed())
}

// patchPolicy merge-patches a PropagationPolicy, as `kubectl patch --type merge`.
func patchPolicy(ns, name, mergePatch string) {
	GinkgoHelper()
	pp := &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	Expect(hubClient.Patch(ctx, pp, client.RawPatch(types.MergePatchType, []byte(mergePatch)))).To(Succeed())
}

// propagationPolicy applies a PropagationPolicy selecting one Deployment for
// member1..member3, with extra spec lines (YAML at two-space indent).
func propagationPolicy(ns, name, extraSpec string) {
	GinkgoHelper()
	Expect(applyPropagationPolicy(ns, name, extraSpec)).To(Succeed())
}

// applyPropagationPolicy is propagationPolicy for a spec the hub may refuse.
func applyPropagationPolicy(ns, name, extraSpec string) error {
	return apply(`
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: %[2]s, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: %[2]s}]
  placement:
    clusterAffinity: {clusterNames: [member1, member2, member3]}
%[3]s`, ns, name, extraSpec)
}

// everywhere is a member → value map with the same value for every member.
func everywhere(v string) map[string]string {
	out := map[string]string{}
	for m := range members {
		out[m] = v
	}
	return out
}

// imageRecorder watches one Deployment in one member and records every
// image it ever had, so a test can say a version never reached a member.
type imageRecorder struct {
	mu     sync.Mutex
	images []string
	stop   context.CancelFunc
}

func recordImages(member, ns, name string) *imageRecorder {
	GinkgoHelper()
	r := &imageRecorder{}
	wctx, cancel := context.WithCancel(ctx)
	r.stop = cancel
	w, err := memberCS[member].AppsV1().Deployments(ns).Watch(wctx, metav1.ListOptions{
		FieldSelector: "metadata.name=" + name})
	Expect(err).NotTo(HaveOccurred())
	go func() {
		defer w.Stop()
		for ev := range w.ResultChan() {
			if d, ok := ev.Object.(*appsv1.Deployment); ok {
				r.mu.Lock()
				r.images = append(r.images, d.Spec.Template.Spec.Containers[0].Image)
				r.mu.Unlock()
			}
		}
	}()
	DeferCleanup(cancel)
	return r
}

func (r *imageRecorder) seen() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.images)
}

// memberResourceVersion is a member object's resourceVersion: it changes on
// every write, so an unchanged one proves nothing was written.
func memberResourceVersion(member string, obj client.Object) string {
	if err := members[member].Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		return "error: " + err.Error()
	}
	return obj.GetResourceVersion()
}

var (
	buildOnce     sync.Once
	builtBinary   string
	buildBinError error
)

// federatorBinary builds cmd/federator once per suite run.
func federatorBinary() string {
	GinkgoHelper()
	buildOnce.Do(func() {
		builtBinary, buildBinError = gexec.Build("github.com/federator-dev/federator/cmd/federator")
	})
	Expect(buildBinError).NotTo(HaveOccurred())
	return builtBinary
}

var _ = AfterSuite(gexec.CleanupBuildArtifacts)

// templateEvents lists "reason: message" of the Events on a hub object.
func templateEvents(ns, kind, name string) []string {
	events := &corev1.EventList{}
	if err := hubClient.List(ctx, events, client.InNamespace(ns)); err != nil {
		return []string{err.Error()}
	}
	var out []string
	for _, e := range events.Items {
		if e.InvolvedObject.Kind == kind && e.InvolvedObject.Name == name {
			out = append(out, e.Reason+": "+e.Message)
		}
	}
	return out
}

// reportReady plays a member's deployment controller: all replicas of the
// Deployment ns/name in member are ready.
func reportReady(member, ns, name string) {
	GinkgoHelper()
	Eventually(func() error {
		d := &appsv1.Deployment{}
		if err := members[member].Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, d); err != nil {
			return err
		}
		r := *d.Spec.Replicas
		d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: r, ReadyReplicas: r,
			UpdatedReplicas: r, AvailableReplicas: r}
		return members[member].Status().Update(ctx, d)
	}).Should(Succeed())
}

// workReadyReplicas is the ready replicas the Work of Deployment ns/name for
// member reports from the member; -1 when it reports no status.
func workReadyReplicas(member, ns, name string) int32 {
	w := &workv1alpha1.Work{}
	key := client.ObjectKey{Namespace: names.GenerateExecutionSpaceName(member), Name: names.GenerateWorkName("Deployment", name, ns)}
	if err := hubClient.Get(ctx, key, w); err != nil || len(w.Status.ManifestStatuses) == 0 || w.Status.ManifestStatuses[0].Status == nil {
		return -1
	}
	var s appsv1.DeploymentStatus
	if err := json.Unmarshal(w.Status.ManifestStatuses[0].Status.Raw, &s); err != nil {
		return -1
	}
	return s.ReadyReplicas
}
