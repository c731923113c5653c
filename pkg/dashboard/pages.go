package dashboard

import (
	"bytes"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/labels"
)

// The page and its fragments: what each shows, built from one read of
// the cache.

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
