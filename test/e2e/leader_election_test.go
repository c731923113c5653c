package e2e

import (
	"net/http"
	"strings"
	"time"

	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
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

// Leader election timings of these specs: short, so a takeover after a
// kill is quick to see; the renew deadline leaves room for a loaded machine.
const leaseDuration = 10 * time.Second

var leaderElect = []string{"--leader-elect", "--leader-elect-lease-duration", leaseDuration.String(),
	"--leader-elect-renew-deadline=7s", "--leader-elect-retry-period=1s"}

// controllersRunning is what `federator controller` prints once it leads
// and its controllers run.
const controllersRunning = "federator: controllers running against"

// controllersStart is how long a started `federator controller` may take
// to print controllersRunning: a few seconds on an idle machine, but CI's
// three fleets beside it have made it take over a minute (the wait ends
// as soon as it prints).
const controllersStart = 3 * time.Minute

// replica is one `federator controller --leader-elect`, a process or a
// container: what it printed so far, its probe address, and how to kill it.
type replica struct {
	name   string
	out    func() string
	probes string
	kill   func()
}

// processReplica starts `federator controller --leader-elect` as a process
// serving its probes, stopped at the end of the spec.
func processReplica(f *fleet.Fleet, name string, args ...string) replica {
	GinkgoHelper()
	probes := freeAddress()
	session := startController(f, DeferCleanup, append(append(leaderElect, "--health-probe-bind-address", probes), args...)...)
	return replica{name: name, probes: probes, out: func() string { return string(session.Out.Contents()) },
		kill: func() { Eventually(session.Kill(), "10s").Should(gexec.Exit()) }}
}

// httpStatus is a poll of the status code of GET http://addr/path.
func httpStatus(addr, path string) func() (int, error) {
	return func() (int, error) {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
}

// leaseHolder is a poll of the holder of federator's Lease on hub.
func leaseHolder(c client.Client) func() string {
	return func() string {
		lease := &coordinationv1.Lease{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: hub.Namespace, Name: hub.LeaderElectionID}, lease); err != nil || lease.Spec.HolderIdentity == nil {
			return ""
		}
		return *lease.Spec.HolderIdentity
	}
}

// killLeaderMidSuspension checks that only leader runs controllers while
// both replicas serve their probes, kills leader between a suspension's
// change and its resume, and checks that standby takes over within the
// lease duration, that no held version reached the member, and that the
// change arrives once resumed, written once.
func killLeaderMidSuspension(f *fleet.Fleet, hubClient client.Client, leader, standby replica) {
	GinkgoHelper()
	Eventually(leader.out, controllersStart).Should(ContainSubstring(controllersRunning))

	By("one Lease holder; both replicas serve /healthz, and /readyz once synced")
	first := leaseHolder(hubClient)()
	Expect(first).NotTo(BeEmpty())
	for _, r := range []replica{leader, standby} {
		Eventually(httpStatus(r.probes, "/healthz"), "60s").Should(Equal(http.StatusOK), r.name)
		Eventually(httpStatus(r.probes, "/readyz"), "30s").Should(Equal(http.StatusOK), r.name)
	}
	Expect(leaseHolder(hubClient)()).To(Equal(first))
	Expect(standby.out()).NotTo(ContainSubstring(controllersRunning), "the standby runs no controllers while the leader renews")

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
	held := And(Not(BeNil()), HaveField("Spec.SuspendDispatching", HaveValue(BeTrue())))

	By("suspending, then changing the template, and killing the leader at once")
	Expect(framework.PatchPolicy(ctx, hubClient, ns, name, `{"spec":{"suspension":{"dispatching":true}}}`)).To(Succeed())
	Eventually(work, "30s").Should(held)
	Expect(framework.SetImage(ctx, hubClient, ns, name, "nginx:1.27")).To(Succeed())
	killed := time.Now()
	leader.kill()

	By("the standby takes the Lease within the lease duration and runs the controllers")
	Eventually(leaseHolder(hubClient), leaseDuration+10*time.Second, 200*time.Millisecond).ShouldNot(Equal(first))
	took := time.Since(killed)
	AddReportEntry("takeover after "+leader.name+" was killed", took.String())
	// The standby counts the lease duration from the moment it saw the last
	// renewal, up to one retry after it, and takes the Lease at its next
	// retry after that: each retry 1s, with client-go's jitter up to 2.2s.
	Expect(took).To(BeNumerically("<", leaseDuration+2*2200*time.Millisecond+time.Second),
		"a standby takes an expired Lease at its next retry")
	Eventually(standby.out, controllersStart).Should(ContainSubstring(controllersRunning))
	Eventually(httpStatus(standby.probes, "/readyz"), "30s").Should(Equal(http.StatusOK))

	By("the new leader writes the change into the Work, held; resuming delivers it")
	Eventually(func() string { return workImageOn(hubClient, "member1", ns, name) }, "30s").Should(Equal("nginx:1.27"))
	Expect(work()).To(held)
	beforeResume := mark(recorder)
	Expect(framework.PatchPolicy(ctx, hubClient, ns, name, `{"spec":{"suspension":null}}`)).To(Succeed())
	Eventually(memberImage, "30s").Should(Equal("nginx:1.27"))
	Expect(storedBefore(recorder, beforeResume, framework.Image)).NotTo(ContainElement("nginx:1.27"),
		"no held version was stored while held, across the takeover")
	Expect(recorder.History(0, mark(recorder), framework.Image)).To(Equal([]string{"EXISTING nginx:1.25", "MODIFIED nginx:1.27"}),
		"the member was written once, with the change: the takeover wrote nothing again")
}

// Replicas of `federator controller --leader-elect` take turns by the Lease
// federator-system/federator-controller: one runs the controllers, the
// other waits, serving its probes, and takes over when the leader dies.
var _ = Describe("leader election", func() {
	It("runs the controllers on one replica; after SIGKILL of the leader mid-suspension the other takes over within the lease duration, stores no held version and delivers the change on resume", func() {
		f, hubClient := separateFleet(1, false)
		leader := processReplica(f, "process a")
		Eventually(leader.out, controllersStart).Should(ContainSubstring(controllersRunning))
		killLeaderMidSuspension(f, hubClient, leader, processReplica(f, "process b"))
	})

	It("releases the Lease on SIGTERM: the standby takes over at once, not a lease duration later", func() {
		f, hubClient := separateFleet(1, false)
		// A lease far longer than the wait below: only a release explains a takeover.
		long := []string{"--leader-elect-lease-duration=60s", "--leader-elect-renew-deadline=40s"}
		a := startController(f, DeferCleanup, append(leaderElect, long...)...)
		Eventually(func() string { return string(a.Out.Contents()) }, controllersStart).Should(ContainSubstring(controllersRunning))
		first := leaseHolder(hubClient)()
		Expect(first).NotTo(BeEmpty())
		b := processReplica(f, "process b", long...)
		Eventually(httpStatus(b.probes, "/healthz"), "30s").Should(Equal(http.StatusOK))

		a.Terminate()
		stopped := time.Now()
		Eventually(a, "30s").Should(gexec.Exit(0))
		Eventually(leaseHolder(hubClient), "15s", 200*time.Millisecond).Should(And(Not(BeEmpty()), Not(Equal(first))))
		AddReportEntry("takeover after SIGTERM", time.Since(stopped).String())
		Eventually(b.out, controllersStart).Should(ContainSubstring(controllersRunning))
		Expect(strings.Count(b.out(), controllersRunning)).To(Equal(1))
	})
})
