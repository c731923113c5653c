package e2e

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/federator-dev/federator/test/framework"
)

// Karmada's namespace sync skips a hub namespace labelled
// namespace.karmada.io/skip-auto-propagation: "true"; people use it for
// hub-only namespaces, so it must never appear in a member, not even for
// a moment.
var _ = Describe("the namespace skip label", func() {
	It("keeps a labelled hub namespace out of every member, while an unlabelled one reaches them all", func() {
		const skipped, synced = "skip-auto-propagation", "auto-propagation"
		nameOf := framework.JSONPath("{.metadata.name}")
		skippedInMembers := recordEverywhere(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: skipped}})

		Expect(hubClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: skipped,
			Labels: map[string]string{"namespace.karmada.io/skip-auto-propagation": "true"}}})).To(Succeed())
		// Created after the labelled one, the unlabelled namespace reaching
		// every member shows namespace sync has been at work meanwhile.
		namespace(synced)
		Consistently(func() map[string][]string { return recordedSoFar(skippedInMembers, nameOf) }, "2s").Should(
			HaveEach(BeEmpty()))
		for m, r := range skippedInMembers {
			Expect(stored(r, nameOf)).To(BeEmpty(), "namespace %s was stored in %s", skipped, m)
			Expect(env.Work(ctx, m, "Namespace", "", skipped)).Error().To(HaveOccurred(), "no Work carries it to %s", m)
		}
	})
})
