package e2e

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

var _ = Describe("member-owned fields (Karmada's retention)", func() {
	const ns, name = "retention", "migrate"

	It("updates a propagated Job, keeping the selector and labels each member generated", func() {
		namespace(ns)
		Expect(apply(`
apiVersion: batch/v1
kind: Job
metadata: {name: %[2]s, namespace: %[1]s}
spec:
  parallelism: 1
  suspend: true
  template:
    metadata: {labels: {app: migrate}}
    spec: {restartPolicy: Never, containers: [{name: m, image: "migrate:1"}]}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: %[2]s, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: batch/v1, kind: Job, name: %[2]s}]
  placement: {clusterAffinity: {clusterNames: [member1, member2, member3]}}
`, ns, name)).To(Succeed())
		memberJob := func(m string) *batchv1.Job {
			j := &batchv1.Job{}
			if err := members[m].Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, j); err != nil {
				return nil
			}
			return j
		}
		selectors := map[string]string{}
		for m := range members {
			Eventually(func() *batchv1.Job { return memberJob(m) }).ShouldNot(BeNil(), m)
			selectors[m] = memberJob(m).Spec.Selector.MatchLabels["batch.kubernetes.io/controller-uid"]
			Expect(selectors[m]).NotTo(BeEmpty(), "%s generated a selector", m)
		}

		By("changing the Job's parallelism on the hub")
		Expect(hubClient.Patch(ctx, &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}},
			client.RawPatch(types.MergePatchType, []byte(`{"spec": {"parallelism": 2}}`)))).To(Succeed())
		for m := range members {
			Eventually(func() *int32 {
				if j := memberJob(m); j != nil {
					return j.Spec.Parallelism
				}
				return nil
			}).Should(Equal(ptr.To[int32](2)), m)
			Expect(memberJob(m).Spec.Selector.MatchLabels["batch.kubernetes.io/controller-uid"]).To(Equal(selectors[m]), m)
			Eventually(func() *metav1.Condition { return applied(m, "Job", ns, name) }).Should(
				HaveField("Status", metav1.ConditionTrue), m)
		}
	})
})
