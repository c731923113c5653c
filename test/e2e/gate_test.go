package e2e

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"

	gatingv1alpha1 "github.com/federator-dev/federator/apis/gating/v1alpha1"

	"github.com/federator-dev/federator/test/framework"
)

var _ = Describe("gates", func() {
	gateOpened := func(ns, name string) *metav1.Condition {
		g := &gatingv1alpha1.Gate{}
		if err := hubClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, g); err != nil {
			return nil
		}
		return meta.FindStatusCondition(g.Status.Conditions, "Opened")
	}
	request := func(ns, name, action string) {
		GinkgoHelper()
		patch := fmt.Sprintf(`{"metadata": {"annotations": {"%s.gate.federator.dev/requestedAt": %q}}}`,
			action, time.Now().UTC().Format(time.RFC3339))
		Expect(hubClient.Patch(ctx, &gatingv1alpha1.Gate{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}},
			client.RawPatch(types.MergePatchType, []byte(patch)))).To(Succeed())
	}
	approved := func(ns, name string) *metav1.Condition {
		rb := &workv1alpha2.ResourceBinding{}
		if err := hubClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name + "-deployment"}, rb); err != nil {
			return nil
		}
		return meta.FindStatusCondition(rb.Status.Conditions, "Approved")
	}
	gated := func(ns, name, gates string) {
		GinkgoHelper()
		deployment(ns, name, "nginx:1.25")
		Expect(apply(`
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: %[2]s, namespace: %[1]s, annotations: {gating.federator.dev/gates: %[3]q}}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: %[2]s}]
  placement:
    clusterAffinity: {clusterNames: [member1, member2, member3]}
`, ns, name, gates)).To(Succeed())
	}

	It("hold a policy's template on every cluster until approved, and again once the window closes the gate", Label("smoke"), func() {
		const ns = "gate-approval"
		namespace(ns)
		Expect(apply(`
apiVersion: gating.federator.dev/v1alpha1
kind: Gate
metadata: {name: sre-approval, namespace: %s}
spec: {default: closed}
`, ns)).To(Succeed())
		recorders := map[string]*framework.Recorder{}
		for m := range members {
			recorders[m] = recordMember(m, deploymentRef(ns, "web"))
		}
		gated(ns, "web", "sre-approval")

		By("holding every Work with GateClosed, saying so on the binding and the template")
		Eventually(func() *metav1.Condition { return gateOpened(ns, "sre-approval") }).Should(And(
			Not(BeNil()), HaveField("Status", metav1.ConditionFalse), HaveField("Message", "Gate closed by default")))
		for m := range members {
			Eventually(func() *metav1.Condition { return dispatching(m, "Deployment", ns, "web") }).Should(And(
				Not(BeNil()), HaveField("Reason", "GateClosed"),
				HaveField("Message", ContainSubstring("waiting approval, gate 'gate-approval/sre-approval' is closed"))), m)
		}
		Eventually(func() *metav1.Condition { return approved(ns, "web") }).Should(And(Not(BeNil()),
			HaveField("Status", metav1.ConditionFalse), HaveField("Reason", "GateClosed"),
			HaveField("Message", ContainSubstring("waiting approval, gate 'gate-approval/sre-approval' is closed"))))
		Eventually(func() []string { return templateEvents(ns, "Deployment", "web") }).Should(ContainElement(
			"DispatchingSuspended: dispatching suspended to every cluster (policy gate-approval/web): gate 'gate-approval/sre-approval' is closed"))

		By("opening the gate: dispatched at once")
		request(ns, "sre-approval", "open")
		Eventually(func() map[string]string { return imagesEverywhere(ns, "web") }).Should(Equal(everywhere("nginx:1.25")))
		Eventually(func() *metav1.Condition { return approved(ns, "web") }).Should(HaveField("Status", metav1.ConditionTrue))

		By("giving the gate a 3s window and opening it again: it closes by itself, and the next change waits")
		Expect(hubClient.Patch(ctx, &gatingv1alpha1.Gate{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "sre-approval"}},
			client.RawPatch(types.MergePatchType, []byte(`{"spec": {"window": "3s"}}`)))).To(Succeed())
		time.Sleep(time.Second) // the new request must be newer than the last, at a second's precision
		request(ns, "sre-approval", "open")
		Eventually(func() *metav1.Condition { return gateOpened(ns, "sre-approval") }).Should(And(
			HaveField("Status", metav1.ConditionTrue), HaveField("Message", HavePrefix("Gate scheduled for closing at "))))
		Eventually(func() *metav1.Condition { return gateOpened(ns, "sre-approval") }, "20s").Should(And(
			HaveField("Status", metav1.ConditionFalse), HaveField("Reason", "Default")))
		for m := range members {
			Eventually(func() *metav1.Condition { return dispatching(m, "Deployment", ns, "web") }).Should(HaveField("Reason", "GateClosed"), m)
		}
		setImage(ns, "web", "nginx:1.27")
		Eventually(func() string { return workImage("member1", ns, "web") }).Should(Equal("nginx:1.27"))

		By("deleting the template under the closed gate: gone from every member")
		Expect(hubClient.Delete(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}})).To(Succeed())
		for m := range members {
			Eventually(func() bool {
				err := members[m].Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, &appsv1.Deployment{})
				return apierrors.IsNotFound(err)
			}).Should(BeTrue(), m)
			Expect(stored(recorders[m], framework.Image)).NotTo(ContainElement("nginx:1.27"), "%s stored the change made while the gate was closed", m)
		}
	})

	It("hold only the cluster that lists a gate, and a missing gate holds until it exists", func() {
		const ns = "gate-cluster"
		namespace(ns)
		cluster := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member3"}}
		setClusterGates := func(v string) {
			GinkgoHelper()
			value := "null"
			if v != "" {
				value = fmt.Sprintf("%q", v)
			}
			Expect(hubClient.Patch(ctx, cluster, client.RawPatch(types.MergePatchType,
				[]byte(`{"metadata": {"annotations": {"gating.federator.dev/gates": `+value+`}}}`)))).To(Succeed())
		}
		setClusterGates(ns + "/maintenance")
		DeferCleanup(func() { setClusterGates("") })
		onMember3 := recordMember("member3", deploymentRef(ns, "web"))
		deployment(ns, "web", "nginx:1.25")
		propagationPolicy(ns, "web", nil)

		By("holding member3 only, saying the gate is missing")
		Eventually(func() map[string]string { return imagesEverywhere(ns, "web") }).Should(Equal(
			map[string]string{"member1": "nginx:1.25", "member2": "nginx:1.25", "member3": ""}))
		Eventually(func() *metav1.Condition { return dispatching("member3", "Deployment", ns, "web") }).Should(And(
			Not(BeNil()), HaveField("Reason", "GateClosed"),
			HaveField("Message", ContainSubstring("gate 'gate-cluster/maintenance' does not exist (listed by Cluster member3)"))))

		By("creating the gate opened: member3 gets it")
		Expect(apply(`
apiVersion: gating.federator.dev/v1alpha1
kind: Gate
metadata: {name: maintenance, namespace: %s}
spec: {default: opened}
`, ns)).To(Succeed())
		Eventually(func() map[string]string { return imagesEverywhere(ns, "web") }).Should(Equal(everywhere("nginx:1.25")))

		By("closing it: member3 waits for the next change, the others get it")
		request(ns, "maintenance", "close")
		Eventually(func() *metav1.Condition { return dispatching("member3", "Deployment", ns, "web") }).Should(HaveField("Reason", "GateClosed"))
		setImage(ns, "web", "nginx:1.27")
		Eventually(func() map[string]string { return imagesEverywhere(ns, "web") }).Should(Equal(
			map[string]string{"member1": "nginx:1.27", "member2": "nginx:1.27", "member3": "nginx:1.25"}))
		Eventually(func() string { return workImage("member3", ns, "web") }).Should(Equal("nginx:1.27"))
		Expect(stored(onMember3, framework.Image)).NotTo(ContainElement("nginx:1.27"))
		Expect(strings.Join(stored(onMember3, framework.Image), ",")).To(ContainSubstring("nginx:1.25"))
	})
	It("open through the webhook receiver with the right signature, and refuse a wrong one and a replay", func() {
		const ns = "gate-webhook"
		namespace(ns)
		Expect(apply(`
apiVersion: v1
kind: Secret
metadata: {name: hook, namespace: %[1]s}
stringData: {token: s3cret}
---
apiVersion: gating.federator.dev/v1alpha1
kind: Gate
metadata: {name: release, namespace: %[1]s}
spec: {default: closed, secretRef: {name: hook}}
`, ns)).To(Succeed())
		Eventually(func() *metav1.Condition { return gateOpened(ns, "release") }).Should(HaveField("Status", metav1.ConditionFalse))
		url := "http://" + webhookAddr + "/hooks/gates/" + ns + "/release/open"
		post := func(body, timestamp, signature string) (int, string) {
			GinkgoHelper()
			req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
			Expect(err).NotTo(HaveOccurred())
			req.Header.Set("X-Signature-Timestamp", timestamp)
			req.Header.Set("X-Signature-256", signature)
			resp, err := http.DefaultClient.Do(req)
			Expect(err).NotTo(HaveOccurred())
			answer, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			return resp.StatusCode, string(answer)
		}
		ts := strconv.FormatInt(time.Now().Unix(), 10)
		mac := hmac.New(sha256.New, []byte("s3cret"))
		mac.Write([]byte(ts + ".POST./hooks/gates/" + ns + "/release/open." + `{"ticket":"CHG-1"}`))
		good := "sha256=" + hex.EncodeToString(mac.Sum(nil))

		code, answer := post(`{"ticket":"CHG-2"}`, ts, good)
		Expect(code).To(Equal(http.StatusUnauthorized), "a signature of another body")
		Expect(answer).To(ContainSubstring("X-Signature-256 does not match"))
		// The receiver writes the request before it answers: a refused call
		// left none.
		g := &gatingv1alpha1.Gate{}
		Expect(hubClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "release"}, g)).To(Succeed())
		Expect(g.Annotations).NotTo(HaveKey("open.gate.federator.dev/requestedAt"))
		code, answer = post(`{"ticket":"CHG-1"}`, ts, good)
		Expect(code).To(Equal(http.StatusAccepted), answer)
		Eventually(func() *metav1.Condition { return gateOpened(ns, "release") }).Should(And(
			HaveField("Status", metav1.ConditionTrue), HaveField("Reason", "OpenRequested")))
		Eventually(func() []string { return templateEvents(ns, "Gate", "release") }).Should(ContainElement(
			HavePrefix("WebhookRequest: open requested at ")))

		By("sending the same signed call again: refused as a replay")
		code, answer = post(`{"ticket":"CHG-1"}`, ts, good)
		Expect(code).To(Equal(http.StatusUnauthorized))
		Expect(answer).To(ContainSubstring("this signature was used before"))

		By("signing as docs/guides/approvals-and-windows.md shows a CI job doing it, with curl and openssl")
		guide, err := os.ReadFile("../../docs/guides/approvals-and-windows.md")
		Expect(err).NotTo(HaveOccurred())
		_, after, found := strings.Cut(string(guide), "a CI job signs its call:\n\n```sh\n")
		Expect(found).To(BeTrue(), "docs/guides/approvals-and-windows.md shows how a CI job signs a webhook call")
		script, _, _ := strings.Cut(after, "```")
		run := exec.Command("sh", "-ec", script)
		run.Env = append(os.Environ(), "TOKEN=s3cret", "URL="+url, "CI_JOB_ID=e2e-"+ts)
		out, err := run.CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), "%s\n%s", script, out)
		Expect(string(out)).To(HavePrefix("open requested at "))
	})
})
