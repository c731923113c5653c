package e2e

import (
	"reflect"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	"github.com/karmada-io/karmada/pkg/util/names"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/federator-dev/federator/test/framework"
)

// Every hub write costs: once a rollout has settled, nothing is rewritten,
// neither on the hub (template, binding, Works, Clusters) nor in members.
var _ = Describe("a settled fleet", func() {
	const ns, name = "quiet", "web"

	It("writes nothing while nothing changes", func() {
		namespace(ns)
		deployment(ns, name, "nginx:1.25")
		propagationPolicy(ns, name, framework.SuspendClusters("member3"))
		Eventually(func() map[string]string { return imagesEverywhere(ns, name) }).Should(Equal(
			map[string]string{"member1": "nginx:1.25", "member2": "nginx:1.25", "member3": ""}))
		for m := range members {
			Eventually(func() *metav1.Condition { return dispatching(m, "Deployment", ns, name) }).ShouldNot(BeNil(), m)
		}

		versions := func() map[string]string {
			out := map[string]string{}
			read := func(key string, c client.Client, obj client.Object) {
				if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
					out[key] = err.Error()
					return
				}
				out[key] = obj.GetResourceVersion()
			}
			read("template", hubClient, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})
			read("binding", hubClient, &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns,
				Name: names.GenerateBindingName("Deployment", name)}})
			for m := range members {
				read("work/"+m, hubClient, &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{
					Namespace: names.GenerateExecutionSpaceName(m), Name: names.GenerateWorkName("Deployment", name, ns)}})
				read("cluster/"+m, hubClient, &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: m}})
				if m != "member3" {
					read("member/"+m, members[m], &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})
				}
			}
			return out
		}
		var settled map[string]string
		Eventually(func() bool {
			now := versions()
			same := reflect.DeepEqual(now, settled)
			settled = now
			return same
		}, "30s", "2s").Should(BeTrue(), "the rollout settles: two readings 2s apart agree")
		// Several cluster status probes (1s interval in this suite) and
		// controller resyncs fit in this window.
		Consistently(versions, "5s", "500ms").Should(Equal(settled))
	})
})
