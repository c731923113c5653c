package e2e

import (
	"time"

	"fmt"

	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	"github.com/karmada-io/karmada/pkg/util/names"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/federator-dev/federator/pkg/fleet"
	"github.com/federator-dev/federator/test/framework"
)

// Members that run workloads (workloads_fleet_test.go): Deployments become
// Available in each, and their status comes back to the hub.
var _ = Describe("workloads in members", Ordered, func() {
	var (
		f         *fleet.Fleet
		hub       client.Client
		inMembers map[string]client.Client
	)
	BeforeAll(func() {
		w := useWorkloadFleet()
		f, hub, inMembers = w.f, w.hub, w.inMembers
	})

	It("fills a ServiceAccount token Secret in a member, with a token its API server accepts, as `karmadactl join` waits for", func() {
		m := f.Members[0]
		c := inMembers[m.Name]
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "karmada-impersonator"}}
		Expect(c.Create(ctx, sa)).To(Succeed())
		secret := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "karmada-impersonator",
				Annotations: map[string]string{corev1.ServiceAccountNameKey: sa.Name}},
			Type: corev1.SecretTypeServiceAccountToken,
		}
		Expect(c.Create(ctx, secret)).To(Succeed())
		Eventually(func() []byte {
			Expect(c.Get(ctx, client.ObjectKeyFromObject(secret), secret)).To(Succeed())
			return secret.Data[corev1.ServiceAccountTokenKey]
		}).ShouldNot(BeEmpty())

		asSA := rest.AnonymousClientConfig(m.Config)
		asSA.BearerToken = string(secret.Data[corev1.ServiceAccountTokenKey])
		saClient, err := client.New(asSA, client.Options{})
		Expect(err).NotTo(HaveOccurred())
		review := &authenticationv1.SelfSubjectReview{}
		Expect(saClient.Create(ctx, review)).To(Succeed())
		Expect(review.Status.UserInfo.Username).To(Equal("system:serviceaccount:default:karmada-impersonator"))
	})

	It("makes a Deployment placed on three members Available in each, none on the hub, and sums the members' status into the template", func() {
		const ns, name = "default", "shop"
		Expect(framework.Apply(ctx, hub, framework.NewDeployment(ns, name, "nginx:1.25"), fieldOwner)).To(Succeed())
		Expect(framework.Apply(ctx, hub, framework.NewDeploymentPolicy(ns, name, name, "member1", "member2", "member3"), fieldOwner)).To(Succeed())
		for m, c := range inMembers {
			Eventually(func(g Gomega) {
				var sets appsv1.ReplicaSetList
				g.Expect(c.List(ctx, &sets, client.InNamespace(ns), client.MatchingLabels{"app": name})).To(Succeed())
				g.Expect(sets.Items).To(HaveLen(1), m)
				var pods corev1.PodList
				g.Expect(c.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{"app": name})).To(Succeed())
				g.Expect(pods.Items).To(HaveLen(2), m)
				for _, p := range pods.Items {
					g.Expect(p.Spec.NodeName).NotTo(BeEmpty(), "%s: pod %s scheduled", m, p.Name)
					g.Expect(p.Status.Phase).To(Equal(corev1.PodRunning), "%s: pod %s", m, p.Name)
				}
				d := &appsv1.Deployment{}
				g.Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, d)).To(Succeed())
				g.Expect(deploymentCondition(d, appsv1.DeploymentAvailable)).To(Equal(corev1.ConditionTrue), m)
				g.Expect(d.Status.ReadyReplicas).To(BeEquivalentTo(2), m)
			}).Should(Succeed())
		}
		By("the hub template's status is the sum of the members'")
		Eventually(func(g Gomega) appsv1.DeploymentStatus {
			d := &appsv1.Deployment{}
			g.Expect(hub.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, d)).To(Succeed())
			return appsv1.DeploymentStatus{Replicas: d.Status.Replicas, ReadyReplicas: d.Status.ReadyReplicas,
				AvailableReplicas: d.Status.AvailableReplicas, UpdatedReplicas: d.Status.UpdatedReplicas}
		}).Should(Equal(appsv1.DeploymentStatus{Replicas: 6, ReadyReplicas: 6, AvailableReplicas: 6, UpdatedReplicas: 6}))
		// Every member's controllers have acted; the hub's would have too.
		var sets appsv1.ReplicaSetList
		Expect(hub.List(ctx, &sets, client.InNamespace(ns))).To(Succeed())
		var onHub []string
		for _, rs := range sets.Items {
			onHub = append(onHub, rs.Name)
		}
		Expect(onHub).To(BeEmpty(), "the hub's Deployment is a template: no ReplicaSet")

		By("staying Available past the node monitor's grace: kwok renews the simulated nodes' Leases")
		dyn, err := dynamic.NewForConfig(f.Member("member1").Config)
		Expect(err).NotTo(HaveOccurred())
		ready := framework.JSONPath("{.status.readyReplicas}")
		r, err := framework.Record(ctx, dyn, inMembers["member1"], &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}, "member1")
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(r.Stop)
		// Every version member1 stores for 70 s (the grace the node
		// lifecycle controller gives by default is 50 s) has 2 ready.
		time.Sleep(70 * time.Second)
		Expect(r.Sync(ctx)).To(Succeed())
		Expect(r.Values(ready)).To(HaveEach("2"), "a pod went unready: a node was taken for dead between its reports")
	})

	It("stops a rollout to an image tagged -broken short of Available in every member, and the hub template says so", func() {
		const ns, name = "default", "till"
		Expect(framework.Apply(ctx, hub, framework.NewDeployment(ns, name, "nginx:1.25"), fieldOwner)).To(Succeed())
		Expect(framework.Apply(ctx, hub, framework.NewDeploymentPolicy(ns, name, name, "member1", "member2", "member3"), fieldOwner)).To(Succeed())
		Eventually(func(g Gomega) {
			d := &appsv1.Deployment{}
			g.Expect(hub.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, d)).To(Succeed())
			g.Expect(d.Status.AvailableReplicas).To(BeEquivalentTo(6))
		}).Should(Succeed())

		// Every version each member stores from now on: the rollout must
		// never complete (all replicas updated and none unavailable).
		rollout := framework.JSONPath("{.spec.template.spec.containers[0].image} generation={.metadata.generation} " +
			"observed={.status.observedGeneration} updated={.status.updatedReplicas} unavailable={.status.unavailableReplicas}")
		recorders := map[string]*framework.Recorder{}
		for _, m := range f.Members {
			dyn, err := dynamic.NewForConfig(m.Config)
			Expect(err).NotTo(HaveOccurred())
			r, err := framework.Record(ctx, dyn, inMembers[m.Name], deploymentRef(ns, name), m.Name)
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(r.Stop)
			recorders[m.Name] = r
		}

		const broken = "nginx:1.26-broken"
		Expect(framework.SetImage(ctx, hub, ns, name, broken)).To(Succeed())
		for m, c := range inMembers {
			Eventually(func(g Gomega) {
				var pods corev1.PodList
				g.Expect(c.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{"app": name})).To(Succeed())
				var brokenRunning int
				for _, p := range pods.Items {
					if p.Spec.Containers[0].Image == broken && p.Status.Phase == corev1.PodRunning {
						// kwok's last word on a -broken pod: it stays so.
						g.Expect(podReady(p)).To(BeFalse(), "%s: pod %s", m, p.Name)
						brokenRunning++
					}
				}
				g.Expect(brokenRunning).To(BeNumerically(">=", 1), m)
			}).Should(Succeed())
		}
		By("the hub template counts one unavailable new replica per member, and the old ones still ready")
		Eventually(func(g Gomega) appsv1.DeploymentStatus {
			d := &appsv1.Deployment{}
			g.Expect(hub.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, d)).To(Succeed())
			return appsv1.DeploymentStatus{ReadyReplicas: d.Status.ReadyReplicas,
				UpdatedReplicas: d.Status.UpdatedReplicas, UnavailableReplicas: d.Status.UnavailableReplicas}
		}).Should(Equal(appsv1.DeploymentStatus{ReadyReplicas: 6, UpdatedReplicas: 3, UnavailableReplicas: 3}))
		By("each member's Work, and the binding, report the Deployment Unhealthy, as Karmada's interpreter judges it")
		Eventually(func(g Gomega) {
			for _, m := range f.Members {
				w := &workv1alpha1.Work{}
				g.Expect(hub.Get(ctx, framework.WorkKey(m.Name, "Deployment", ns, name), w)).To(Succeed())
				g.Expect(w.Status.ManifestStatuses).To(ConsistOf(HaveField("Health", workv1alpha1.ResourceUnhealthy)), m.Name)
			}
			rb := &workv1alpha2.ResourceBinding{}
			g.Expect(hub.Get(ctx, client.ObjectKey{Namespace: ns, Name: names.GenerateBindingName("Deployment", name)}, rb)).To(Succeed())
			g.Expect(rb.Status.AggregatedStatus).To(HaveLen(3))
			g.Expect(rb.Status.AggregatedStatus).To(HaveEach(HaveField("Health", workv1alpha2.ResourceUnhealthy)))
		}).Should(Succeed())

		for m, r := range recorders {
			// A version the deployment controller has seen: status at the
			// spec's generation (the write of the new spec still carries
			// the old, complete rollout's status).
			var observed []string
			for _, v := range stored(r, rollout) {
				var image string
				var generation, seen, updated, unavailable int
				_, _ = fmt.Sscanf(v, "%s generation=%d observed=%d updated=%d unavailable=%d", &image, &generation, &seen, &updated, &unavailable)
				if image == broken && seen == generation {
					observed = append(observed, fmt.Sprintf("updated=%d unavailable=%d", updated, unavailable))
				}
			}
			Expect(observed).NotTo(BeEmpty(), m)
			Expect(observed).NotTo(ContainElement("updated=2 unavailable=0"), "%s: the rollout to %s completed", m, broken)
		}
	})
})

func deploymentCondition(d *appsv1.Deployment, t appsv1.DeploymentConditionType) corev1.ConditionStatus {
	for _, c := range d.Status.Conditions {
		if c.Type == t {
			return c.Status
		}
	}
	return corev1.ConditionUnknown
}

func podReady(p corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
