package e2e

import (
	"regexp"
	"strconv"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	"github.com/karmada-io/karmada/pkg/util/names"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/federator-dev/federator/test/framework"
)

// watchesRE reads, from a kube-apiserver's metrics, the watches it is
// serving right now: resource, scope (cluster or namespace) and count.
var watchesRE = regexp.MustCompile(`(?m)^apiserver_longrunning_requests\{[^}]*resource="(\w+)",scope="(\w+)"[^}]*verb="WATCH"[^}]*\} (\d+)$`)

// watches is how many watches of resource the API server cs talks to
// serves, by scope; nil when its metrics cannot be read.
func watches(cs kubernetes.Interface, resource string) map[string]int {
	raw, err := cs.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil
	}
	n := map[string]int{}
	for _, m := range watchesRE.FindAllStringSubmatch(string(raw), -1) {
		if m[1] == resource {
			v, _ := strconv.Atoi(m[3])
			n[m[2]] += v
		}
	}
	return n
}

// deploymentWatches is how many watches of Deployments member's API server
// serves: federator's member watch is the only client watching them.
func deploymentWatches(member string) int {
	n := watches(memberCS[member], "deployments")
	if n == nil {
		return -1
	}
	return n["cluster"] + n["namespace"]
}

var _ = Describe("a member that leaves and rejoins", func() {
	const ns, name = "leaving", "web"

	It("has what the hub placed there deleted before its Cluster goes, stops being watched, and is served again when it rejoins", func() {
		bareMembersOnly("the spec counts federator's Deployment watches on member3 and reports its Deployment ready itself")
		propagatedEverywhere(ns, name)
		Eventually(func() int { return deploymentWatches("member3") }).Should(BeNumerically(">", 0))

		By("deleting the member3 Cluster: its Works go, their objects are deleted from member3, and only then does the Cluster go")
		rejoin := leave("member3")
		cluster := client.ObjectKey{Name: "member3"}
		inMember3 := func() error {
			return members["member3"].Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &appsv1.Deployment{})
		}
		Eventually(func() bool {
			clusterGone := apierrors.IsNotFound(hubClient.Get(ctx, cluster, &clusterv1alpha1.Cluster{}))
			// Read after the Cluster: had the Cluster gone first, the
			// Deployment would be seen here after it went.
			if err := inMember3(); clusterGone && !apierrors.IsNotFound(err) {
				StopTrying("the member3 Cluster is gone while its Deployment is still in member3").Now()
			}
			return clusterGone
		}).Should(BeTrue(), "the member3 Cluster is deleted once the hub has let go of it")
		Expect(apierrors.IsNotFound(inMember3())).To(BeTrue(), "the Deployment is deleted from member3")
		work := client.ObjectKey{Namespace: names.GenerateExecutionSpaceName("member3"), Name: names.GenerateWorkName("Deployment", name, ns)}
		Expect(apierrors.IsNotFound(hubClient.Get(ctx, work, &workv1alpha1.Work{}))).To(BeTrue(), "the Work for member3 is deleted")
		Eventually(func() int { return deploymentWatches("member3") }).Should(Equal(0))

		By("updating the template: the remaining members get it, member3 is left alone")
		recorder := recordMember("member3", deploymentRef(ns, name))
		setImage(ns, name, "nginx:1.27")
		Eventually(func() string { return memberImage("member1", ns, name) }).Should(Equal("nginx:1.27"))
		Eventually(func() string { return memberImage("member2", ns, name) }).Should(Equal("nginx:1.27"))
		// Time for a controller that still served member3 to write to it.
		Consistently(func() []string { return recorder.Values(framework.Image) }, "2s").Should(BeEmpty())
		Expect(storedBefore(recorder, mark(recorder), framework.Image)).To(BeEmpty(),
			"member3 was written while it was not a member")
		// The recorder's watch would count below among the watches that
		// show federator serves member3 again.
		recorder.Stop()

		By("registering member3 again: it gets the latest template, and its status flows back")
		rejoin()
		Eventually(func() bool {
			c := &clusterv1alpha1.Cluster{}
			return hubClient.Get(ctx, cluster, c) == nil &&
				meta.IsStatusConditionTrue(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
		}).Should(BeTrue())
		Eventually(func() string { return memberImage("member3", ns, name) }).Should(Equal("nginx:1.27"))
		Eventually(func() int { return deploymentWatches("member3") }).Should(BeNumerically(">", 0))
		reportReady("member3", ns, name)
		Eventually(func() int32 { return workReadyReplicas("member3", ns, name) }).Should(Equal(int32(2)))
	})

	It("leaves while unreachable: its Works are let go without reaching it, and what they placed there stays", func() {
		const ns = "leaving-unreachable"
		outage := faults()
		propagatedEverywhere(ns, name)

		By("stopping member3's API server, then deleting its Cluster: the Cluster goes all the same")
		Expect(outage.StopMember("member3")).To(Succeed())
		restarted := false
		DeferCleanup(func() {
			if !restarted {
				Expect(outage.StartMember("member3")).To(Succeed())
			}
		})
		Eventually(func() bool {
			c := &clusterv1alpha1.Cluster{}
			return hubClient.Get(ctx, client.ObjectKey{Name: "member3"}, c) == nil &&
				meta.IsStatusConditionFalse(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
		}).Should(BeTrue(), "the hub sees member3 not Ready")
		rejoin := leave("member3")
		// A Work is let go at once, but on kind a paused member does not
		// refuse requests: reconciles in flight to it when it froze wait
		// out the 32 s member timeout before the deletions get a worker.
		// Once, with every Work of a whole e2e run queued there (before
		// the member's Works stopped being queued when it goes not
		// ready), this took more than 60 s; 3 min is about what a person
		// waits for an unjoin.
		Eventually(func() bool {
			return apierrors.IsNotFound(hubClient.Get(ctx, client.ObjectKey{Name: "member3"}, &clusterv1alpha1.Cluster{}))
		}, "3m").Should(BeTrue(), "the Cluster of a member that cannot be reached goes once its Works are let go")

		By("starting member3 again: the Deployment is still there, no longer managed")
		Expect(outage.StartMember("member3")).To(Succeed())
		restarted = true
		Eventually(func() error {
			return members["member3"].Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &appsv1.Deployment{})
		}).Should(Succeed())

		By("registering member3 again: the hub takes its Deployment back")
		rejoin()
		Eventually(func() *metav1.Condition { return applied("member3", "Deployment", ns, name) }).Should(
			HaveField("Status", metav1.ConditionTrue))
		Expect(memberImage("member3", ns, name)).To(Equal("nginx:1.25"))
	})
})
