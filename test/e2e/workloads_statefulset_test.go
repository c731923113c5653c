package e2e

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/federator-dev/federator/test/framework"
)

// A StatefulSet placed on every member becomes ready in each, and the hub's
// StatefulSet sums their replicas and observes its generation once every
// member runs it.
var _ = Describe("a StatefulSet in members that run workloads", func() {
	It("is ready in each of three members, and the hub StatefulSet sums them and observes its generation", func() {
		w := useWorkloadFleet()
		const ns, name = "default", "ledger"
		labels := map[string]string{"app": name}
		set := &appsv1.StatefulSet{
			TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSet"},
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](2), Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "db", Image: "postgres:17"}}}}},
		}
		Expect(framework.Apply(ctx, w.hub, set, fieldOwner)).To(Succeed())
		DeferCleanup(func() { _ = w.hub.Delete(ctx, set) })
		w.placeOnEveryMember("apps/v1", "StatefulSet", ns, name)

		for m, c := range w.inMembers {
			Eventually(func(g Gomega) {
				s := &appsv1.StatefulSet{}
				g.Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, s)).To(Succeed())
				g.Expect(s.Status.ReadyReplicas).To(BeEquivalentTo(2), m)
			}, "2m").Should(Succeed())
		}

		By("the hub StatefulSet's status is the members' sum, at its generation")
		Eventually(func(g Gomega) appsv1.StatefulSetStatus {
			s := &appsv1.StatefulSet{}
			g.Expect(w.hub.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, s)).To(Succeed())
			g.Expect(s.Status.ObservedGeneration).To(Equal(s.Generation))
			return appsv1.StatefulSetStatus{Replicas: s.Status.Replicas, ReadyReplicas: s.Status.ReadyReplicas,
				UpdatedReplicas: s.Status.UpdatedReplicas, AvailableReplicas: s.Status.AvailableReplicas}
		}).Should(Equal(appsv1.StatefulSetStatus{Replicas: 6, ReadyReplicas: 6, UpdatedReplicas: 6, AvailableReplicas: 6}))
	})
})
