package hub

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache/informertest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/federator-dev/federator/apis/policy"
)

// The Lease's namespace is created where missing; a controller that may
// not read namespaces (in a cluster, with a Role in its own) is left to
// its own namespace; one that may not create it is told what to do.
func TestEnsureNamespace(t *testing.T) {
	ctx := context.Background()
	forbidden := func(verb string) interceptor.Funcs {
		err := apierrors.NewForbidden(schema.GroupResource{Resource: "namespaces"}, Namespace, nil)
		if verb == "get" {
			return interceptor.Funcs{Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
				return err
			}}
		}
		return interceptor.Funcs{Create: func(context.Context, client.WithWatch, client.Object, ...client.CreateOption) error { return err }}
	}
	c := fake.NewClientBuilder().WithScheme(policy.NewScheme()).Build()
	if err := ensureNamespace(ctx, c, Namespace); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, client.ObjectKey{Name: Namespace}, &corev1.Namespace{}); err != nil {
		t.Errorf("missing namespace not created: %v", err)
	}
	if err := ensureNamespace(ctx, c, Namespace); err != nil {
		t.Errorf("existing namespace: %v", err)
	}
	if err := ensureNamespace(ctx, fake.NewClientBuilder().WithInterceptorFuncs(forbidden("get")).Build(), Namespace); err != nil {
		t.Errorf("namespaces not readable: %v, want nothing done", err)
	}
	err := ensureNamespace(ctx, fake.NewClientBuilder().WithInterceptorFuncs(forbidden("create")).Build(), Namespace)
	if err == nil || !strings.Contains(err.Error(), "namespace federator-system, for the leader election Lease federator-controller") ||
		!strings.Contains(err.Error(), "--leader-election-namespace") {
		t.Errorf("namespace not creatable: %v, want it named and what to do", err)
	}
}

// /readyz: ready only once the caches have synced; a cache that has not
// started answers within the probe's timeout, not ready.
func TestReadyOnceCachesSynced(t *testing.T) {
	req := httptest.NewRequest(http.MethodGet, "/readyz", nil)
	synced, notSynced := true, false
	if err := cachesSynced(&informertest.FakeInformers{Synced: &synced})(req); err != nil {
		t.Errorf("synced: %v", err)
	}
	if err := cachesSynced(&informertest.FakeInformers{Synced: &notSynced})(req); err == nil {
		t.Error("not synced: ready")
	}
	notStarted, err := cache.New(&rest.Config{Host: "http://127.0.0.1:1"}, cache.Options{Scheme: policy.NewScheme(), Mapper: meta.NewDefaultRESTMapper(nil)})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := cachesSynced(notStarted)(req); err == nil || time.Since(start) > time.Second {
		t.Errorf("not started: %v after %s, want not ready within a second", err, time.Since(start))
	}
}
