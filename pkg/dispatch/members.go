package dispatch

import (
	"context"
	"fmt"
	"net/http"
	"sync"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// ConfigFunc returns how to reach a registered member cluster (from its
// Cluster object and credentials Secret on the hub).
type ConfigFunc func(ctx context.Context, cluster string) (*rest.Config, error)

// ClientOptions bound the requests federator makes to one member.
type ClientOptions struct {
	// QPS and Burst for each member's client; high defaults so client-go's
	// 5/10 never caps throughput.
	QPS   float32
	Burst int
}

// Members hands out one client per member cluster, rebuilt when the
// member's endpoint or credentials change.
type Members struct {
	config  ConfigFunc
	options ClientOptions
	// guard checks each write to a member first (Guard): a Freeze holds it.
	guard *FreezeGuard

	mu      sync.Mutex
	clients map[string]memberClient
}

type memberClient struct {
	identity string // endpoint + credentials the client was built from
	client   client.Client
}

// NewMembers returns a client registry.
func NewMembers(config ConfigFunc, options ClientOptions) *Members {
	return &Members{config: config, options: options, clients: map[string]memberClient{}}
}

// identity is what a member client is built from: endpoint and credentials.
func identity(cfg *rest.Config) string {
	return cfg.Host + "\x00" + cfg.BearerToken + "\x00" + string(cfg.CAData) + "\x00" + string(cfg.CertData)
}

// Guard has every write through the clients handed out from now on
// checked by g first, and refused while a Freeze holds the member (or
// whether one does cannot be told). Set it before the first Client.
func (m *Members) Guard(g *FreezeGuard) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.guard = g
	m.clients = map[string]memberClient{}
}

// Frozen is nil when no Freeze holds cluster now, else a FrozenError: the
// check every write through Client makes, for a write that does not go
// through it (the hub deleting a Pull cluster's Work, which its agent
// acts on at once).
func (m *Members) Frozen(ctx context.Context, cluster string) error {
	m.mu.Lock()
	g := m.guard
	m.mu.Unlock()
	return g.Check(ctx, cluster)
}

// Forget drops the client of a member that left the federation.
func (m *Members) Forget(cluster string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.clients, cluster)
}

// Client returns a client for cluster.
func (m *Members) Client(ctx context.Context, cluster string) (client.Client, error) {
	cfg, err := m.config(ctx, cluster)
	if err != nil {
		return nil, err
	}
	identity := identity(cfg)
	m.mu.Lock()
	defer m.mu.Unlock()
	if c, ok := m.clients[cluster]; ok && c.identity == identity {
		return c.client, nil
	}
	cfg = m.limited(cfg)
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: build HTTP client: %w", cluster, err)
	}
	w, err := newMemberClient(cfg, httpClient)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", cluster, err)
	}
	var c client.Client = w
	if m.guard != nil {
		c = guarded(w, cluster, m.guard)
	}
	m.clients[cluster] = memberClient{identity: identity, client: c}
	return c, nil
}

// limited is a copy of cfg bound by the member client options, for every
// connection federator opens to a member: requests and watches alike.
func (m *Members) limited(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = m.options.QPS, m.options.Burst
	return cfg
}

func newMemberClient(cfg *rest.Config, httpClient *http.Client) (client.WithWatch, error) {
	// The REST mapper discovers lazily, so building a client for a member
	// that is down succeeds; requests fail until it is back.
	mapper, err := apiutil.NewDynamicRESTMapper(cfg, httpClient)
	if err != nil {
		return nil, err
	}
	return client.NewWithWatch(cfg, client.Options{HTTPClient: httpClient, Mapper: mapper})
}
