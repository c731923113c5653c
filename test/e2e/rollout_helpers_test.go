package e2e

import (
	"fmt"
	"time"

	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	rolloutsv1alpha1 "github.com/federator-dev/federator/apis/rollouts/v1alpha1"
	"github.com/federator-dev/federator/config/argocd"
	"github.com/federator-dev/federator/test/framework"
)

// stagedRollout is the Rollout ns/name of Deployment ns/name on a workload
// fleet, and what the rollout specs ask of it.
type stagedRollout struct {
	w        *workloadFleet
	ns, name string
}

// apply applies the Rollout of policy ns/name: stages canary (member1),
// second (member2) and last (member3), a 25 s progress deadline, and
// onFailure.
func (s stagedRollout) apply(onFailure string) {
	GinkgoHelper()
	Expect(framework.Apply(ctx, s.w.hub, &rolloutsv1alpha1.Rollout{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rollouts.federator.dev/v1alpha1", Kind: "Rollout"},
		ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: s.name},
		Spec: rolloutsv1alpha1.RolloutSpec{
			PolicyRef:        rolloutsv1alpha1.PolicyReference{Name: s.name},
			ProgressDeadline: &metav1.Duration{Duration: 25 * time.Second},
			OnFailure:        onFailure,
			Stages: []rolloutsv1alpha1.Stage{
				{Name: "canary", Clusters: []string{"member1"}},
				{Name: "second", Clusters: []string{"member2"}},
				{Name: "last", Clusters: []string{"member3"}},
			},
		},
	}, fieldOwner)).To(Succeed())
}

func (s stagedRollout) get() *rolloutsv1alpha1.Rollout {
	GinkgoHelper()
	ro := &rolloutsv1alpha1.Rollout{}
	Expect(s.w.hub.Get(ctx, client.ObjectKey{Namespace: s.ns, Name: s.name}, ro)).To(Succeed())
	return ro
}

// condition is the status of the Rollout's condition of type t at its
// generation, "" when it has none yet.
func condition(ro *rolloutsv1alpha1.Rollout, t string) metav1.ConditionStatus {
	c := meta.FindStatusCondition(ro.Status.Conditions, t)
	if c == nil || c.ObservedGeneration != ro.Generation {
		return ""
	}
	return c.Status
}

// completedAt waits for the Rollout to complete the revision.
func (s stagedRollout) completedAt(revision int64) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		ro := s.get()
		g.Expect(ro.Status.Revision).To(Equal(revision))
		g.Expect(condition(ro, rolloutsv1alpha1.ConditionCompleted)).To(Equal(metav1.ConditionTrue), "%+v", ro.Status)
	}, "3m").Should(Succeed())
}

// memberImageIs waits for member's Deployment to run image.
func (s stagedRollout) memberImageIs(member, image string) {
	GinkgoHelper()
	Eventually(func(g Gomega) string {
		d := &appsv1.Deployment{}
		g.Expect(s.w.inMembers[member].Get(ctx, client.ObjectKey{Namespace: s.ns, Name: s.name}, d)).To(Succeed())
		return d.Spec.Template.Spec.Containers[0].Image
	}, "2m").Should(Equal(image), member)
}

// recordMembers records every version of the Deployment each member
// stores from now to the end of the spec, by member.
func (s stagedRollout) recordMembers() map[string]*framework.Recorder {
	GinkgoHelper()
	out := map[string]*framework.Recorder{}
	for _, m := range s.w.f.Members {
		dyn, err := dynamic.NewForConfig(m.Config)
		Expect(err).NotTo(HaveOccurred())
		r, err := framework.Record(ctx, dyn, s.w.inMembers[m.Name], deploymentRef(s.ns, s.name), m.Name)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(r.Stop)
		out[m.Name] = r
	}
	return out
}

// stagesStarted waits for the Events that say each of the three stages
// started once at revision.
func (s stagedRollout) stagesStarted(revision int64) {
	GinkgoHelper()
	var want []string
	for _, stage := range []string{"canary", "second", "last"} {
		want = append(want, fmt.Sprintf("revision %d: stage '%s' started (1 of 1 clusters released)", revision, stage))
	}
	Eventually(func(g Gomega) []string {
		return rolloutEvents(g, s.w.hub, s.ns, s.name, rolloutsv1alpha1.EventReasonStageStarted)
	}).Should(ConsistOf(want))
}

// gitOpsReads is what Flux and Argo CD make of obj as the hub stores it now:
// "<kstatus>/<Argo CD health>" ("Current/Suspended"), and Argo CD's
// message, which must say something.
func gitOpsReads(g Gomega, hub client.Client, obj client.Object) (string, string) {
	u := storedOnHub(g, hub, obj)
	gvk := u.GroupVersionKind()
	reads, message, err := argocd.Reads(u, gvk)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(message).NotTo(BeEmpty(), "%s %s: Argo CD's message", gvk.Kind, obj.GetName())
	return reads, message
}

// storedOnHub is obj as the hub stores it now, whatever its Go type.
func storedOnHub(g Gomega, hub client.Client, obj client.Object) *unstructured.Unstructured {
	gvk, err := apiutil.GVKForObject(obj, hub.Scheme())
	g.Expect(err).NotTo(HaveOccurred())
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(obj), u)).To(Succeed())
	return u
}

// readsAs waits until GitOps tools read obj as want ("Current/Suspended"),
// with a message that contains each of msgs.
func readsAs(hub client.Client, obj client.Object, want string, msgs ...string) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		reads, message := gitOpsReads(g, hub, obj)
		g.Expect(reads).To(Equal(want), message)
		for _, m := range msgs {
			g.Expect(message).To(ContainSubstring(m))
		}
	}, "1m").Should(Succeed())
}

// rolloutRef and bindingRef name the Rollout and the ResourceBinding of
// the Deployment ns/name.
func rolloutRef(ns, name string) client.Object {
	return &rolloutsv1alpha1.Rollout{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
}

func bindingRef(ns, name string) client.Object {
	return &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-deployment"}}
}
