package main

import (
	"fmt"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/rest"
)

// The lag-informers fault: the controllers reach the hub through a proxy
// that holds back, for a while, the watch events of one kind of object by
// up to five seconds, so that one informer lags the others (a hub under
// load, a slow watch cache). Each event still arrives, in order. What a
// lagged informer carries reaches the controllers late, so a version
// already released when a hold on it was written may still be stored for
// that much longer (checker.inFlight); a version written after the hold is
// never released by it, however late its informer.

// laggedResources are the kinds a lag episode chooses from, by the
// resource name of their API paths: what holds (policies, Gates, Clusters'
// gate annotations, Rollouts), what is held (templates, bindings, Works),
// what renders (OverridePolicies), a Rollout's kept revisions
// (ControllerRevisions), and the countdowns' tombstones with the ConfigMap
// template (ConfigMaps).
var laggedResources = []string{"propagationpolicies", "gates", "clusters", "rollouts", "overridepolicies",
	"controllerrevisions", "resourcebindings", "works", "deployments", "configmaps"}

// maxLag bounds an episode's delay.
const maxLag = 5 * time.Second

// lagProxy is the hub as the controllers reach it when lag-informers is
// among the faults.
type lagProxy struct {
	url    string
	server *httptest.Server

	mu       sync.Mutex
	resource string
	delay    time.Duration
}

// startLagProxy serves a proxy to the hub of cfg; Close stops it.
func startLagProxy(cfg *rest.Config) (*lagProxy, error) {
	target, err := url.Parse(cfg.Host)
	if err != nil {
		return nil, err
	}
	// HTTP/1.1 to the hub: one connection per watch, so holding one
	// stream back never delays another.
	upstream := rest.CopyConfig(cfg)
	upstream.TLSClientConfig.NextProtos = []string{"http/1.1"}
	transport, err := rest.TransportFor(upstream)
	if err != nil {
		return nil, err
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.Transport = transport
	rp.FlushInterval = -1
	p := &lagProxy{}
	p.server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		resource := resourceOf(r.URL.Path)
		if w2 := r.URL.Query().Get("watch"); w2 != "true" && w2 != "1" {
			rp.ServeHTTP(w, r)
			return
		}
		d := newDelayWriter(w, func() time.Duration { return p.lagOf(resource) })
		defer d.close()
		rp.ServeHTTP(d, r)
	}))
	p.url = p.server.URL
	return p, nil
}

// Close ends the watches in flight and stops the proxy.
func (p *lagProxy) Close() {
	p.server.CloseClientConnections()
	p.server.Close()
}

// lag makes the watch events of resource arrive delay late, from now on;
// "" and 0: none.
func (p *lagProxy) lag(resource string, delay time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.resource, p.delay = resource, delay
}

func (p *lagProxy) lagOf(resource string) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	if resource == p.resource {
		return p.delay
	}
	return 0
}

// resourceOf is the resource of an API path (/api/v1/namespaces/x/configmaps,
// /apis/g/v/gates): the segment after the namespace, else after the
// version.
func resourceOf(path string) string {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	var rest []string
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		rest = parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		rest = parts[3:]
	default:
		return ""
	}
	if len(rest) >= 2 && rest[0] == "namespaces" {
		rest = rest[2:]
	}
	if len(rest) == 0 {
		return "namespaces"
	}
	return rest[0]
}

// delayWriter passes a watch stream on, each write lag() after it came
// (read when it comes) and never before the one before it.
type delayWriter struct {
	w      http.ResponseWriter
	lag    func() time.Duration
	chunks chan chunk
	done   chan struct{}
}

type chunk struct {
	data []byte
	due  time.Time
}

func newDelayWriter(w http.ResponseWriter, lag func() time.Duration) *delayWriter {
	d := &delayWriter{w: w, lag: lag, chunks: make(chan chunk, 4096), done: make(chan struct{})}
	go func() {
		defer close(d.done)
		flusher, _ := w.(http.Flusher)
		for c := range d.chunks {
			if wait := time.Until(c.due); wait > 0 {
				time.Sleep(wait)
			}
			if _, err := w.Write(c.data); err != nil {
				continue // the client went: drain what is left
			}
			if flusher != nil {
				flusher.Flush()
			}
		}
	}()
	return d
}

func (d *delayWriter) Header() http.Header { return d.w.Header() }

// WriteHeader passes at once, flushed: the watch is open; its events are
// late.
func (d *delayWriter) WriteHeader(code int) {
	d.w.WriteHeader(code)
	if f, ok := d.w.(http.Flusher); ok {
		f.Flush()
	}
}

func (d *delayWriter) Write(p []byte) (int, error) {
	d.chunks <- chunk{data: append([]byte(nil), p...), due: time.Now().Add(d.lag())}
	return len(p), nil
}

// Flush is the sender's: each chunk is flushed as it goes out.
func (d *delayWriter) Flush() {}

// close waits until every chunk has gone out.
func (d *delayWriter) close() {
	close(d.chunks)
	<-d.done
}

// lagEpisode starts or ends the lag of one kind, drawn from rng (its own
// source, so a seed's operations and other faults stay as they were), and
// records its span: it lasts until the episode after it ends it.
func (r *chaosRun) lagEpisode(rng *rand.Rand) {
	if r.lag == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if n := len(r.faults); r.lagging >= 0 && n > 0 && r.lagging < n {
		f := &r.faults[r.lagging]
		// Events sent just before the end still arrive up to the lag late.
		f.To = time.Now().Add(f.Lag)
		r.lag.lag("", 0)
		logf("the controllers' %s informers no longer lag", f.Member)
		r.lagging = -1
		return
	}
	kinds := r.o.lagResources
	if len(kinds) == 0 {
		kinds = laggedResources
	}
	resource := kinds[rng.Intn(len(kinds))]
	delay := time.Duration(rng.Int63n(int64(maxLag)))
	r.lag.lag(resource, delay)
	r.lagging = len(r.faults)
	r.faults = append(r.faults, fault{Kind: faultLagInformers, Member: resource, From: time.Now(), To: forever, Lag: delay})
	logf("the controllers' %s informers lag by %s", resource, delay.Round(time.Millisecond))
}

// endLag ends an episode still running, before the run converges.
func (r *chaosRun) endLag() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.lag == nil || r.lagging < 0 {
		return
	}
	f := &r.faults[r.lagging]
	f.To = time.Now().Add(f.Lag)
	r.lag.lag("", 0)
	r.lagging = -1
}

// lagProxyKubeconfig is where the controllers' kubeconfig through the
// proxy is written.
func lagProxyKubeconfig(dir string) string { return fmt.Sprintf("%s/hub-lagged.kubeconfig", dir) }
