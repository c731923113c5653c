package e2e

import (
	"fmt"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	"github.com/karmada-io/karmada/pkg/util/names"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gatingv1alpha1 "github.com/federator-dev/federator/apis/gating/v1alpha1"
	"github.com/federator-dev/federator/apis/policy"
	workkeys "github.com/federator-dev/federator/apis/work"
	"github.com/federator-dev/federator/pkg/membership"
	"github.com/federator-dev/federator/pkg/yamldocs"
	"github.com/federator-dev/federator/test/framework"
)

// An agent's hub identity lives in the member, at the edge
// (docs/pull-mode.md, "What an agent may write"): with it one can write the
// cluster's status, never what the hub connects with or what places or
// holds the cluster (config/install/admission/cluster-agent.yaml); and the
// hub never reaches a cluster with credentials made for another.
var _ = Describe("an agent's hub identity", func() {
	It("cannot change what the hub connects with, places by or holds by, and the hub dials no cluster with another's credentials", func() {
		f, hub := separateFleet(1, false)
		member1 := f.Members[0]
		runController(f)
		Expect(membership.Register(ctx, hub, member1.Name, member1.Config)).To(Succeed())

		By("federator join --mode pull gives edge's agent a ServiceAccount with rights over its own Cluster")
		token, err := membership.RegisterPull(ctx, hub, "edge")
		Expect(err).NotTo(HaveOccurred())
		asAgent, err := client.New(membership.AgentConfig(f.Hub.Config, token), client.Options{Scheme: policy.NewScheme()})
		Expect(err).NotTo(HaveOccurred())
		Expect(hub.Patch(ctx, &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "edge"}}, client.RawPatch(types.MergePatchType,
			[]byte(`{"metadata":{"labels":{"stage":"edge"},"annotations":{"`+gatingv1alpha1.GatesAnnotation+`":"shop/approval"}}}`)))).To(Succeed(),
			"an administrator labels the cluster and lists a gate on it")

		By("the agent completes its registration and writes its status")
		Expect(asAgent.Patch(ctx, &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "edge"}}, client.RawPatch(types.MergePatchType,
			[]byte(`{"spec":{"apiEndpoint":"https://edge.example:6443","id":"uid-of-edge"}}`)))).To(Succeed(),
			"the endpoint while it has none, and the cluster ID")
		Expect(asAgent.Status().Patch(ctx, &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "edge"}}, client.RawPatch(types.MergePatchType,
			[]byte(`{"status":{"kubernetesVersion":"v1.34.1"}}`)))).To(Succeed())
		registered := &clusterv1alpha1.Cluster{}
		Expect(hub.Get(ctx, client.ObjectKey{Name: "edge"}, registered)).To(Succeed())
		Expect(registered.Status.KubernetesVersion).To(Equal("v1.34.1"))

		By("every write that would change what the hub connects with, places by or holds by is refused")
		for _, c := range []struct{ patch, field string }{
			{`{"spec":{"syncMode":"Push"}}`, "spec.syncMode: Forbidden"},
			{`{"spec":{"secretRef":{"namespace":"karmada-cluster","name":"member1"}}}`, "spec.secretRef: Forbidden"},
			{`{"spec":{"impersonatorSecretRef":{"namespace":"karmada-cluster","name":"member1-impersonator"}}}`, "spec.impersonatorSecretRef: Forbidden"},
			{`{"spec":{"apiEndpoint":"` + member1.APIEndpoint() + `"}}`, "spec.apiEndpoint: Forbidden"},
			{`{"spec":{"insecureSkipTLSVerification":true}}`, "spec.insecureSkipTLSVerification: Forbidden"},
			{`{"spec":{"proxyURL":"http://proxy.example:3128"}}`, "spec.proxyURL: Forbidden"},
			{`{"spec":{"taints":[{"key":"k","effect":"NoSchedule"}]}}`, "spec.taints: Forbidden"},
			{`{"spec":{"region":"eu"}}`, "spec.region: Forbidden"},
			{`{"metadata":{"labels":{"stage":"canary"}}}`, "metadata.labels: Forbidden"},
			{`{"metadata":{"annotations":{"` + gatingv1alpha1.GatesAnnotation + `":null}}}`, "metadata.annotations[" + gatingv1alpha1.GatesAnnotation + "]: Forbidden"},
			{`{"metadata":{"annotations":{"suspended.propagation.federator.dev/edge":null,"propagation.federator.dev/suspended":"x"}}}`,
				"metadata.annotations[propagation.federator.dev/suspended]: Forbidden"},
		} {
			err := asAgent.Patch(ctx, &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "edge"}},
				client.RawPatch(types.MergePatchType, []byte(c.patch)))
			Expect(err).To(HaveOccurred(), "the agent wrote %s", c.patch)
			Expect(err.Error()).To(ContainSubstring(c.field), "the refusal of %s names the field", c.patch)
			Expect(err.Error()).To(ContainSubstring("an administrator of the hub changes it (kubectl edit cluster edge)"),
				"the refusal of %s says who may", c.patch)
		}
		now := &clusterv1alpha1.Cluster{}
		Expect(hub.Get(ctx, client.ObjectKey{Name: "edge"}, now)).To(Succeed())
		Expect(now.Spec).To(Equal(registered.Spec), "the Cluster's spec is as registered")
		Expect(now.Labels).To(Equal(registered.Labels))
		Expect(now.Annotations).To(Equal(registered.Annotations))

		By("Karmada's karmada-agent identity registers its own cluster in Pull mode only, and no other")
		// karmadactl register's certificate: user system:karmada:agent:<cluster>,
		// group system:karmada:agents; RBAC as generous as Karmada's.
		const karmadaAgentRole = "e2e-karmada-agent"
		Expect(hub.Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: karmadaAgentRole},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{clusterv1alpha1.GroupName}, Resources: []string{"clusters"},
				Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}}}})).To(Succeed())
		Expect(hub.Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: karmadaAgentRole},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: karmadaAgentRole},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "system:karmada:agents"}}})).To(Succeed())
		asKarmadaAgent := func(cluster string) client.Client {
			cfg := rest.CopyConfig(f.Hub.Config)
			cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:karmada:agent:" + cluster, Groups: []string{"system:karmada:agents"}}
			c, err := client.New(cfg, client.Options{Scheme: policy.NewScheme()})
			Expect(err).NotTo(HaveOccurred())
			return c
		}
		edge2 := asKarmadaAgent("edge2")
		pullCluster := func(name string, mutate func(*clusterv1alpha1.Cluster)) *clusterv1alpha1.Cluster {
			c := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: clusterv1alpha1.ClusterSpec{
				SyncMode: clusterv1alpha1.Pull, APIEndpoint: "https://" + name + ".example:6443",
				SecretRef: &clusterv1alpha1.LocalSecretReference{Namespace: membership.ClusterNamespace, Name: name}}}
			if mutate != nil {
				mutate(c)
			}
			return c
		}
		for _, c := range []struct {
			what    string
			cluster *clusterv1alpha1.Cluster
			refusal string
		}{
			{"in Push mode", pullCluster("edge2", func(c *clusterv1alpha1.Cluster) { c.Spec.SyncMode = clusterv1alpha1.Push }),
				"spec.syncMode: Forbidden: an agent registers its cluster in Pull mode only"},
			{"with member1's credentials", pullCluster("edge2", func(c *clusterv1alpha1.Cluster) { c.Spec.SecretRef.Name = "member1" }),
				"spec.secretRef: Forbidden: an agent registers its cluster with its own credential Secrets only (karmada-cluster/edge2"},
			{"labelled into a placement", pullCluster("edge2", func(c *clusterv1alpha1.Cluster) { c.Labels = map[string]string{"stage": "edge"} }),
				"metadata.labels: Forbidden"},
			{"named after another cluster", pullCluster("edge3", nil), "metadata.name: Forbidden: cluster edge3 is not this agent's"},
		} {
			err := edge2.Create(ctx, c.cluster)
			Expect(err).To(HaveOccurred(), "karmada-agent's identity created its Cluster %s", c.what)
			Expect(err.Error()).To(ContainSubstring(c.refusal), "the refusal of a Cluster %s", c.what)
		}
		Expect(edge2.Create(ctx, pullCluster("edge2", func(c *clusterv1alpha1.Cluster) { c.Spec.Region = "eu" }))).To(Succeed(),
			"as karmada-agent v1.16 registers it")
		Expect(edge2.Delete(ctx, &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: member1.Name}})).To(
			MatchError(ContainSubstring("cluster member1 is not this agent's")), "it deletes another cluster")
		Expect(hub.Get(ctx, client.ObjectKey{Name: member1.Name}, &clusterv1alpha1.Cluster{})).To(Succeed())

		By("a Cluster pointed at member1's credentials, by whoever may write it, is never dialled with them")
		_, recorder := recordPullWeb(member1, memberClient(member1))
		Expect(hub.Patch(ctx, &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "edge"}}, client.RawPatch(types.MergePatchType,
			[]byte(fmt.Sprintf(`{"spec":{"syncMode":"Push","apiEndpoint":%q,"secretRef":{"namespace":"karmada-cluster","name":%q}}}`,
				member1.APIEndpoint(), member1.Name))))).To(Succeed())
		Expect(yamldocs.Apply(ctx, hub, []byte(`
apiVersion: v1
kind: Namespace
metadata: {name: pull}
---
`+pullWeb("nginx:1.25", "")+`
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: pull}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement: {clusterAffinity: {clusterNames: [edge]}}
`), client.FieldOwner("e2e"))).To(Succeed())
		Eventually(func() *metav1.Condition { return clusterReady(hub, "edge") }, "60s").Should(
			And(Not(BeNil()), HaveField("Status", metav1.ConditionFalse)), "the hub does not reach edge with member1's credentials")
		Eventually(func(g Gomega) {
			rb := &workv1alpha2.ResourceBinding{}
			g.Expect(hub.Get(ctx, client.ObjectKey{Namespace: "pull", Name: names.GenerateBindingName("Deployment", "web")}, rb)).To(Succeed())
			scheduled := meta.FindStatusCondition(rb.Status.Conditions, workkeys.ConditionScheduled)
			g.Expect(scheduled).NotTo(BeNil())
			g.Expect(scheduled.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(scheduled.Message).To(ContainSubstring("edge"), "the binding says edge is not placed")
		}, "60s").Should(Succeed())
		Expect(workOn(hub, "edge", "pull", "web")).To(BeNil(), "no Work for edge")
		Expect(stored(recorder, framework.Image)).To(BeEmpty(), "member1 stored edge's Deployment: the hub reached it with member1's token")
		Expect(apierrors.IsNotFound(memberClient(member1).Get(ctx, client.ObjectKeyFromObject(pullWebRef()), pullWebRef()))).To(BeTrue())
	})
})
