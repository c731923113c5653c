package e2e

import (
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"

	gatingv1alpha1 "github.com/federator-dev/federator/apis/gating/v1alpha1"

	"github.com/federator-dev/federator/test/framework"
)

var _ = Describe("gates listed on a template", func() {
	// Two of the three members: the policy lists no gate, only the
	// template does.
	targets := []string{"member1", "member2"}
	gate := func(ns, name, state string) {
		GinkgoHelper()
		mustApply(`
apiVersion: gating.federator.dev/v1alpha1
kind: Gate
metadata: {name: %s, namespace: %s}
spec: {default: %s}
`, name, ns, state)
	}
	// request writes an open or close request on Gate ns/name, dropping
	// the opposite one, as `federator gate` does.
	request := func(ns, name, action string) {
		GinkgoHelper()
		opposite := map[string]string{"open": "close", "close": "open"}[action]
		Expect(framework.MergePatch(ctx, hubClient, &gatingv1alpha1.Gate{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}},
			fmt.Sprintf(`{"metadata": {"annotations": {"%s.gate.federator.dev/requestedAt": %q, "%s.gate.federator.dev/requestedAt": null}}}`,
				action, time.Now().UTC().Format(time.RFC3339), opposite))).To(Succeed())
	}
	// listGates sets (or, with "", removes) the template's
	// gating.federator.dev/gates annotation.
	listGates := func(obj client.Object, gates string) {
		GinkgoHelper()
		value := "null"
		if gates != "" {
			value = fmt.Sprintf("%q", gates)
		}
		Expect(framework.MergePatch(ctx, hubClient, obj,
			`{"metadata": {"annotations": {"gating.federator.dev/gates": `+value+`}}}`)).To(Succeed())
	}
	approved := func(ns, name string) *metav1.Condition {
		rb := &workv1alpha2.ResourceBinding{}
		if err := hubClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name + "-deployment"}, rb); err != nil {
			return nil
		}
		return meta.FindStatusCondition(rb.Status.Conditions, "Approved")
	}
	heldBy := func(kind, ns, name, message string) {
		GinkgoHelper()
		for _, m := range targets {
			Eventually(func() *metav1.Condition { return dispatching(m, kind, ns, name) }).Should(And(
				Not(BeNil()), HaveField("Reason", "GateClosed"), HaveField("Message", ContainSubstring(message))), m)
		}
	}
	images := func(ns, name string) map[string]string {
		out := map[string]string{}
		for _, m := range targets {
			out[m] = memberImage(m, ns, name)
		}
		return out
	}
	on := func(image string) map[string]string { return map[string]string{"member1": image, "member2": image} }

	It("hold the template's copies while its gate is closed, and release them when it opens or the template lists it no more", func() {
		const ns = "gate-template"
		namespace(ns)
		gate(ns, "approval", "closed")
		web := deploymentRef(ns, "web")
		recorders := map[string]*framework.Recorder{}
		for _, m := range targets {
			recorders[m] = recordMember(m, web)
		}
		deployment(ns, "web", "nginx:1.25")
		Expect(framework.Apply(ctx, hubClient, framework.NewDeploymentPolicy(ns, "web", "web", targets...), fieldOwner)).To(Succeed())
		Eventually(func() map[string]string { return images(ns, "web") }).Should(Equal(on("nginx:1.25")))

		By("listing a closed gate by its bare name on the template: held, named with the template")
		listGates(web.DeepCopy(), "approval")
		const closed = "waiting approval, gate 'gate-template/approval' is closed (Gate closed by default; listed by Deployment gate-template/web)"
		heldBy("Deployment", ns, "web", closed)
		Eventually(func() *metav1.Condition { return approved(ns, "web") }).Should(And(Not(BeNil()),
			HaveField("Status", metav1.ConditionFalse), HaveField("Reason", "GateClosed"), HaveField("Message", ContainSubstring(closed))))
		setImage(ns, "web", "nginx:1.27")
		dispatcherHolds(ns, "web", "nginx:1.27", targets...)
		held := markEverywhere(recorders)

		By("opening the gate: both members get it")
		request(ns, "approval", "open")
		Eventually(func() map[string]string { return images(ns, "web") }).Should(Equal(on("nginx:1.27")))
		Eventually(func() *metav1.Condition { return approved(ns, "web") }).Should(HaveField("Status", metav1.ConditionTrue))
		for m, r := range recorders {
			Expect(storedBefore(r, held[m], framework.Image)).NotTo(ContainElement("nginx:1.27"), "%s stored web while its gate was closed", m)
		}

		By("closing it again: the next change waits; removing the annotation releases it")
		request(ns, "approval", "close")
		heldBy("Deployment", ns, "web", "gate 'gate-template/approval' is closed (")
		setImage(ns, "web", "nginx:1.28")
		dispatcherHolds(ns, "web", "nginx:1.28", targets...)
		held = markEverywhere(recorders)
		listGates(web.DeepCopy(), "")
		Eventually(func() map[string]string { return images(ns, "web") }).Should(Equal(on("nginx:1.28")))
		Eventually(func() *metav1.Condition { return approved(ns, "web") }).Should(BeNil())
		for m, r := range recorders {
			Expect(storedBefore(r, held[m], framework.Image)).NotTo(ContainElement("nginx:1.28"), "%s stored web while its gate was closed", m)
		}
	})

	It("read a namespace/name reference as written, and hold a cluster-scoped template that names a gate without a namespace", func() {
		const ns, other = "gate-template-ref", "gate-template-other"
		namespace(ns)
		namespace(other)
		// The same name in both: opened where a bare name would resolve,
		// closed where the reference points.
		gate(ns, "release", "opened")
		gate(other, "release", "closed")
		web := deploymentRef(ns, "web")
		recorders := map[string]*framework.Recorder{}
		for _, m := range targets {
			recorders[m] = recordMember(m, web)
		}
		Expect(framework.Apply(ctx, hubClient, func() client.Object {
			d := framework.NewDeployment(ns, "web", "nginx:1.25")
			d.Annotations = map[string]string{"gating.federator.dev/gates": other + "/release"}
			return d
		}(), fieldOwner)).To(Succeed())
		Expect(framework.Apply(ctx, hubClient, framework.NewDeploymentPolicy(ns, "web", "web", targets...), fieldOwner)).To(Succeed())

		By("holding the Deployment on the gate in the other namespace")
		heldBy("Deployment", ns, "web", "gate 'gate-template-other/release' is closed (Gate closed by default; listed by Deployment gate-template-ref/web)")
		Eventually(func() string { return workImage("member1", ns, "web") }).Should(Equal("nginx:1.25"))
		request(other, "release", "open")
		Eventually(func() map[string]string { return images(ns, "web") }).Should(Equal(on("nginx:1.25")))

		By("a ClusterRole listing a bare gate name: held, saying it needs a namespace")
		const name = "federator-e2e-gated-reader"
		role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}}
		verb := framework.JSONPath("{.rules[0].verbs[0]}")
		DeferCleanup(func() {
			Expect(client.IgnoreNotFound(hubClient.Delete(ctx, &policyv1alpha1.ClusterPropagationPolicy{ObjectMeta: metav1.ObjectMeta{Name: name}}))).To(Succeed())
			Expect(client.IgnoreNotFound(hubClient.Delete(ctx, role.DeepCopy()))).To(Succeed())
		})
		roles := map[string]*framework.Recorder{}
		for _, m := range targets {
			roles[m] = recordMember(m, role)
		}
		mustApply(`{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
"metadata": {"name": %q, "annotations": {"gating.federator.dev/gates": "release"}},
"rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]}`, name)
		mustApply(`
apiVersion: policy.karmada.io/v1alpha1
kind: ClusterPropagationPolicy
metadata: {name: %[1]s}
spec:
  resourceSelectors: [{apiVersion: rbac.authorization.k8s.io/v1, kind: ClusterRole, name: %[1]s}]
  placement: {clusterAffinity: {clusterNames: [member1, member2]}}
`, name)
		heldBy("ClusterRole", "", name, "gate 'release' in annotation gating.federator.dev/gates needs a namespace: "+
			"write namespace/release (listed by ClusterRole "+name+")")
		for _, m := range targets {
			Eventually(func() bool { return env.HeldByDispatcher(ctx, m, "ClusterRole", "", name) }).Should(BeTrue(), m)
		}
		held := markEverywhere(roles)

		By("naming the opened gate with its namespace: released")
		listGates(role.DeepCopy(), ns+"/release")
		Eventually(func() map[string]string {
			out := map[string]string{}
			for _, m := range targets {
				out[m] = env.MemberValue(ctx, m, role, verb)
			}
			return out
		}).Should(Equal(on("get")))
		for m, r := range roles {
			Expect(storedBefore(r, held[m], verb)).To(BeEmpty(), "%s stored the ClusterRole while its gate reference could not be read", m)
		}
	})
})
