// Package dashboard is federator's read-only web page: the fleet grid
// (templates × clusters, each copy's state and why), Rollouts, Gates,
// deletion countdowns and clusters, read from a hub's informer cache and
// kept live with server-sent events. It only reads: it is given a
// client.Reader, serves GET and HEAD, and refuses every other method.
package dashboard

import (
	"bytes"
	"context"
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/labels"
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

// view is what the page and its fragments render.
type view struct {
	Now       time.Time
	Query     string
	Filter    filter
	Grid      gridView
	Detail    *detailView
	Rollouts  []rolloutView
	Gates     []gateView
	Deletions deletionsView
	Clusters  []clusterView
}

type gridView struct {
	Filter    filter
	Clusters  []string
	Rows      []row
	Total     int
	Page      int
	Pages     int
	CPage     int
	CPages    int
	ClusterN  int
	Counts    map[string]int
	Query     string
	Error     string
	PageLinks []pageLink
	ColLinks  []pageLink
}

type pageLink struct {
	Label   string
	Href    string
	Current bool
}

type deletionsView struct {
	Known     bool
	Countdown []deletionView
	Removing  []removingView
}

// fragments a change to each kind may alter: what /events names.
const (
	fragGrid      = "grid"
	fragDetail    = "detail"
	fragRollouts  = "rollouts"
	fragGates     = "gates"
	fragDeletions = "deletions"
	fragClusters  = "clusters"
)

var fragments = []string{fragGrid, fragDetail, fragRollouts, fragGates, fragDeletions, fragClusters}

func (s *Server) page(w http.ResponseWriter, r *http.Request) {
	v, status, err := s.build(r, fragments)
	if err != nil {
		http.Error(w, err.Error(), status)
		return
	}
	s.render(w, "page", v)
}

func (s *Server) fragment(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	known := false
	for _, f := range fragments {
		known = known || f == name
	}
	if !known {
		http.NotFound(w, r)
		return
	}
	v, status, err := s.build(r, []string{name})
	if err != nil {
		http.Error(w, err.Error(), status)
		return
	}
	s.render(w, name, v)
}

func (s *Server) render(w http.ResponseWriter, name string, v any) {
	var buf bytes.Buffer
	if err := s.pages.ExecuteTemplate(&buf, name, v); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(buf.Bytes())
}

// build reads the cache once and builds the parts asked for.
func (s *Server) build(r *http.Request, parts []string) (*view, int, error) {
	q := r.URL.Query()
	f := filter{Namespace: q.Get("ns"), Kind: q.Get("kind"), Label: q.Get("label")}
	if f.Label != "" {
		sel, err := labels.Parse(f.Label)
		if err != nil {
			return nil, http.StatusBadRequest, fmt.Errorf("label %q: %w", f.Label, err)
		}
		f.selector = sel
	}
	snap, err := read(r.Context(), s.src, s.o.Now(), parts)
	if err != nil {
		return nil, http.StatusServiceUnavailable, fmt.Errorf("reading the hub: %w", err)
	}
	v := &view{Now: snap.now, Filter: f, Query: gridQuery(q).Encode()}
	for _, p := range parts {
		switch p {
		case fragGrid:
			v.Grid = s.grid(snap, f, q)
		case fragDetail:
			v.Detail = s.detail(snap, q)
		case fragRollouts:
			v.Rollouts = snap.rolloutViews()
		case fragGates:
			v.Gates = snap.gateViews()
		case fragDeletions:
			v.Deletions = deletionsView{Known: snap.tombstonesKnown, Countdown: snap.deletionViews(s.o.MaxDeletionDelay), Removing: snap.removing()}
		case fragClusters:
			v.Clusters = snap.clusterViews()
		}
	}
	return v, http.StatusOK, nil
}

// gridQuery keeps the parameters that select the grid.
func gridQuery(q url.Values) url.Values {
	out := url.Values{}
	for _, k := range []string{"ns", "kind", "label", "page", "cpage"} {
		if v := q.Get(k); v != "" {
			out.Set(k, v)
		}
	}
	return out
}

func pageOf(q url.Values, key string, pages int) int {
	p, err := strconv.Atoi(q.Get(key))
	if err != nil || p < 1 {
		p = 1
	}
	return min(p, max(pages, 1))
}

func (s *Server) grid(snap *snapshot, f filter, q url.Values) gridView {
	all := snap.clusterNames()
	g := gridView{Filter: f, ClusterN: len(all), Counts: map[string]int{}}
	g.CPages = (len(all) + s.o.ClustersPerPage - 1) / s.o.ClustersPerPage
	g.CPage = pageOf(q, "cpage", g.CPages)
	lo := (g.CPage - 1) * s.o.ClustersPerPage
	g.Clusters = all[min(lo, len(all)):min(lo+s.o.ClustersPerPage, len(all))]
	// Rows are filtered over every cluster's state counts only on the
	// page shown: the cells of other column pages are not judged.
	var selected []binding
	for _, b := range snap.bindings {
		if _, ok := snap.row(b, f, nil); ok {
			selected = append(selected, b)
		}
	}
	g.Total = len(selected)
	g.Pages = (g.Total + s.o.RowsPerPage - 1) / s.o.RowsPerPage
	g.Page = pageOf(q, "page", g.Pages)
	lo = (g.Page - 1) * s.o.RowsPerPage
	for _, b := range selected[min(lo, len(selected)):min(lo+s.o.RowsPerPage, len(selected))] {
		r, _ := snap.row(b, f, g.Clusters)
		for st, n := range r.Counts {
			g.Counts[st] += n
		}
		g.Rows = append(g.Rows, r)
	}
	link := func(key string, n int) string {
		lq := gridQuery(q)
		lq.Set(key, strconv.Itoa(n))
		return "/?" + lq.Encode()
	}
	for p := 1; p <= g.Pages && g.Pages > 1; p++ {
		g.PageLinks = append(g.PageLinks, pageLink{Label: strconv.Itoa(p), Href: link("page", p), Current: p == g.Page})
	}
	for p := 1; p <= g.CPages && g.CPages > 1; p++ {
		g.ColLinks = append(g.ColLinks, pageLink{Label: strconv.Itoa(p), Href: link("cpage", p), Current: p == g.CPage})
	}
	g.Query = gridQuery(q).Encode()
	return g
}

// detailView is one cell, opened.
type detailView struct {
	Row          row
	Cell         cell
	Conditions   []conditionView
	Member       []conditionView
	Annotations  [][2]string
	DeletionNote string
	Self         string
}

type conditionView struct {
	Type, Status, Reason, Message string
	Since                         time.Time
}

func (s *Server) detail(snap *snapshot, q url.Values) *detailView {
	id, cluster := q.Get("cell"), q.Get("cluster")
	if id == "" || cluster == "" {
		return nil
	}
	b, ok := snap.findBinding(id)
	if !ok {
		return &detailView{Cell: cell{Cluster: cluster, State: StateNotTargeted, Message: "no template " + id + " on the hub any more"}}
	}
	r, _ := snap.row(b, filter{}, []string{cluster})
	d := &detailView{Row: r, Cell: r.Cells[0], Self: "/fragment/detail?" + url.Values{"cell": {id}, "cluster": {cluster}}.Encode()}
	if w := d.Cell.Work; w != nil {
		for _, c := range w.Status.Conditions {
			d.Conditions = append(d.Conditions, conditionView{c.Type, string(c.Status), c.Reason, c.Message, c.LastTransitionTime.Time})
		}
		d.Member = memberConditions(w)
		for _, k := range detailAnnotations {
			if v, ok := w.Annotations[k]; ok {
				d.Annotations = append(d.Annotations, [2]string{k, v})
			}
		}
		d.DeletionNote = deletionNote(w)
	}
	return d
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
