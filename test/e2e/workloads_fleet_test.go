package e2e

import (
	"os"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	"github.com/onsi/gomega/gexec"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/federator-dev/federator/apis/policy"
	"github.com/federator-dev/federator/pkg/fleet"
	"github.com/federator-dev/federator/test/framework"
)

// workloadFleet is a fleet whose members run workloads, as `federator up`
// starts it, with `federator controller` running against its hub. The
// suite's members are bare API servers (its member-watch spec counts the
// watches on members, and controllers, a scheduler and kwok in members would
// add theirs), which also keeps the suite's fleet light.
type workloadFleet struct {
	f   *fleet.Fleet
	hub client.Client
	// inMembers are clients of each member, by name.
	inMembers map[string]client.Client
	// controller is `federator controller` against the hub: its output is
	// its log.
	controller *gexec.Session
}

// workloads is started by the first spec of workloads_*_test.go that needs
// it and shared by the others: one more fleet of three members is what the
// suite can afford.
var (
	workloads     *workloadFleet
	stopWorkloads []func()
)

func useWorkloadFleet() *workloadFleet {
	GinkgoHelper()
	if workloads != nil {
		return workloads
	}
	// Not the spec's TempDir: that goes when the first spec ends.
	dir, err := os.MkdirTemp("", "federator-workloads-")
	Expect(err).NotTo(HaveOccurred())
	atSuiteEnd(func() { Expect(os.RemoveAll(dir)).To(Succeed()) })
	f, err := fleet.Start(ctx, fleet.Options{Dir: dir, Members: 3, BinDir: binDir, Workloads: true, Log: GinkgoWriter})
	Expect(err).NotTo(HaveOccurred())
	atSuiteEnd(func() { Expect(f.Stop()).To(Succeed()) })
	hub, err := client.New(f.Hub.Config, client.Options{Scheme: policy.NewScheme()})
	Expect(err).NotTo(HaveOccurred())
	controller := startController(f, atSuiteEnd)
	Eventually(controller.Out, "60s").Should(gbytes.Say("federator: controllers running against"))
	workloads = &workloadFleet{f: f, hub: hub, inMembers: joinMembers(f, hub), controller: controller}
	return workloads
}

// atSuiteEnd runs stop after the suite, the last registered first. Given
// func(...any) so that startController takes it as it takes DeferCleanup.
func atSuiteEnd(args ...any) {
	stop := args[0].(func())
	stopWorkloads = append(stopWorkloads, stop)
}

// stopWorkloadFleet stops what useWorkloadFleet started (the suite's
// AfterSuite calls it).
func stopWorkloadFleet() {
	for i := len(stopWorkloads) - 1; i >= 0; i-- {
		stopWorkloads[i]()
	}
}

// placeOnEveryMember applies a PropagationPolicy ns/name placing the
// template kind ns/name on every member.
func (w *workloadFleet) placeOnEveryMember(apiVersion, kind, ns, name string) {
	GinkgoHelper()
	var clusters []string
	for _, m := range w.f.Members {
		clusters = append(clusters, m.Name)
	}
	pp := &policyv1alpha1.PropagationPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "policy.karmada.io/v1alpha1", Kind: "PropagationPolicy"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: apiVersion, Kind: kind, Name: name}},
			Placement:         policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: clusters}},
		},
	}
	Expect(framework.Apply(ctx, w.hub, pp, fieldOwner)).To(Succeed())
}
