package membership

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// NewCredentialReader returns the reader Config should be given in a
// controller manager. The manager's own cache would watch, and hold in
// memory, every Secret of the hub the first time one is read; this reader
// keeps a cache of its own holding only the Secrets of karmada-cluster,
// where members are registered (as karmadactl join does by default). A
// Cluster whose secretRef names another namespace is still served, by a
// read from the API server each time.
//
// The cache is added to mgr, which starts it and waits for it to sync
// before any controller runs.
func NewCredentialReader(mgr manager.Manager) (client.Reader, error) {
	c, err := cache.New(mgr.GetConfig(), cache.Options{
		HTTPClient:        mgr.GetHTTPClient(),
		Scheme:            mgr.GetScheme(),
		Mapper:            mgr.GetRESTMapper(),
		DefaultNamespaces: map[string]cache.Config{ClusterNamespace: {}},
	})
	if err != nil {
		return nil, fmt.Errorf("membership: cache of member credentials in %s: %w", ClusterNamespace, err)
	}
	// Created now, so the manager's wait for synced caches covers it: no
	// controller reads a Secret the cache has not listed yet.
	if _, err := c.GetInformer(context.Background(), &corev1.Secret{}, cache.BlockUntilSynced(false)); err != nil {
		return nil, fmt.Errorf("membership: watching Secrets in %s: %w", ClusterNamespace, err)
	}
	if err := mgr.Add(credentialCache{c}); err != nil {
		return nil, err
	}
	return credentialReader{cached: c, direct: mgr.GetAPIReader()}, nil
}

// credentialCache makes the manager run the cache with its other caches.
type credentialCache struct{ cache.Cache }

func (c credentialCache) GetCache() cache.Cache { return c.Cache }

// credentialReader reads Secrets of karmada-cluster from cached and
// everything else from direct.
type credentialReader struct {
	cached client.Reader
	direct client.Reader
}

func (r credentialReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if _, secret := obj.(*corev1.Secret); secret && key.Namespace == ClusterNamespace {
		return r.cached.Get(ctx, key, obj, opts...)
	}
	return r.direct.Get(ctx, key, obj, opts...)
}

// List is served by the API server: Config only gets Secrets by name.
func (r credentialReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return r.direct.List(ctx, list, opts...)
}
