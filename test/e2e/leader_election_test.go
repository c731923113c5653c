package e2e

import (
	"net/http"
	"strings"
	"time"

	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	"github.com/onsi/gomega/gexec"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/federator-dev/federator/pkg/fleet"
	"github.com/federator-dev/federator/pkg/hub"
	"github.com/federator-dev/federator/test/framework"
)

// Replicas of `federator controller --leader-elect` take turns by the Lease
// federator-system/federator-controller: one runs the controllers, the
// other waits, serving its probes, and takes over when the leader dies.
var _ = Describe("leader election", func() {
	// Short timings, so a takeover after SIGKILL is quick to see; the renew
	// deadline leaves room for a loaded machine.
	const leaseDuration = 10 * time.Second
	leaderElect := []string{"--leader-elect", "--leader-elect-lease-duration", leaseDuration.String(),
		"--leader-elect-renew-deadline=7s", "--leader-elect-retry-period=1s"}
	running := "federator: controllers running against"

	// replica starts `federator controller --leader-elect` serving its probes.
	type replica struct {
		session *gexec.Session
		probes  string
	}
	start := func(f *fleet.Fleet, args ...string) replica {
		GinkgoHelper()
		probes := freeAddress()
		return replica{startController(f, DeferCleanup, append(append(leaderElect, "--health-probe-bind-address", probes), args...)...), probes}
	}
	probe := func(r replica, path string) func() (int, error) {
		return func() (int, error) {
			resp, err := http.Get("http://" + r.probes + path)
			if err != nil {
				return 0, err
			}
			resp.Body.Close()
			return resp.StatusCode, nil
		}
	}
	holder := func(c client.Client) func() string {
		return func() string {
			lease := &coordinationv1.Lease{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: hub.Namespace, Name: hub.LeaderElectionID}, lease); err != nil || lease.Spec.HolderIdentity == nil {
				return ""
			}
			return *lease.Spec.HolderIdentity
		}
	}

	It("runs the controllers on one replica; after SIGKILL of the leader mid-suspension the other takes over within the lease duration, stores no held version and delivers the change on resume", func() {
		f, hubClient := separateFleet(1, false)
		a := start(f)
		Eventually(a.session.Out, "60s").Should(gbytes.Say(running))
		b := start(f)

		By("one Lease holder; both replicas serve /healthz, and /readyz once synced")
		Expect(holder(hubClient)()).NotTo(BeEmpty())
		first := holder(hubClient)()
		for _, r := range []replica{a, b} {
			Eventually(probe(r, "/healthz"), "30s").Should(Equal(http.StatusOK))
			Eventually(probe(r, "/readyz"), "30s").Should(Equal(http.StatusOK))
		}
		Expect(holder(hubClient)()).To(Equal(first))
		Expect(string(b.session.Out.Contents())).NotTo(ContainSubstring(running), "the standby runs no controllers while the leader renews")

		member := joinMembers(f, hubClient)["member1"]
		const ns, name = "leader-election", "web"
		Expect(hubClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
		Expect(framework.Apply(ctx, hubClient, framework.NewDeployment(ns, name, "nginx:1.25"), fieldOwner)).To(Succeed())
		Expect(framework.Apply(ctx, hubClient, framework.NewDeploymentPolicy(ns, name, name, "member1"), fieldOwner)).To(Succeed())
		memberImage := func() string {
			d := &appsv1.Deployment{}
			if err := member.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, d); err != nil || len(d.Spec.Template.Spec.Containers) == 0 {
				return ""
			}
			return d.Spec.Template.Spec.Containers[0].Image
		}
		Eventually(memberImage, "30s").Should(Equal("nginx:1.25"))
		dyn, err := dynamic.NewForConfig(f.Members[0].Config)
		Expect(err).NotTo(HaveOccurred())
		recorder, err := framework.Record(ctx, dyn, member, deploymentRef(ns, name), "member1")
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(recorder.Stop)
		work := func() *workv1alpha1.Work { return workOn(hubClient, "member1", ns, name) }
		workImage := func() string { return workImageOn(hubClient, "member1", ns, name) }
		held := And(Not(BeNil()), HaveField("Spec.SuspendDispatching", HaveValue(BeTrue())))

		By("suspending, then changing the template, and killing the leader (SIGKILL) at once")
		Expect(framework.PatchPolicy(ctx, hubClient, ns, name, `{"spec":{"suspension":{"dispatching":true}}}`)).To(Succeed())
		Eventually(work, "30s").Should(held)
		Expect(framework.SetImage(ctx, hubClient, ns, name, "nginx:1.27")).To(Succeed())
		a.session.Kill()
		killed := time.Now()
		Eventually(a.session, "10s").Should(gexec.Exit())

		By("the other replica takes the Lease within the lease duration and runs the controllers")
		Eventually(holder(hubClient), leaseDuration+5*time.Second, 200*time.Millisecond).ShouldNot(Equal(first))
		took := time.Since(killed)
		AddReportEntry("takeover after SIGKILL", took.String())
		// The standby counts the lease from the last renewal it saw, and
		// takes it at its next retry (1s, with client-go's jitter up to 1.2s).
		Expect(took).To(BeNumerically("<", leaseDuration+3*time.Second), "a standby takes an expired Lease at its next retry")
		Eventually(b.session.Out, "60s").Should(gbytes.Say(running))
		Eventually(probe(b, "/readyz"), "30s").Should(Equal(http.StatusOK))

		By("the new leader writes the change into the Work, held; resuming delivers it")
		Eventually(workImage, "30s").Should(Equal("nginx:1.27"))
		Expect(work()).To(held)
		beforeResume := mark(recorder)
		Expect(framework.PatchPolicy(ctx, hubClient, ns, name, `{"spec":{"suspension":null}}`)).To(Succeed())
		Eventually(memberImage, "30s").Should(Equal("nginx:1.27"))
		Expect(storedBefore(recorder, beforeResume, framework.Image)).NotTo(ContainElement("nginx:1.27"),
			"no held version was stored while held, across the takeover")
		Expect(recorder.History(0, mark(recorder), framework.Image)).To(Equal([]string{"EXISTING nginx:1.25", "MODIFIED nginx:1.27"}),
			"the member was written once, with the change: the takeover wrote nothing again")
	})

	It("releases the Lease on SIGTERM: the standby takes over at once, not a lease duration later", func() {
		f, hubClient := separateFleet(1, false)
		// A lease far longer than the wait below: only a release explains a takeover.
		long := []string{"--leader-elect-lease-duration=60s", "--leader-elect-renew-deadline=40s"}
		a := start(f, long...)
		Eventually(a.session.Out, "60s").Should(gbytes.Say(running))
		first := holder(hubClient)()
		Expect(first).NotTo(BeEmpty())
		b := start(f, long...)
		Eventually(probe(b, "/healthz"), "30s").Should(Equal(http.StatusOK))

		a.session.Terminate()
		stopped := time.Now()
		Eventually(a.session, "30s").Should(gexec.Exit(0))
		Eventually(holder(hubClient), "15s", 200*time.Millisecond).Should(And(Not(BeEmpty()), Not(Equal(first))))
		AddReportEntry("takeover after SIGTERM", time.Since(stopped).String())
		Eventually(b.session.Out, "60s").Should(gbytes.Say(running))
		Expect(strings.Count(string(b.session.Out.Contents()), running)).To(Equal(1))
	})
})
