// Package dashboard is federator's read-only web page: the fleet grid
// (templates × clusters, each copy's state and why), Rollouts, Gates,
// deletion countdowns and clusters, read from a hub's informer cache and
// kept live with server-sent events. It only reads: it is given a
// client.Reader, serves GET and HEAD, and refuses every other method.
package dashboard

import (
	"context"
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/federator-dev/federator/internal/httpserve"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// DefaultBindAddress is where `federator dashboard` listens unless told.
const DefaultBindAddress = "127.0.0.1:8090"

// Source is what the dashboard reads.
type Source struct {
	// Hub reads Clusters, ResourceBindings, ClusterResourceBindings,
	// Works, Rollouts, ClusterRollouts and Gates: an informer cache.
	Hub client.Reader
	// Tombstones reads the ConfigMaps that record deletion countdowns
	// (labelled softdelete.federator.dev/tombstone); nil when the
	// dashboard cannot see them, and the page says so.
	Tombstones client.Reader
}

// Options tune the dashboard.
type Options struct {
	// Now is the clock gates and countdowns are judged by.
	Now func() time.Time
	// Debounce gathers the cache's changes into one event; 250ms if zero.
	Debounce time.Duration
	// RowsPerPage and ClustersPerPage page the grid; 50 and 25 if zero.
	RowsPerPage, ClustersPerPage int
	// MaxDeletionDelay caps countdowns that record no due time, as the
	// controllers do; 0 leaves them uncapped.
	MaxDeletionDelay time.Duration
	// Heartbeat is how often an idle event stream sends a comment, so a
	// dead connection is noticed; 15s if zero.
	Heartbeat time.Duration
}

// Server serves the dashboard.
type Server struct {
	src     Source
	o       Options
	pages   *template.Template
	mux     *http.ServeMux
	changes *broadcaster
}

// New is a dashboard over src.
func New(src Source, o Options) *Server {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Debounce == 0 {
		o.Debounce = 250 * time.Millisecond
	}
	if o.RowsPerPage == 0 {
		o.RowsPerPage = 50
	}
	if o.ClustersPerPage == 0 {
		o.ClustersPerPage = 25
	}
	if o.Heartbeat == 0 {
		o.Heartbeat = 15 * time.Second
	}
	s := &Server{src: src, o: o, changes: newBroadcaster(o.Debounce)}
	s.pages = template.Must(template.New("").Funcs(template.FuncMap{
		"ago":        func(t time.Time) string { return relative(o.Now(), t) },
		"stamp":      func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
		"stateClass": func(state string) string { return cell{State: state}.Class() },
		"plural": func(n int, noun string) string {
			if n == 1 {
				return "1 " + noun
			}
			return fmt.Sprintf("%d %ss", n, noun)
		},
		"cellHref": func(gridQuery, id, cluster string) template.URL {
			q, _ := url.ParseQuery(gridQuery)
			q.Set("cell", id)
			q.Set("cluster", cluster)
			return template.URL("/?" + q.Encode())
		},
	}).ParseFS(templateFS, "templates/*.html"))
	static, _ := fs.Sub(staticFS, "static")
	s.mux = http.NewServeMux()
	s.mux.Handle("/static/", http.StripPrefix("/static/", http.FileServer(http.FS(static))))
	s.mux.HandleFunc("/events", s.events)
	s.mux.HandleFunc("/fragment/{name}", s.fragment)
	s.mux.HandleFunc("/{$}", s.page)
	return s
}

// ServeHTTP serves GET and HEAD; every other method gets 405: the
// dashboard changes nothing.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "the dashboard is read-only: "+r.Method+" is not allowed", http.StatusMethodNotAllowed)
		return
	}
	h := w.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "default-src 'self'; frame-ancestors 'none'")
	h.Set("Referrer-Policy", "no-referrer")
	s.mux.ServeHTTP(w, r)
}

// Listen listens on addr for the dashboard and says the URL a browser
// opens; listening before serving lets a caller print the URL, or fail on
// a taken port, before it starts anything else.
func Listen(addr string) (net.Listener, string, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, "", fmt.Errorf("dashboard: %w", err)
	}
	return l, URL(l.Addr()), nil
}

// Serve serves h on l until ctx ends. Event streams end with ctx; the
// shutdown waits up to 2 s for the rest.
func Serve(ctx context.Context, l net.Listener, h http.Handler) error {
	return httpserve.Serve(ctx, l, h, 2*time.Second)
}

// URL is the address a browser opens for a listener's address: a host
// that listens everywhere is reached at localhost.
func URL(a net.Addr) string {
	host, port, err := net.SplitHostPort(a.String())
	if err != nil {
		return "http://" + a.String() + "/"
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port) + "/"
}

// relative says how far t is from now, as a person reads it.
func relative(now, t time.Time) string {
	d := t.Sub(now)
	suffix := "from now"
	if d < 0 {
		d, suffix = -d, "ago"
	}
	switch {
	case d < time.Second:
		return "now"
	case d < time.Minute:
		return fmt.Sprintf("%ds %s", int(d.Seconds()), suffix)
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds %s", int(d.Minutes()), int(d.Seconds())%60, suffix)
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%02dm %s", int(d.Hours()), int(d.Minutes())%60, suffix)
	}
	return strings.TrimSpace(fmt.Sprintf("%dd %s", int(d.Hours()/24), suffix))
}
