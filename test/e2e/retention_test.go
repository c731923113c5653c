package e2e

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/federator-dev/federator/test/framework"
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

	// keptThroughUpdate runs update (a change of obj's template on the hub)
	// and waits until every member shows changed as want and its Work is
	// applied at its current generation. Every version of obj a member
	// stored from just before the update on has the value of kept the
	// member had then: a member-owned field never went missing or changed,
	// not even for one write.
	//
	// For the Service, the ServiceAccount and the PVC below, the member's
	// field would survive even without the retention: the dispatcher writes
	// with server-side apply, which leaves a field it does not own where it
	// is (and the Service registry carries allocated IPs and ports over).
	// These specs hold the promise whichever of the two keeps it; a plain
	// update without the retention (as Karmada's own write) fails the
	// ServiceAccount and PVC specs.
	keptThroughUpdate := func(obj client.Object, kind string, kept, changed framework.Field, want string, update func()) {
		GinkgoHelper()
		before := env.MemberValues(ctx, obj, kept)
		for m, v := range before {
			Expect(v).NotTo(Or(BeEmpty(), HavePrefix("error:")), "%s holds the member-owned field before the update", m)
		}
		recorders := recordEverywhere(obj)
		update()
		for m := range members {
			Eventually(func() string { return env.MemberValue(ctx, m, obj, changed) }).Should(Equal(want),
				"the hub's change reached %s", m)
			Eventually(func() error { return appliedCurrent(m, kind, ns, obj.GetName()) }).Should(Succeed(), m)
			Expect(stored(recorders[m], kept)).To(HaveEach(before[m]), "every version %s stored kept it", m)
			Expect(env.MemberValue(ctx, m, obj, kept)).To(Equal(before[m]), m)
		}
	}

	// policyFor applies a PropagationPolicy placing the template kind/name of
	// ns (core group) on every member.
	policyFor := func(kind, name string) {
		GinkgoHelper()
		mustApply(`
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: %[3]s, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: v1, kind: %[2]s, name: %[3]s}]
  placement: {clusterAffinity: {clusterNames: [member1, member2, member3]}}
`, ns, kind, name)
	}

	// The hub allocates a node port too and the template carries it (Karmada's
	// prune keeps it), so every member's Service has the hub's node port; the
	// cluster IPs are each member's own.
	It("updates a propagated NodePort Service, keeping each member's cluster IPs and node port", func() {
		const name = "web"
		service := `
apiVersion: v1
kind: Service
metadata: {name: %[2]s, namespace: %[1]s, labels: {tier: %[3]s}}
spec:
  type: NodePort
  selector: {app: web}
  ports: [{name: http, port: 80, targetPort: %[4]d}]
`
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		allocated := framework.JSONPath("{.spec.clusterIP} {.spec.clusterIPs[*]} {.spec.ports[0].nodePort}")
		namespace(ns)
		mustApply(service, ns, name, "front", 8080)
		policyFor("Service", name)
		for m := range members {
			Eventually(func() string { return env.MemberValue(ctx, m, svc, allocated) }).Should(
				MatchRegexp(`^\S+ \S+ \d+$`), "%s allocated a cluster IP and a node port", m)
		}

		By("changing the Service's label and target port on the hub")
		keptThroughUpdate(svc, "Service", allocated, framework.JSONPath("{.metadata.labels.tier} {.spec.ports[0].targetPort}"),
			"back 8443", func() { mustApply(service, ns, name, "back", 8443) })
	})

	It("updates a propagated ServiceAccount, keeping the secrets each member's controller listed", func() {
		const name = "builder"
		account := `
apiVersion: v1
kind: ServiceAccount
metadata: {name: %[2]s, namespace: %[1]s, labels: {tier: %[3]s}}
`
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		namespace(ns)
		mustApply(account, ns, name, "ci")
		policyFor("ServiceAccount", name)
		By("listing a token secret in each member's copy, as a member's token controller does")
		for m := range members {
			Eventually(func() error {
				got := &corev1.ServiceAccount{}
				if err := members[m].Get(ctx, client.ObjectKeyFromObject(sa), got); err != nil {
					return err
				}
				got.Secrets = []corev1.ObjectReference{{Name: name + "-token-" + m}}
				return members[m].Update(ctx, got)
			}).Should(Succeed(), m)
		}

		By("changing the ServiceAccount's label and image pull secrets on the hub")
		keptThroughUpdate(sa, "ServiceAccount", framework.JSONPath("{.secrets[*].name}"),
			framework.JSONPath("{.metadata.labels.tier} {.imagePullSecrets[*].name}"), "release registry",
			func() {
				mustApply(account+"imagePullSecrets: [{name: registry}]\n", ns, name, "release")
			})
	})

	It("updates a propagated PersistentVolumeClaim, keeping the volume each member bound it to", func() {
		const name = "data"
		claim := `
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: %[2]s, namespace: %[1]s, labels: {tier: %[3]s}}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
`
		pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		namespace(ns)
		mustApply(claim, ns, name, "db")
		policyFor("PersistentVolumeClaim", name)
		By("binding each member's copy to a volume, as a member's volume binder does")
		for m := range members {
			Eventually(func() error {
				got := &corev1.PersistentVolumeClaim{}
				if err := members[m].Get(ctx, client.ObjectKeyFromObject(pvc), got); err != nil {
					return err
				}
				got.Spec.VolumeName = "pv-" + m
				return members[m].Update(ctx, got)
			}).Should(Succeed(), m)
		}

		By("changing the claim's label on the hub")
		keptThroughUpdate(pvc, "PersistentVolumeClaim", framework.JSONPath("{.spec.volumeName}"),
			framework.JSONPath("{.metadata.labels.tier}"), "primary",
			func() { mustApply(claim, ns, name, "primary") })
	})
})
