package e2e

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/federator-dev/federator/test/framework"
)

// A Job placed on every member runs to completion in each, and the hub's
// Job reports it as Karmada aggregates a Job's status: counts summed,
// Complete once every member's Job is.
var _ = Describe("a Job in members that run workloads", func() {
	It("completes in each of three members, and the hub Job sums their succeeded pods and is Complete", func() {
		w := useWorkloadFleet()
		const ns, name = "default", "tally"
		job := &batchv1.Job{
			TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: batchv1.JobSpec{Completions: ptr.To[int32](2), Parallelism: ptr.To[int32](2),
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
					Containers: []corev1.Container{{Name: "count", Image: "busybox:1.36"}}}}},
		}
		Expect(framework.Apply(ctx, w.hub, job, fieldOwner)).To(Succeed())
		DeferCleanup(func() {
			_ = w.hub.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground))
		})
		w.placeOnEveryMember("batch/v1", "Job", ns, name)

		for m, c := range w.inMembers {
			Eventually(func(g Gomega) {
				j := &batchv1.Job{}
				g.Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, j)).To(Succeed())
				g.Expect(j.Status.Succeeded).To(BeEquivalentTo(2), m)
				g.Expect(jobCondition(j.Status.Conditions, batchv1.JobComplete)).To(Equal(corev1.ConditionTrue), m)
			}, "2m").Should(Succeed())
		}

		By("the hub Job counts every member's succeeded pods and is Complete")
		Eventually(func(g Gomega) {
			j := &batchv1.Job{}
			g.Expect(w.hub.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, j)).To(Succeed())
			g.Expect(j.Status.Succeeded).To(BeEquivalentTo(6))
			g.Expect(j.Status.Active).To(BeZero())
			g.Expect(jobCondition(j.Status.Conditions, batchv1.JobComplete)).To(Equal(corev1.ConditionTrue))
			g.Expect(j.Status.CompletionTime).NotTo(BeNil())
			g.Expect(j.Status.StartTime).NotTo(BeNil())
		}).Should(Succeed())
	})
})

func jobCondition(conditions []batchv1.JobCondition, t batchv1.JobConditionType) corev1.ConditionStatus {
	for _, c := range conditions {
		if c.Type == t {
			return c.Status
		}
	}
	return corev1.ConditionUnknown
}
