package e2e

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

var _ = Describe("placement", func() {
	// replicas is each member's spec.replicas of a Deployment, -1 when absent.
	replicas := func(ns, name string) map[string]int32 {
		out := map[string]int32{}
		for m, c := range members {
			d := &appsv1.Deployment{}
			switch err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, d); {
			case apierrors.IsNotFound(err):
				out[m] = -1
			case err != nil:
				out[m] = -2
			default:
				out[m] = *d.Spec.Replicas
			}
		}
		return out
	}

	It("divides replicas by static weight, and a cluster dropped from placement loses its object", Label("smoke"), func() {
		const ns, name = "placement", "web"
		namespace(ns)
		mustApply(`
apiVersion: apps/v1
kind: Deployment
metadata: {name: %[2]s, namespace: %[1]s}
spec:
  replicas: 8
  selector: {matchLabels: {app: %[2]s}}
  template:
    metadata: {labels: {app: %[2]s}}
    spec: {containers: [{name: app, image: nginx:1.25}]}
`, ns, name)
		policy := `
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: %[2]s, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: %[2]s}]
  placement:
    clusterAffinity: {clusterNames: [%[3]s]}
    replicaScheduling:
      replicaSchedulingType: Divided
      replicaDivisionPreference: Weighted
      weightPreference:
        staticWeightList:
        - targetCluster: {clusterNames: [member1]}
          weight: 2
        - targetCluster: {clusterNames: [member2, member3]}
          weight: 1
`
		mustApply(policy, ns, name, "member1, member2, member3")
		Eventually(func() map[string]int32 { return replicas(ns, name) }).Should(Equal(
			map[string]int32{"member1": 4, "member2": 2, "member3": 2}))

		By("dropping member3 from the placement")
		mustApply(policy, ns, name, "member1, member2")
		Eventually(func() map[string]int32 { return replicas(ns, name) }).Should(Equal(
			map[string]int32{"member1": 5, "member2": 3, "member3": -1}))
		Eventually(func() string { return workImage("member3", ns, name) }).Should(BeEmpty(), "its Work is deleted")
	})
})
