package dispatch

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/federator-dev/federator/apis/policy"
)

// A member is sent no more writes at once than its bound, however many of
// its Works are reconciled at once: the workers outnumber the writes so
// that a Work's hub round trip does not keep the next Work from the member.
func TestMemberIsSentNoMoreWritesAtOnceThanItsBound(t *testing.T) {
	const bound, works = 2, 8
	var inFlight, most atomic.Int32
	memberFuncs := interceptor.Funcs{Apply: func(ctx context.Context, c client.WithWatch, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		time.Sleep(20 * time.Millisecond) // a member round trip
		return c.Apply(ctx, obj, opts...)
	}}
	d := newDispatchTest(t, interceptor.Funcs{}, nil)
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(appsv1.SchemeGroupVersion.WithKind("Deployment"), meta.RESTScopeNamespace)
	member := fake.NewClientBuilder().WithScheme(policy.NewScheme()).WithRESTMapper(mapper).WithInterceptorFuncs(memberFuncs).Build()
	d.r.Members.clients[testCluster] = memberClient{identity: identity(&rest.Config{Host: "https://member1.test"}), client: member}
	d.r.memberWrites = make(chan struct{}, bound)

	var wg sync.WaitGroup
	errs := make(chan error, works)
	for i := range works {
		w := workFixture(t, false, nil)
		w.Name = fmt.Sprintf("web-%d", i)
		w.Spec.Workload.Manifests[0].Raw = []byte(fmt.Sprintf(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web-%d","namespace":"shop"},`+
			`"spec":{"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"web","image":"nginx:1.25"}]}}}}`, i))
		if err := d.hub.Create(context.Background(), w); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := d.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(w)})
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("reconcile: %v", err)
		}
	}
	list := &appsv1.DeploymentList{}
	if err := member.List(context.Background(), list); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != works {
		t.Errorf("the member holds %d Deployments, want %d", len(list.Items), works)
	}
	if got := most.Load(); got > bound {
		t.Errorf("the member was sent %d writes at once, want at most %d", got, bound)
	}
}
