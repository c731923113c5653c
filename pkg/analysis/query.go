package analysis

import (
	"fmt"
	"strings"
	"text/template"
)

// Vars are what a query template may name.
type Vars struct {
	// Cluster is the member cluster measured.
	Cluster string
	// Namespace and Name are the claimed template's.
	Namespace string
	Name      string
	// Revision is the Rollout's revision being measured.
	Revision int64
}

// Query is a parsed query template.
type Query struct {
	text string
	tmpl *template.Template
}

// ParseQuery parses a query template; its error says where it does not
// parse. A field Vars lacks is refused when the query is rendered.
func ParseQuery(text string) (*Query, error) {
	t, err := template.New("query").Option("missingkey=error").Parse(text)
	if err != nil {
		return nil, err
	}
	// A field Vars lacks (say {{ .Clustr }}) parses; rendering once with
	// empty values finds it now rather than at the first measurement.
	if err := t.Execute(&strings.Builder{}, Vars{}); err != nil {
		return nil, err
	}
	return &Query{text: text, tmpl: t}, nil
}

// Render is the query for v.
func (q *Query) Render(v Vars) (string, error) {
	var b strings.Builder
	if err := q.tmpl.Execute(&b, v); err != nil {
		return "", fmt.Errorf("query template: %w", err)
	}
	return b.String(), nil
}

// NamesTemplate says whether the query differs between two templates (it
// names .Namespace or .Name): it then runs once per claimed template.
func (q *Query) NamesTemplate() bool {
	a, errA := q.Render(Vars{Namespace: "a", Name: "a"})
	b, errB := q.Render(Vars{Namespace: "b", Name: "b"})
	return errA != nil || errB != nil || a != b
}
