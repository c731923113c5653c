package e2e

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/federator-dev/federator/test/framework"
)

var _ = Describe("soft deletion under a lowered --max-deletion-delay", func() {
	It("keeps the due time a countdown had when it started; only countdowns started after the restart get the lower maximum", func() {
		f, hub := separateFleet(1, false)
		session := runController(f)
		member := joinMembers(f, hub)["member1"]
		const ns = "softdel-cap"
		const delay = 30 * time.Second
		Expect(hub.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
		dyn, err := dynamic.NewForConfig(f.Members[0].Config)
		Expect(err).NotTo(HaveOccurred())
		recorders := map[string]*framework.Recorder{}
		for _, name := range []string{"early", "late"} {
			d := framework.NewDeployment(ns, name, "nginx:1.25")
			d.Annotations = map[string]string{delayKey: delay.String()}
			Expect(framework.Apply(ctx, hub, d, fieldOwner)).To(Succeed())
			Expect(framework.Apply(ctx, hub, framework.NewDeploymentPolicy(ns, name, name, "member1"), fieldOwner)).To(Succeed())
			Eventually(func() error {
				return member.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &appsv1.Deployment{})
			}).Should(Succeed())
			r, err := framework.Record(ctx, dyn, member, deploymentRef(ns, name), "member1")
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(r.Stop)
			recorders[name] = r
		}
		memberValue := func(name, key string) string {
			got := &appsv1.Deployment{}
			_ = member.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, got)
			return got.Annotations[key]
		}

		By("deleting one template: its countdown starts under the 30-day default maximum")
		Expect(hub.Delete(ctx, deploymentRef(ns, "early"))).To(Succeed())
		Eventually(func() string { return memberValue("early", timestampKey) }).ShouldNot(BeEmpty())
		at, err := time.Parse(time.RFC3339, memberValue("early", timestampKey))
		Expect(err).NotTo(HaveOccurred())
		due := at.Add(delay)

		By("restarting the controller with --max-deletion-delay=2s")
		session.Kill().Wait("10s")
		runController(f, "--max-deletion-delay=2s")
		notDeletedBefore(recorders["early"], due)
		deletedOnTime(recorders["early"], due)

		By("a countdown that starts after the restart gets the lower maximum")
		Eventually(func() string { return memberValue("late", delayKey) }, "30s").Should(Equal("2s"),
			"the member copy carries the capped delay")
		Expect(hub.Delete(ctx, deploymentRef(ns, "late"))).To(Succeed())
		Eventually(func() string { return memberValue("late", timestampKey) }).ShouldNot(BeEmpty())
		lateAt, err := time.Parse(time.RFC3339, memberValue("late", timestampKey))
		Expect(err).NotTo(HaveOccurred())
		Expect(deletedOnTime(recorders["late"], lateAt.Add(2*time.Second))).To(BeTemporally("<", lateAt.Add(delay)),
			"deleted after the lower maximum, not the 30s the template asked for")
	})
})
