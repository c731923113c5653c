package e2e

import (
	"strings"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/federator-dev/federator/test/framework"
)

// OverridePolicy and ClusterOverridePolicy as Karmada applies them: per
// cluster, when a Work is built, recorded on the Work in Karmada's
// annotations, and re-rendered at once when a policy changes.
var _ = Describe("override policies", func() {
	var (
		replicas  = framework.JSONPath("{.spec.replicas}")
		region    = framework.JSONPath("{.metadata.labels.region}")
		team      = framework.JSONPath("{.metadata.annotations.team}")
		tier      = framework.JSONPath("{.metadata.labels.tier}")
		appJSON   = framework.JSONPath("{.data.app-json}")
		appYAML   = framework.JSONPath("{.data.app-yaml}")
		overrides = framework.JSONPath(`{.metadata.annotations.policy\.karmada\.io/applied-overrides}`)
	)
	memberValues := func(obj client.Object, field framework.Field) map[string]string {
		return env.MemberValues(ctx, obj, field)
	}
	workAnnotation := func(member, kind, ns, name, key string) string {
		w, err := env.Work(ctx, member, kind, ns, name)
		if err != nil {
			return err.Error()
		}
		return w.Annotations[key]
	}

	It("gives the canary cluster another image tag, labels, replicas and config fields per cluster, and follows the policy's changes", Label("smoke"), func() {
		const ns, name = "override-canary", "web"
		propagatedEverywhere(ns, name)
		config := propagatedConfigMap(ns, "web-config", map[string]string{
			"app-json": `{"log":{"level":"info"},"workers":4}`, "app-yaml": "log:\n  level: info\n"})
		Eventually(func() map[string]string { return memberValues(config, appJSON) }).Should(Equal(everywhere(`{"log":{"level":"info"},"workers":4}`)))

		By("an OverridePolicy with a rule per cluster, as a Karmada user writes it")
		mustApply(`
apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata: {name: canary, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  overrideRules:
  - targetCluster: {clusterNames: [member1]}
    overriders:
      imageOverrider: [{component: Tag, operator: replace, value: 1.27-canary}]
  - targetCluster: {clusterNames: [member2]}
    overriders:
      labelsOverrider: [{operator: add, value: {region: eu}}]
      annotationsOverrider: [{operator: add, value: {team: shop}}]
  - targetCluster: {clusterNames: [member3]}
    overriders:
      plaintext: [{path: /spec/replicas, operator: replace, value: 1}]
---
# Every rule applies to everything a policy selects (a fieldOverrider on
# /data would fail on the Deployment), so the ConfigMap has its own policy.
apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata: {name: canary-config, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, name: web-config}]
  overrideRules:
  - targetCluster: {clusterNames: [member1]}
    overriders:
      fieldOverrider:
      - fieldPath: /data/app-json
        json: [{subPath: /log/level, operator: replace, value: debug}]
      - fieldPath: /data/app-yaml
        yaml: [{subPath: /log/level, operator: replace, value: debug}]
`, ns)
		Eventually(func() map[string]string { return imagesEverywhere(ns, name) }).Should(Equal(
			map[string]string{"member1": "nginx:1.27-canary", "member2": "nginx:1.25", "member3": "nginx:1.25"}))
		Eventually(func() map[string]string { return memberValues(deploymentRef(ns, name), region) }).Should(Equal(
			map[string]string{"member1": "", "member2": "eu", "member3": ""}))
		Expect(memberValues(deploymentRef(ns, name), team)).To(Equal(map[string]string{"member1": "", "member2": "shop", "member3": ""}))
		Eventually(func() map[string]string { return memberValues(deploymentRef(ns, name), replicas) }).Should(Equal(
			map[string]string{"member1": "2", "member2": "2", "member3": "1"}))
		// The ConfigMap's own fields, inside their JSON and YAML strings.
		Eventually(func() map[string]string { return memberValues(config, appJSON) }).Should(Equal(map[string]string{
			"member1": `{"log":{"level":"debug"},"workers":4}`,
			"member2": `{"log":{"level":"info"},"workers":4}`, "member3": `{"log":{"level":"info"},"workers":4}`}))
		Expect(memberValues(config, appYAML)).To(Equal(map[string]string{
			"member1": "log:\n  level: debug\n", "member2": "log:\n  level: info\n", "member3": "log:\n  level: info\n"}))
		// Karmada's record of what applied, on the Work of each cluster.
		Expect(workAnnotation("member1", "Deployment", ns, name, "policy.karmada.io/applied-overrides")).To(Equal(
			`[{"policyName":"canary","overriders":{"imageOverrider":[{"component":"Tag","operator":"replace","value":"1.27-canary"}]}}]`))
		Expect(workAnnotation("member1", "ConfigMap", ns, "web-config", "policy.karmada.io/applied-overrides")).To(Equal(
			`[{"policyName":"canary-config","overriders":{"fieldOverrider":[{"fieldPath":"/data/app-json","json":[{"subPath":"/log/level","operator":"replace","value":"debug"}]},` +
				`{"fieldPath":"/data/app-yaml","yaml":[{"subPath":"/log/level","operator":"replace","value":"debug"}]}]}}]`))
		Expect(workAnnotation("member3", "Deployment", ns, name, "policy.karmada.io/applied-overrides")).To(Equal(
			`[{"policyName":"canary","overriders":{"plaintext":[{"path":"/spec/replicas","operator":"replace","value":1}]}}]`))
		Expect(memberValues(deploymentRef(ns, name), overrides)).To(Equal(everywhere("")), "the record stays on the hub's Work")

		By("a ClusterOverridePolicy applies first; the OverridePolicy, applied after it, has the last word")
		DeferCleanup(func() {
			Expect(client.IgnoreNotFound(hubClient.Delete(ctx, &policyv1alpha1.ClusterOverridePolicy{ObjectMeta: metav1.ObjectMeta{Name: "override-canary-tier"}}))).To(Succeed())
		})
		mustApply(`
apiVersion: policy.karmada.io/v1alpha1
kind: ClusterOverridePolicy
metadata: {name: override-canary-tier}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, namespace: %[1]s}]
  overrideRules:
  - overriders:
      labelsOverrider: [{operator: add, value: {tier: platform, region: global}}]
`, ns)
		Eventually(func() map[string]string { return memberValues(deploymentRef(ns, name), tier) }).Should(Equal(everywhere("platform")))
		Expect(memberValues(deploymentRef(ns, name), region)).To(Equal(map[string]string{"member1": "global", "member2": "eu", "member3": "global"}))
		Expect(workAnnotation("member2", "Deployment", ns, name, "policy.karmada.io/applied-cluster-overrides")).To(Equal(
			`[{"policyName":"override-canary-tier","overriders":{"labelsOverrider":[{"operator":"add","value":{"region":"global","tier":"platform"}}]}}]`))

		By("changing the canary's tag reaches member1 at once")
		patchOverridePolicy(ns, "canary", `[{"op":"replace","path":"/spec/overrideRules/0/overriders/imageOverrider/0/value","value":"1.28-canary"}]`)
		Eventually(func() map[string]string { return imagesEverywhere(ns, name) }).Should(Equal(
			map[string]string{"member1": "nginx:1.28-canary", "member2": "nginx:1.25", "member3": "nginx:1.25"}))

		By("deleting the OverridePolicies puts every cluster back on the template, and their record goes")
		for _, p := range []string{"canary", "canary-config"} {
			Expect(hubClient.Delete(ctx, &policyv1alpha1.OverridePolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: p}})).To(Succeed())
		}
		Eventually(func() map[string]string { return imagesEverywhere(ns, name) }).Should(Equal(everywhere("nginx:1.25")))
		Eventually(func() map[string]string { return memberValues(deploymentRef(ns, name), replicas) }).Should(Equal(everywhere("2")))
		Eventually(func() map[string]string { return memberValues(config, appJSON) }).Should(Equal(everywhere(`{"log":{"level":"info"},"workers":4}`)))
		Expect(memberValues(deploymentRef(ns, name), region)).To(Equal(everywhere("global")))
		Expect(workAnnotation("member1", "Deployment", ns, name, "policy.karmada.io/applied-overrides")).To(BeEmpty())
		Expect(workAnnotation("member1", "Deployment", ns, name, "policy.karmada.io/applied-cluster-overrides")).NotTo(BeEmpty())
	})

	It("holds an override change for a suspended cluster like a template change, and diff shows it", func() {
		const ns, name = "override-suspended", "web"
		propagatedEverywhere(ns, name)
		member2 := recordMember("member2", deploymentRef(ns, name))

		By("suspending member2, then overriding the tag for every cluster")
		patchPolicy(ns, name, `{"spec": {"suspension": {"dispatchingOnClusters": {"clusterNames": ["member2"]}}}}`)
		Eventually(func() *metav1.Condition { return dispatching("member2", "Deployment", ns, name) }).Should(And(
			Not(BeNil()), HaveField("Reason", "SuspendDispatching")))
		mustApply(`
apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata: {name: retag, namespace: %s}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
  overrideRules:
  - overriders:
      imageOverrider: [{component: Tag, operator: replace, value: 1.27-hotfix}]
`, ns)
		Eventually(func() map[string]string { return imagesEverywhere(ns, name) }).Should(Equal(
			map[string]string{"member1": "nginx:1.27-hotfix", "member2": "nginx:1.25", "member3": "nginx:1.27-hotfix"}))
		Eventually(func() string { return workImage("member2", ns, name) }).Should(Equal("nginx:1.27-hotfix"))
		// `get rollout` renders the template with the overrides as the hub
		// does, so the overridden clusters are current, not pending.
		Eventually(func() map[string]string { return rolloutStates(ns, name) }).Should(Equal(
			map[string]string{"member1": "Applied", "member2": "Held", "member3": "Applied"}))

		By("diff shows member2's pending override")
		r := federatorCLI("diff", "deployment", name, "-n", ns)
		Expect(r.code).To(Equal(1), r.stderr)
		Expect(r.stdout).To(HavePrefix("--- member2 apps/v1 Deployment override-suspended/web (live)\n"))
		Expect(strings.Count(r.stdout, "\n-      - image: nginx:1.25\n+      - image: nginx:1.27-hotfix\n")).To(Equal(1), r.stdout)
		Expect(stored(member2, framework.Image)).NotTo(ContainElement("nginx:1.27-hotfix"),
			"member2 stored the overridden image while it was suspended")

		By("resuming member2 brings it the override")
		patchPolicy(ns, name, `{"spec": {"suspension": null}}`)
		Eventually(func() string { return memberImage("member2", ns, name) }).Should(Equal("nginx:1.27-hotfix"))
	})

	It("applies an OverridePolicy without resourceSelectors to every template of its namespace, and to none elsewhere", func() {
		const ns, other, name = "override-everything", "override-everything-other", "web"
		zone := framework.JSONPath("{.metadata.labels.zone}")
		propagatedEverywhere(ns, name)
		propagatedEverywhere(other, name)
		config := propagatedConfigMap(ns, "web-config", map[string]string{"log": "info"})
		mustApply(`
apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata: {name: everything, namespace: %[1]s}
spec:
  overrideRules:
  - targetCluster: {clusterNames: [member2]}
    overriders:
      labelsOverrider: [{operator: add, value: {zone: b}}]
`, ns)
		inMember2Only := map[string]string{"member1": "", "member2": "b", "member3": ""}
		Eventually(func() map[string]string { return memberValues(deploymentRef(ns, name), zone) }).Should(Equal(inMember2Only))
		Eventually(func() map[string]string { return memberValues(config, zone) }).Should(Equal(inMember2Only))
		Expect(workAnnotation("member2", "ConfigMap", ns, "web-config", "policy.karmada.io/applied-overrides")).To(Equal(
			`[{"policyName":"everything","overriders":{"labelsOverrider":[{"operator":"add","value":{"zone":"b"}}]}}]`))
		Expect(memberValues(deploymentRef(other, name), zone)).To(Equal(everywhere("")), "another namespace's template is out of its scope")
	})

	It("labels a namespace per cluster with a ClusterOverridePolicy, as Karmada's namespace sync does", func() {
		const ns, policyName = "override-namespace", "override-namespace-env"
		envLabel := framework.JSONPath("{.metadata.labels.env}")
		namespaceRef := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
		namespace(ns)
		DeferCleanup(func() {
			Expect(client.IgnoreNotFound(hubClient.Delete(ctx, &policyv1alpha1.ClusterOverridePolicy{ObjectMeta: metav1.ObjectMeta{Name: policyName}}))).To(Succeed())
		})
		mustApply(`
apiVersion: policy.karmada.io/v1alpha1
kind: ClusterOverridePolicy
metadata: {name: %[2]s}
spec:
  resourceSelectors: [{apiVersion: v1, kind: Namespace, name: %[1]s}]
  overrideRules:
  - targetCluster: {clusterNames: [member2]}
    overriders:
      labelsOverrider: [{operator: add, value: {env: canary}}]
`, ns, policyName)
		Eventually(func() map[string]string { return memberValues(namespaceRef, envLabel) }).Should(Equal(
			map[string]string{"member1": "", "member2": "canary", "member3": ""}))
		Expect(workAnnotation("member2", "Namespace", "", ns, "policy.karmada.io/applied-cluster-overrides")).To(Equal(
			`[{"policyName":"override-namespace-env","overriders":{"labelsOverrider":[{"operator":"add","value":{"env":"canary"}}]}}]`))

		By("deleting the policy takes the label away again")
		Expect(hubClient.Delete(ctx, &policyv1alpha1.ClusterOverridePolicy{ObjectMeta: metav1.ObjectMeta{Name: policyName}})).To(Succeed())
		Eventually(func() map[string]string { return memberValues(namespaceRef, envLabel) }).Should(Equal(everywhere("")))
	})
})

// propagatedConfigMap applies the ConfigMap ns/name with data and a
// PropagationPolicy placing it on every member, and returns a reference to
// read it in members.
func propagatedConfigMap(ns, name string, data map[string]string) *corev1.ConfigMap {
	GinkgoHelper()
	config := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: data}
	Expect(framework.Apply(ctx, hubClient, config, fieldOwner)).To(Succeed())
	mustApply(`
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: %[2]s, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, name: %[2]s}]
  placement: {clusterAffinity: {clusterNames: [member1, member2, member3]}}
`, ns, name)
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
}
