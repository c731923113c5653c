package e2e

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"sync"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	"github.com/onsi/gomega/gexec"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/federator-dev/federator/apis/policy"
	workkeys "github.com/federator-dev/federator/apis/work"
	"github.com/federator-dev/federator/pkg/fleet"
	"github.com/federator-dev/federator/pkg/membership"
	"github.com/federator-dev/federator/pkg/yamldocs"
	"github.com/federator-dev/federator/test/framework"
)

var ctx = context.Background()

// fieldOwner is the suite's field manager for what it applies to the hub.
const fieldOwner = "e2e"

// apply server-side applies YAML documents to the hub, as `kubectl apply
// --server-side` would, and returns the first error.
func apply(yaml string, args ...any) error {
	return yamldocs.Apply(ctx, hubClient, []byte(fmt.Sprintf(yaml, args...)), client.FieldOwner(fieldOwner), client.ForceOwnership)
}

func mustApply(yaml string, args ...any) {
	GinkgoHelper()
	Expect(apply(yaml, args...)).To(Succeed())
}

// namespace creates a hub namespace (propagated to every member) and waits
// until every member has it.
func namespace(name string) {
	GinkgoHelper()
	Expect(env.CreateNamespace(ctx, name)).To(Succeed())
	Eventually(func() error { return env.NamespaceInEveryMember(ctx, name) }).Should(Succeed())
}

// propagatedEverywhere starts a spec from a propagated Deployment: namespace
// ns, Deployment ns/name at nginx:1.25 and a PropagationPolicy to every
// member, and waits until every member runs it.
func propagatedEverywhere(ns, name string) {
	GinkgoHelper()
	namespace(ns)
	deployment(ns, name, "nginx:1.25")
	propagationPolicy(ns, name, nil)
	Eventually(func() map[string]string { return imagesEverywhere(ns, name) }).Should(Equal(everywhere("nginx:1.25")))
}

func deployment(ns, name, image string) {
	GinkgoHelper()
	Expect(framework.Apply(ctx, hubClient, framework.NewDeployment(ns, name, image), fieldOwner)).To(Succeed())
}

// deploymentRef names the Deployment ns/name, to read or record it.
func deploymentRef(ns, name string) *appsv1.Deployment {
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
}

// memberImage is the image of a Deployment in a member, "" when absent.
func memberImage(member, ns, name string) string {
	return env.MemberValue(ctx, member, deploymentRef(ns, name), framework.Image)
}

// workImage is the image a cluster's Work for a Deployment carries: what
// the hub wants there, dispatched or not.
func workImage(member, ns, name string) string {
	return env.WorkValue(ctx, member, "Deployment", ns, name, framework.Image)
}

// workOn is member's Work for Deployment ns/name on hub (a separate
// fleet's), nil while there is none.
func workOn(hub client.Client, member, ns, name string) *workv1alpha1.Work {
	w := &workv1alpha1.Work{}
	if err := hub.Get(ctx, framework.WorkKey(member, "Deployment", ns, name), w); err != nil {
		return nil
	}
	return w
}

// workImageOn is the image workOn's Work carries, "" while there is none.
func workImageOn(hub client.Client, member, ns, name string) string {
	if w := workOn(hub, member, ns, name); w != nil {
		if u := workkeys.FirstManifest(w); u != nil {
			return framework.Image(u)
		}
	}
	return ""
}

// dispatching is the Dispatching condition of a cluster's Work.
func dispatching(member, kind, ns, name string) *metav1.Condition {
	return env.WorkCondition(ctx, member, kind, ns, name, workv1alpha1.WorkDispatching)
}

// heldByDispatcher reports whether member's dispatcher holds the Work of
// Deployment ns/name at the Work's current spec: proof that it saw that
// spec and did not apply it.
func heldByDispatcher(member, ns, name string) bool {
	return env.HeldByDispatcher(ctx, member, "Deployment", ns, name)
}

// dispatcherHolds waits, for each of clusters, until its Work of Deployment
// ns/name carries image and its dispatcher reports that Work held at its
// current generation: proof, without sleeping, that the dispatcher saw the
// held version and did not apply it. What a recorder stored up to then is
// what the hold let through.
func dispatcherHolds(ns, name, image string, clusters ...string) {
	GinkgoHelper()
	for _, m := range clusters {
		Eventually(func() string { return workImage(m, ns, name) }).Should(Equal(image), m)
		Eventually(func() bool { return heldByDispatcher(m, ns, name) }).Should(BeTrue(),
			"%s's dispatcher never reported its Work of %s/%s held at the generation carrying %s", m, ns, name, image)
	}
}

// applied is the Applied condition of a cluster's Work.
func applied(member, kind, ns, name string) *metav1.Condition {
	return env.WorkCondition(ctx, member, kind, ns, name, workv1alpha1.WorkApplied)
}

// imagesEverywhere is each member's image of a Deployment.
func imagesEverywhere(ns, name string) map[string]string {
	return env.Images(ctx, ns, name)
}

// setImage changes a hub Deployment's image, as `kubectl set image` does.
func setImage(ns, name, image string) {
	GinkgoHelper()
	Expect(framework.SetImage(ctx, hubClient, ns, name, image)).To(Succeed())
}

// patchPolicy merge-patches a PropagationPolicy, as `kubectl patch --type merge`.
func patchPolicy(ns, name, mergePatch string) {
	GinkgoHelper()
	Expect(framework.PatchPolicy(ctx, hubClient, ns, name, mergePatch)).To(Succeed())
}

// propagationPolicy applies a PropagationPolicy selecting one Deployment for
// member1..member3, with suspension (nil: none).
func propagationPolicy(ns, name string, suspension *policyv1alpha1.Suspension) {
	GinkgoHelper()
	Expect(applyPropagationPolicy(ns, name, suspension)).To(Succeed())
}

// applyPropagationPolicy is propagationPolicy for a spec the hub may refuse.
func applyPropagationPolicy(ns, name string, suspension *policyv1alpha1.Suspension) error {
	pp := framework.NewDeploymentPolicy(ns, name, name, env.MemberNames()...)
	pp.Spec.Suspension = suspension
	return framework.Apply(ctx, hubClient, pp, fieldOwner)
}

// everywhere is a member → value map with the same value for every member.
func everywhere(v string) map[string]string {
	out := map[string]string{}
	for m := range members {
		out[m] = v
	}
	return out
}

// recordMember starts recording every version of obj (its kind, namespace
// and name) that member stores, until the end of the spec.
func recordMember(member string, obj client.Object) *framework.Recorder {
	GinkgoHelper()
	r, err := env.RecordMember(ctx, member, obj)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(r.Stop)
	return r
}

// recordHub starts recording every version of obj the hub stores, until
// the end of the spec.
func recordHub(obj client.Object) *framework.Recorder {
	GinkgoHelper()
	r, err := env.RecordHub(ctx, obj)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(r.Stop)
	return r
}

// recordEverywhere is recordMember in every member, by member name.
func recordEverywhere(obj client.Object) map[string]*framework.Recorder {
	GinkgoHelper()
	out := map[string]*framework.Recorder{}
	for m := range members {
		out[m] = recordMember(m, obj)
	}
	return out
}

// stored is field of every version the recorder saw stored up to now: it
// waits until the recorder has caught up and fails the spec if its record
// has a gap, so an absent value means it was never stored.
func stored(r *framework.Recorder, field framework.Field) []string {
	GinkgoHelper()
	return storedBefore(r, mark(r), field)
}

// storedBefore is field of every version recorded before m; the record
// must have no gap.
func storedBefore(r *framework.Recorder, m framework.Mark, field framework.Field) []string {
	GinkgoHelper()
	Expect(r.Err()).NotTo(HaveOccurred())
	return r.ValuesBetween(0, m, field)
}

// mark is the point the recorder has reached once it caught up with what
// its cluster stores now.
func mark(r *framework.Recorder) framework.Mark {
	GinkgoHelper()
	m, err := r.Mark(ctx)
	Expect(err).NotTo(HaveOccurred())
	return m
}

// newVersionHeldEverywhere sets Deployment ns/name's image, waits until
// every member's dispatcher holds the Work carrying it, and proves from the
// recorders that no member stored it up to then. It returns the marks to
// check again, later, what was stored while held.
func newVersionHeldEverywhere(ns, name, image string, recorders map[string]*framework.Recorder) map[string]framework.Mark {
	GinkgoHelper()
	setImage(ns, name, image)
	dispatcherHolds(ns, name, image, env.MemberNames()...)
	held := markEverywhere(recorders)
	for m, r := range recorders {
		Expect(storedBefore(r, held[m], framework.Image)).NotTo(ContainElement(image), "%s stored the held version", m)
	}
	return held
}

// markEverywhere is mark for each recorder, by member name.
func markEverywhere(recorders map[string]*framework.Recorder) map[string]framework.Mark {
	GinkgoHelper()
	out := map[string]framework.Mark{}
	for m, r := range recorders {
		out[m] = mark(r)
	}
	return out
}

// recordedSoFar is field of every version each recorder has seen so far,
// without waiting: for polls while something is held.
func recordedSoFar(recorders map[string]*framework.Recorder, field framework.Field) map[string][]string {
	out := map[string][]string{}
	for m, r := range recorders {
		out[m] = r.Values(field)
	}
	return out
}

var (
	buildOnce     sync.Once
	builtBinary   string
	buildBinError error
)

// federatorBinary builds cmd/federator once per suite run.
func federatorBinary() string {
	GinkgoHelper()
	buildOnce.Do(func() {
		builtBinary, buildBinError = gexec.Build("github.com/federator-dev/federator/cmd/federator")
	})
	Expect(buildBinError).NotTo(HaveOccurred())
	return builtBinary
}

var _ = AfterSuite(func() {
	stopWorkloadFleet()
	gexec.CleanupBuildArtifacts()
})

// hubEvents lists the Events on a hub object.
func hubEvents(ns, kind, name string) ([]corev1.Event, error) {
	events := &corev1.EventList{}
	if err := hubClient.List(ctx, events, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	var out []corev1.Event
	for _, e := range events.Items {
		if e.InvolvedObject.Kind == kind && e.InvolvedObject.Name == name {
			out = append(out, e)
		}
	}
	return out, nil
}

// templateEvents lists "reason: message" of the Events on a hub object.
func templateEvents(ns, kind, name string) []string {
	events, err := hubEvents(ns, kind, name)
	if err != nil {
		return []string{err.Error()}
	}
	var out []string
	for _, e := range events {
		out = append(out, e.Reason+": "+e.Message)
	}
	return out
}

// eventCount is how many times an Event with reason and message was sent
// about a hub object, -1 when the Events cannot be read. A repeat of the
// same Event is stored once with its count raised, so a test that needs a
// new one compares counts.
func eventCount(ns, kind, name, reason, message string) int32 {
	events, err := hubEvents(ns, kind, name)
	if err != nil {
		return -1
	}
	var n int32
	for _, e := range events {
		if e.Reason == reason && e.Message == message {
			n += max(e.Count, 1)
		}
	}
	return n
}

// reportReady plays a member's deployment controller: all replicas of the
// Deployment ns/name in member are ready.
func reportReady(member, ns, name string) {
	GinkgoHelper()
	Eventually(func() error {
		d := &appsv1.Deployment{}
		if err := members[member].Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, d); err != nil {
			return err
		}
		r := *d.Spec.Replicas
		d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: r, ReadyReplicas: r,
			UpdatedReplicas: r, AvailableReplicas: r}
		return members[member].Status().Update(ctx, d)
	}).Should(Succeed())
}

// workReadyReplicas is the ready replicas the Work of Deployment ns/name for
// member reports from the member; -1 when it reports no status.
func workReadyReplicas(member, ns, name string) int32 {
	return env.WorkReadyReplicas(ctx, member, ns, name)
}

// appliedCurrent holds once member's Work of kind ns/name is applied at its
// current generation.
func appliedCurrent(member, kind, ns, name string) error {
	return env.AppliedCurrent(ctx, member, kind, ns, name)
}

// separateFleet starts a fleet for one spec beside the suite's, stopped
// after the spec: a bare hub (no CRDs: `federator controller` installs
// them), members member1..n, and kube-controller-manager in every cluster
// when withControllerManager. It returns the fleet and a hub client.
func separateFleet(n int, withControllerManager bool) (*fleet.Fleet, client.Client) {
	GinkgoHelper()
	f, err := fleet.Start(ctx, fleet.Options{Dir: GinkgoT().TempDir(), Members: n, BinDir: binDir,
		ControllerManager: withControllerManager, Log: GinkgoWriter})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(f.Stop)
	hub, err := client.New(f.Hub.Config, client.Options{Scheme: policy.NewScheme()})
	Expect(err).NotTo(HaveOccurred())
	return f, hub
}

// runController runs `federator controller` against f's hub, as a
// process of its own (the suite's controllers already run in this one),
// until the end of the spec; it returns once the controllers run.
func runController(f *fleet.Fleet, args ...string) *gexec.Session {
	GinkgoHelper()
	session := startController(f, DeferCleanup, args...)
	Eventually(session.Out, "60s").Should(gbytes.Say("federator: controllers running against"))
	return session
}

// startController starts `federator controller` against f's hub, with
// args, and hands cleanup the function that stops it. Without leader
// election unless args set --leader-elect: a spec that kills a controller
// and starts another wants it to run at once, not a lease duration later.
func startController(f *fleet.Fleet, cleanup func(args ...any), args ...string) *gexec.Session {
	GinkgoHelper()
	if !slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--leader-elect") }) {
		args = append([]string{"--leader-elect=false"}, args...)
	}
	session, err := gexec.Start(exec.Command(federatorBinary(), append([]string{"controller", "--kubeconfig", f.Hub.KubeconfigPath}, args...)...),
		GinkgoWriter, GinkgoWriter)
	Expect(err).NotTo(HaveOccurred())
	cleanup(func() { session.Kill().Wait("10s") })
	return session
}

// joinMembers registers f's members with hub, as `karmadactl join` does,
// and returns a client of each, by name.
func joinMembers(f *fleet.Fleet, hub client.Client) map[string]client.Client {
	GinkgoHelper()
	out := map[string]client.Client{}
	for _, m := range f.Members {
		Expect(membership.Register(ctx, hub, m.Name, m.Config)).To(Succeed())
		c, err := client.New(m.Config, client.Options{Scheme: policy.NewScheme()})
		Expect(err).NotTo(HaveOccurred())
		out[m.Name] = c
	}
	return out
}

// faults puts members out of service and back, on either provider: the
// local fleet stops or freezes a member's API server process, kind pauses
// the member's node containers.
func faults() fleet.Faults {
	GinkgoHelper()
	f, ok := env.Running.(fleet.Faults)
	if !ok {
		Skip(fmt.Sprintf("the fleet of FLEET=%s cannot put a member out of service", fleetProvider))
	}
	return f
}

// leave deletes member's Cluster from the hub, as an operator unregistering
// it would; rejoin registers it again (at the latest when the spec ends),
// once the Cluster is gone: its finalizer holds it until the hub has let
// go of the member, and registering meanwhile would update the Cluster
// that is going.
func leave(member string) (rejoin func()) {
	GinkgoHelper()
	m := env.MemberEndpoints[member]
	var once sync.Once
	rejoin = func() {
		once.Do(func() {
			// As long as a spec waits for an unreachable member to leave:
			// a member left unregistered fails every later spec.
			Eventually(func() bool {
				return apierrors.IsNotFound(hubClient.Get(ctx, client.ObjectKey{Name: member}, &clusterv1alpha1.Cluster{}))
			}, "3m").Should(BeTrue(), "the %s Cluster is gone before it joins again", member)
			Expect(membership.Register(ctx, hubClient, member, m.Config)).To(Succeed())
		})
	}
	DeferCleanup(rejoin)
	Expect(hubClient.Delete(ctx, &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: member}})).To(Succeed())
	return rejoin
}

// propagateShopWeb applies Deployment shop/web and a PropagationPolicy
// selecting it to a hub other than the suite's, and waits until member
// has the Deployment.
func propagateShopWeb(hub, member client.Client) {
	GinkgoHelper()
	Expect(yamldocs.Apply(ctx, hub, []byte(`
apiVersion: v1
kind: Namespace
metadata: {name: shop}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: app, image: nginx:1.25}]}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: shop}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
`), client.FieldOwner("e2e"))).To(Succeed())
	Eventually(func() error {
		return member.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "web"}, &appsv1.Deployment{})
	}).Should(Succeed())
}

// bareMembersOnly skips a spec that needs the suite's members bare, as the
// local fleet's are: no controller of their own. On FLEET=kind every
// member runs kube-controller-manager, whose deployment controller writes
// Deployment status (a spec's own status report would fight it, and the
// suite's nginx images cannot be pulled there) and watches Deployments (so
// a member's watch count is never federator's alone).
func bareMembersOnly(why string) {
	GinkgoHelper()
	if fleetProvider == framework.ProviderKind {
		Skip("FLEET=kind: " + why + "; the members run a controller manager of their own")
	}
}
