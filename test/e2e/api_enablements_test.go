package e2e

import (
	"fmt"
	"slices"
	"strings"
	"time"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	"github.com/karmada-io/karmada/pkg/util/names"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/federator-dev/federator/pkg/yamldocs"
	"github.com/federator-dev/federator/test/framework"
)

// Karmada's Cluster status lists the APIs each member serves
// (status.apiEnablements, condition CompleteAPIEnablements), and its
// scheduler places a template only where its kind is served. CRDs installed
// here stay installed after the spec: the controllers keep watching a kind
// once they propagated it, and a kind removed from under a watch only
// leaves it retrying for the rest of the suite.
var _ = Describe("API enablements", func() {
	// crd is a namespaced CustomResourceDefinition of kind in group, v1,
	// that keeps whatever its objects hold.
	crd := func(group, kind string) string {
		plural := strings.ToLower(kind) + "s"
		return fmt.Sprintf(`
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: %[3]s.%[1]s}
spec:
  group: %[1]s
  names: {kind: %[2]s, listKind: %[2]sList, plural: %[3]s, singular: %[4]s}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`, group, kind, plural, strings.ToLower(kind))
	}
	installIn := func(c client.Client, yaml string) {
		GinkgoHelper()
		Expect(yamldocs.Apply(ctx, c, []byte(yaml), client.FieldOwner(fieldOwner), client.ForceOwnership)).To(Succeed())
	}
	customResource := func(group, kind, ns, name, size string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(schema.GroupVersionKind{Group: group, Version: "v1", Kind: kind})
		u.SetNamespace(ns)
		u.SetName(name)
		u.Object["spec"] = map[string]any{"size": size}
		return u
	}
	// createOnHub creates obj once the hub serves its kind (its CRD was
	// just applied there).
	createOnHub := func(obj *unstructured.Unstructured) {
		GinkgoHelper()
		Eventually(func() error { return hubClient.Create(ctx, obj.DeepCopy()) }).Should(Succeed())
	}
	size := framework.JSONPath("{.spec.size}")
	cluster := func(name string) *clusterv1alpha1.Cluster {
		GinkgoHelper()
		c := &clusterv1alpha1.Cluster{}
		Expect(hubClient.Get(ctx, client.ObjectKey{Name: name}, c)).To(Succeed())
		return c
	}
	// serves is what each member's Cluster says of gvk: Karmada's
	// APIEnabled, APIDisabled or APIUnknown.
	serves := func(gvk schema.GroupVersionKind) map[string]clusterv1alpha1.APIEnablementStatus {
		out := map[string]clusterv1alpha1.APIEnablementStatus{}
		for m := range members {
			out[m] = cluster(m).APIEnablement(gvk)
		}
		return out
	}
	scheduled := func(ns, kind, name string) *metav1.Condition {
		rb := &workv1alpha2.ResourceBinding{}
		if err := hubClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: names.GenerateBindingName(kind, name)}, rb); err != nil {
			return nil
		}
		return meta.FindStatusCondition(rb.Status.Conditions, workv1alpha2.Scheduled)
	}
	workRef := func(member, kind, ns, name string) *workv1alpha1.Work {
		key := framework.WorkKey(member, kind, ns, name)
		return &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
	}

	It("lists what each member serves, and a CRD installed in one member within a few probes", func() {
		deployments := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
		Eventually(func() map[string]clusterv1alpha1.APIEnablementStatus { return serves(deployments) }).Should(
			Equal(map[string]clusterv1alpha1.APIEnablementStatus{"member1": "APIEnabled", "member2": "APIEnabled", "member3": "APIEnabled"}))
		for m := range members {
			c := cluster(m)
			Expect(meta.FindStatusCondition(c.Status.Conditions, "CompleteAPIEnablements")).To(And(
				HaveField("Status", metav1.ConditionTrue), HaveField("Reason", "Complete"),
				HaveField("Message", "collected complete APIEnablements from the cluster")), m)
			Expect(c.Status.APIEnablements).To(ContainElement(clusterv1alpha1.APIEnablement{GroupVersion: "apps/v1",
				Resources: []clusterv1alpha1.APIResource{
					{Name: "controllerrevisions", Kind: "ControllerRevision"}, {Name: "daemonsets", Kind: "DaemonSet"},
					{Name: "deployments", Kind: "Deployment"}, {Name: "replicasets", Kind: "ReplicaSet"},
					{Name: "statefulsets", Kind: "StatefulSet"}}}), m)
			// Karmada's order: group versions sorted as strings, so the
			// core "v1" comes after "storage.k8s.io/v1".
			var order []string
			for _, e := range c.Status.APIEnablements {
				order = append(order, e.GroupVersion)
			}
			Expect(slices.IsSorted(order)).To(BeTrue(), "%s: %v", m, order)
			Expect(order[len(order)-1]).To(Equal("v1"), m)
		}

		By("installing a CRD directly in member2")
		const group = "a.e2e.federator.dev"
		gizmos := schema.GroupVersionKind{Group: group, Version: "v1", Kind: "Gizmo"}
		installed := time.Now()
		installIn(members["member2"], crd(group, "Gizmo"))
		Eventually(func() map[string]clusterv1alpha1.APIEnablementStatus { return serves(gizmos) }, "10s").Should(Equal(
			map[string]clusterv1alpha1.APIEnablementStatus{"member1": "APIDisabled", "member2": "APIEnabled", "member3": "APIDisabled"}))
		AddReportEntry("a CRD installed in member2 listed in its Cluster status after", time.Since(installed).Round(10*time.Millisecond).String())
		Expect(cluster("member2").Status.APIEnablements).To(ContainElement(clusterv1alpha1.APIEnablement{
			GroupVersion: group + "/v1", Resources: []clusterv1alpha1.APIResource{{Name: "gizmos", Kind: "Gizmo"}}}))

		By("removing it again")
		Expect(members["member2"].Delete(ctx, &apiextensionsv1.CustomResourceDefinition{
			ObjectMeta: metav1.ObjectMeta{Name: "gizmos." + group}})).To(Succeed())
		Eventually(func() clusterv1alpha1.APIEnablementStatus { return cluster("member2").APIEnablement(gizmos) }, "10s").Should(
			Equal(clusterv1alpha1.APIDisabled))
	})

	It("propagates a CRD and its custom resource with one ClusterPropagationPolicy: the resource follows the CRD", func() {
		const group, kind, plural, ns, name = "b.e2e.federator.dev", "Sprocket", "sprockets", "api-enablements-crd", "first"
		namespace(ns)
		installIn(hubClient, crd(group, kind))
		createOnHub(customResource(group, kind, ns, name, "large"))
		DeferCleanup(func() {
			Expect(client.IgnoreNotFound(hubClient.Delete(ctx, customResource(group, kind, ns, name, "")))).To(Succeed())
		})
		// Every version of the resource's Works from before they exist:
		// a resource sent ahead of its CRD would show as a failed apply.
		works := map[string]*framework.Recorder{}
		for m := range members {
			works[m] = recordHub(workRef(m, kind, ns, name))
		}
		const policy = "api-enablements-crd"
		DeferCleanup(func() {
			Expect(client.IgnoreNotFound(hubClient.Delete(ctx, &policyv1alpha1.ClusterPropagationPolicy{
				ObjectMeta: metav1.ObjectMeta{Name: policy}}))).To(Succeed())
		})
		start := time.Now()
		mustApply(`
apiVersion: policy.karmada.io/v1alpha1
kind: ClusterPropagationPolicy
metadata: {name: %[1]s}
spec:
  resourceSelectors:
  - {apiVersion: apiextensions.k8s.io/v1, kind: CustomResourceDefinition, name: %[3]s.%[2]s}
  - {apiVersion: %[2]s/v1, kind: %[4]s, namespace: %[5]s, name: %[6]s}
`, policy, group, plural, kind, ns, name)

		// When each member first held the CRD and the resource, polled.
		crdSeen, crSeen := map[string]time.Duration{}, map[string]time.Duration{}
		definition := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: plural + "." + group}}
		Eventually(func() map[string]string {
			sizes := map[string]string{}
			for m, c := range members {
				if _, seen := crdSeen[m]; !seen && c.Get(ctx, client.ObjectKeyFromObject(definition), definition.DeepCopy()) == nil {
					crdSeen[m] = time.Since(start)
				}
				sizes[m] = env.MemberValue(ctx, m, customResource(group, kind, ns, name, ""), size)
				if _, seen := crSeen[m]; !seen && sizes[m] == "large" {
					crSeen[m] = time.Since(start)
				}
			}
			return sizes
		}).Should(Equal(everywhere("large")))
		for _, m := range env.MemberNames() {
			AddReportEntry(m+": after the policy, the CRD arrived / the resource arrived", fmt.Sprintf("%s / %s",
				crdSeen[m].Round(100*time.Millisecond), crSeen[m].Round(100*time.Millisecond)))
			Expect(crSeen[m]).To(BeNumerically(">=", crdSeen[m]), m)
			Expect(stored(works[m], framework.JSONPath(`{.status.conditions[?(@.type=="Applied")].reason}`))).NotTo(
				ContainElement("AppliedFailed"), "%s was sent the resource before it served the kind", m)
		}
		Expect(scheduled(ns, kind, name)).To(And(HaveField("Status", metav1.ConditionTrue),
			HaveField("Message", "Binding has been scheduled successfully.")))
	})

	It("places a template only on members that serve its kind, says which do not, and follows when one starts serving it", func() {
		const ns, policy = "api-enablements-placement", "api-enablements-placement"
		const group, kind, name = "c.e2e.federator.dev", "Doohickey", "some-members"
		const nowhereGroup, nowhereKind, nowhereName = "d.e2e.federator.dev", "Thingamajig", "no-member"
		doohickeys := schema.GroupVersionKind{Group: group, Version: "v1", Kind: kind}
		namespace(ns)
		installIn(hubClient, crd(group, kind))
		installIn(hubClient, crd(nowhereGroup, nowhereKind))
		installIn(members["member1"], crd(group, kind))
		installIn(members["member2"], crd(group, kind))
		Eventually(func() map[string]clusterv1alpha1.APIEnablementStatus { return serves(doohickeys) }).Should(Equal(
			map[string]clusterv1alpha1.APIEnablementStatus{"member1": "APIEnabled", "member2": "APIEnabled", "member3": "APIDisabled"}))
		member3Work := recordHub(workRef("member3", kind, ns, name))
		nowhereWorks := map[string]*framework.Recorder{}
		for m := range members {
			nowhereWorks[m] = recordHub(workRef(m, nowhereKind, ns, nowhereName))
		}
		createOnHub(customResource(group, kind, ns, name, "small"))
		createOnHub(customResource(nowhereGroup, nowhereKind, ns, nowhereName, "tiny"))
		DeferCleanup(func() {
			Expect(client.IgnoreNotFound(hubClient.Delete(ctx, customResource(group, kind, ns, name, "")))).To(Succeed())
			Expect(client.IgnoreNotFound(hubClient.Delete(ctx, customResource(nowhereGroup, nowhereKind, ns, nowhereName, "")))).To(Succeed())
		})
		mustApply(`
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: %[1]s, namespace: %[2]s}
spec:
  resourceSelectors:
  - {apiVersion: %[3]s/v1, kind: %[4]s}
  - {apiVersion: %[5]s/v1, kind: %[6]s}
`, policy, ns, group, kind, nowhereGroup, nowhereKind)

		Eventually(func() []string {
			return []string{env.MemberValue(ctx, "member1", customResource(group, kind, ns, name, ""), size),
				env.MemberValue(ctx, "member2", customResource(group, kind, ns, name, ""), size)}
		}).Should(Equal([]string{"small", "small"}))
		Eventually(func() *metav1.Condition { return scheduled(ns, kind, name) }).Should(And(Not(BeNil()),
			HaveField("Status", metav1.ConditionTrue), HaveField("Reason", "Success"),
			HaveField("Message", "Binding has been scheduled successfully. 1 cluster(s) did not have the API resource: "+
				"c.e2e.federator.dev/v1, kind=Doohickey is not served by member3; each is placed as soon as it serves it.")))

		By("a kind no member serves is placed nowhere, in Karmada's words")
		Eventually(func() *metav1.Condition { return scheduled(ns, nowhereKind, nowhereName) }).Should(And(Not(BeNil()),
			HaveField("Status", metav1.ConditionFalse), HaveField("Reason", "NoClusterFit"),
			HaveField("Message", "0/3 clusters are available: 3 cluster(s) did not have the API resource. "+
				"d.e2e.federator.dev/v1, kind=Thingamajig is not served by member1, member2, member3; each is placed as soon as it serves it.")))
		for m, r := range nowhereWorks {
			Expect(stored(r, framework.JSONPath("{.metadata.name}"))).To(BeEmpty(), "%s got a Work for a kind it does not serve", m)
		}
		Expect(stored(member3Work, framework.JSONPath("{.metadata.name}"))).To(BeEmpty(), "member3 got a Work for a kind it does not serve")

		By("installing the CRD in member3")
		installed := time.Now()
		installIn(members["member3"], crd(group, kind))
		Eventually(func() string { return env.MemberValue(ctx, "member3", customResource(group, kind, ns, name, ""), size) }).Should(Equal("small"))
		AddReportEntry("member3 received the resource after its CRD was installed, in", time.Since(installed).Round(100*time.Millisecond).String())
		Eventually(func() *metav1.Condition { return scheduled(ns, kind, name) }).Should(And(Not(BeNil()),
			HaveField("Status", metav1.ConditionTrue), HaveField("Message", "Binding has been scheduled successfully.")))
	})
})
