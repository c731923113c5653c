package clusterstatus

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"

	"github.com/federator-dev/federator/internal/fleettest"
	"github.com/federator-dev/federator/pkg/fleet"
)

// BenchmarkProbe measures one probe of a real API server (envtest's
// kube-apiserver, admin client certificate): /version plus discovery.
//   - reused: the member's HTTP client is kept across probes (what the
//     controller does).
//   - new-client: a discovery client built per probe, as the probe did
//     before it read discovery. client-go shares its TLS transports, so
//     this still reuses connections...
//   - new-client-proxied: ...except where it cannot share them: a member
//     behind spec.proxyURL (here a proxy function that returns no proxy).
//
// It reports the connections each probe opened ("conns/op"), the requests
// it made and the bytes of discovery it read. Needs the fleet binaries
// (make binaries, or KUBEBUILDER_ASSETS).
func BenchmarkProbe(b *testing.B) {
	f := fleettest.Start(b, fleet.Options{Members: 1})
	member := f.Members[0].Config

	var conns, requests, bytes atomic.Int64
	counted := func(proxied bool) *rest.Config {
		cfg := rest.CopyConfig(member)
		if proxied {
			cfg.Proxy = func(*http.Request) (*url.URL, error) { return nil, nil }
		}
		cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
			return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
				requests.Add(1)
				trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
					if !info.Reused {
						conns.Add(1)
					}
				}}
				resp, err := rt.RoundTrip(req.WithContext(httptrace.WithClientTrace(req.Context(), trace)))
				if err == nil {
					resp.Body = countingBody{ReadCloser: resp.Body, n: &bytes}
				}
				return resp, err
			})
		})
		return cfg
	}
	newClientPerProbe := func(cfg *rest.Config) func(ctx context.Context) probeResult {
		return func(ctx context.Context) probeResult {
			dc, err := discovery.NewDiscoveryClientForConfig(cfg)
			if err != nil {
				return probeResult{err: err}
			}
			raw, err := dc.RESTClient().Get().AbsPath("/version").Do(ctx).Raw()
			if err != nil {
				return probeResult{err: err}
			}
			var info version.Info
			if err := json.Unmarshal(raw, &info); err != nil {
				return probeResult{err: err}
			}
			_, lists, err := dc.ServerGroupsAndResources()
			return probeResult{version: info.GitVersion, enablements: apiEnablements(lists), discoveryErr: err}
		}
	}
	reusedCfg := counted(false)
	reused := newMemberClients(func(context.Context, string) (*rest.Config, error) { return reusedCfg, nil })
	for _, variant := range []struct {
		name  string
		probe func(ctx context.Context) probeResult
	}{
		{"reused", func(ctx context.Context) probeResult { return reused.probe(ctx, "member1") }},
		{"new-client", newClientPerProbe(counted(false))},
		{"new-client-proxied", newClientPerProbe(counted(true))},
	} {
		b.Run(variant.name, func(b *testing.B) {
			ctx := context.Background()
			if r := variant.probe(ctx); r.err != nil || r.discoveryErr != nil || len(r.enablements) == 0 {
				b.Fatalf("probe: %+v", r)
			}
			conns.Store(0)
			requests.Store(0)
			bytes.Store(0)
			n := 0
			for b.Loop() {
				variant.probe(ctx)
				n++
			}
			b.ReportMetric(float64(conns.Load())/float64(n), "conns/op")
			b.ReportMetric(float64(requests.Load())/float64(n), "requests/op")
			b.ReportMetric(float64(bytes.Load())/float64(n), "bytes-read/op")
			b.ReportMetric(float64(openConnections(b, member.Host)), "open-conns")
		})
	}
}

type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (c countingBody) Read(p []byte) (int, error) {
	n, err := c.ReadCloser.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// openConnections counts the established TCP connections to host's port
// (IPv4, /proc/net/tcp): what the probes left open at the member.
func openConnections(b *testing.B, host string) int {
	u, err := url.Parse(host)
	if err != nil {
		b.Fatal(err)
	}
	raw, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		b.Skipf("no /proc/net/tcp: %v", err)
	}
	port, _ := strconv.Atoi(u.Port())
	remote := fmt.Sprintf(":%04X", port)
	n := 0
	for _, line := range strings.Split(string(raw), "\n")[1:] {
		fields := strings.Fields(line)
		// remote address, state 01 = ESTABLISHED
		if len(fields) > 3 && strings.HasSuffix(fields[2], remote) && fields[3] == "01" {
			n++
		}
	}
	return n
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
