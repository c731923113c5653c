package clusterstatus

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sync"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
)

// probeResult is what one probe of a member read.
type probeResult struct {
	// err: the member's API server did not answer /version; nothing else
	// was read.
	err     error
	version string
	// enablements are the APIs discovery read; discoveryErr says what it
	// could not read (a partial list comes with an error).
	enablements  []clusterv1alpha1.APIEnablement
	discoveryErr error
}

// memberClients keeps one HTTP client per member for its probes, so a
// probe reuses the member's connections. Building one per probe costs a
// TCP and TLS handshake each time wherever client-go cannot share its
// transports (a member behind spec.proxyURL), and leaves the old idle
// connections open until they time out.
type memberClients struct {
	config ConfigFunc

	mu      sync.Mutex
	clients map[string]memberClient
}

type memberClient struct {
	identity string
	config   *rest.Config
	http     *http.Client
}

func newMemberClients(config ConfigFunc) *memberClients {
	return &memberClients{config: config, clients: map[string]memberClient{}}
}

// identity is what a member's HTTP client is built from; the client is
// built again when it changes (new credentials, endpoint or proxy).
func identity(cfg *rest.Config) string {
	proxy := ""
	if cfg.Proxy != nil {
		if u, err := url.Parse(cfg.Host); err == nil {
			if p, err := cfg.Proxy(&http.Request{URL: u}); err == nil && p != nil {
				proxy = p.String()
			}
		}
	}
	return fmt.Sprintf("%s\x00%s\x00%s\x00%s\x00%s\x00%t\x00%s", cfg.Host, cfg.BearerToken, cfg.CAData, cfg.CertData, cfg.KeyData,
		cfg.Insecure, proxy)
}

// get returns the member's config and HTTP client.
func (m *memberClients) get(ctx context.Context, cluster string) (*rest.Config, *http.Client, error) {
	cfg, err := m.config(ctx, cluster)
	if err != nil {
		return nil, nil, err
	}
	id := identity(cfg)
	m.mu.Lock()
	defer m.mu.Unlock()
	if c, ok := m.clients[cluster]; ok && c.identity == id {
		return c.config, c.http, nil
	}
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("cluster %s: build HTTP client: %w", cluster, err)
	}
	if old, ok := m.clients[cluster]; ok && old.http.Transport != nil {
		utilnet.CloseIdleConnectionsFor(old.http.Transport)
	}
	m.clients[cluster] = memberClient{identity: id, config: cfg, http: httpClient}
	return cfg, httpClient, nil
}

// forget drops the client of a member that left.
func (m *memberClients) forget(cluster string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if old, ok := m.clients[cluster]; ok {
		if old.http.Transport != nil {
			utilnet.CloseIdleConnectionsFor(old.http.Transport)
		}
		delete(m.clients, cluster)
	}
}

// probe reads the member's /version and, when it answers, what it serves
// (discovery: /api and /apis, two requests where the member serves
// aggregated discovery, as every supported Kubernetes does).
func (m *memberClients) probe(ctx context.Context, cluster string) probeResult {
	cfg, httpClient, err := m.get(ctx, cluster)
	if err != nil {
		return probeResult{err: err}
	}
	// Discovery takes no context: the probe's reaches its requests through
	// the transport, so they end with the probe's timeout or when the
	// controller stops.
	transport := httpClient.Transport
	if transport == nil { // rest.HTTPClientFor's http.DefaultClient
		transport = http.DefaultTransport
	}
	dc, err := discovery.NewDiscoveryClientForConfigAndClient(cfg, &http.Client{
		Transport: probeContext{ctx: ctx, next: transport}, Timeout: httpClient.Timeout})
	if err != nil {
		return probeResult{err: err}
	}
	raw, err := dc.RESTClient().Get().AbsPath("/version").Do(ctx).Raw()
	if err != nil {
		return probeResult{err: err}
	}
	var info version.Info
	if err := json.Unmarshal(raw, &info); err != nil {
		return probeResult{err: fmt.Errorf("cluster %s: reading its /version: %w", cluster, err)}
	}
	// A partial list comes with an error, as in Karmada's getAPIEnablements.
	_, lists, err := dc.ServerGroupsAndResources()
	return probeResult{version: info.GitVersion, enablements: apiEnablements(lists), discoveryErr: err}
}

// probeContext runs each request in the probe's context.
type probeContext struct {
	ctx  context.Context
	next http.RoundTripper
}

func (p probeContext) RoundTrip(req *http.Request) (*http.Response, error) {
	// The request's own context adds at most a longer timeout (the
	// member's 32 seconds): the probe's is the tighter bound.
	return p.next.RoundTrip(req.WithContext(p.ctx))
}

// WrappedRoundTripper lets client-go reach the transport underneath, to
// close its idle connections.
func (p probeContext) WrappedRoundTripper() http.RoundTripper { return p.next }
