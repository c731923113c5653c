package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
	"sigs.k8s.io/yaml"
)

// Output formats -o takes; "" is the table.
const (
	outputTable = ""
	outputWide  = "wide"
	outputYAML  = "yaml"
	outputJSON  = "json"
)

func validOutput(o string) error {
	switch o {
	case outputTable, outputWide, outputYAML, outputJSON:
		return nil
	}
	return fmt.Errorf("-o %s: unknown output format; use wide, yaml or json", o)
}

// none stands in an empty cell, so columns stay readable by eye and by awk.
const none = "-"

// table is rows under headers, printed with kubectl's spacing.
type table struct {
	headers []string
	rows    [][]string
}

func (t *table) add(cells ...string) {
	for i, c := range cells {
		if c == "" {
			cells[i] = none
		}
	}
	t.rows = append(t.rows, cells)
}

func (t *table) write(w io.Writer) error {
	// kubectl's printers: minwidth 6, tabwidth 4, padding 3.
	tw := tabwriter.NewWriter(w, 6, 4, 3, ' ', 0)
	fmt.Fprintln(tw, strings.Join(t.headers, "\t"))
	for _, r := range t.rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	return tw.Flush()
}

// withNamespace prefixes a NAMESPACE column when every namespace is listed
// (kubectl's -A).
func withNamespace(all bool, namespace string, cells ...string) []string {
	if !all {
		return cells
	}
	return append([]string{namespace}, cells...)
}

// writeObject prints v as -o json (kubectl's four-space indent) or yaml.
func writeObject(w io.Writer, format string, v any) error {
	if format == outputYAML {
		raw, err := yaml.Marshal(v)
		if err != nil {
			return err
		}
		_, err = w.Write(raw)
		return err
	}
	raw, err := json.MarshalIndent(v, "", "    ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", raw)
	return err
}

// age is kubectl's AGE column.
func age(created metav1.Time, now time.Time) string {
	if created.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(created.Time))
}

func rolloutTable(items []templateRollout, wide, allNamespaces bool) *table {
	t := &table{headers: withNamespace(allNamespaces, "NAMESPACE", "TEMPLATE", "CLUSTER", "STATE", "GENERATION", "READY", "IMAGES")}
	if wide {
		t.headers = append(t.headers, "POLICY", "WORK", "REASON")
	}
	t.headers = append(t.headers, "MESSAGE")
	for _, item := range items {
		template := item.Template.Kind + "/" + item.Template.Name
		for _, c := range item.Clusters {
			generation, ready := "", ""
			if c.Generation != 0 {
				generation = fmt.Sprint(c.Generation)
			}
			if c.ReadyReplicas != nil && c.DesiredReplicas != nil {
				ready = fmt.Sprintf("%d/%d", *c.ReadyReplicas, *c.DesiredReplicas)
			}
			images, message := c.Images, c.Message
			if len(images) == 0 {
				// What a member still runs while its copy waits.
				images = c.RunningImages
			}
			if len(c.WantedImages) > 0 && !slices.Equal(c.WantedImages, c.RunningImages) {
				message = strings.TrimSuffix("wants "+strings.Join(c.WantedImages, ",")+"; "+message, "; ")
			}
			cells := withNamespace(allNamespaces, item.Template.Namespace,
				template, c.Cluster, c.State, generation, ready, strings.Join(images, ","))
			if wide {
				policy, work := "", ""
				if item.Policy != nil {
					policy = objectName(*item.Policy)
				}
				if c.Work != nil {
					work = c.Work.Namespace + "/" + c.Work.Name
				}
				cells = append(cells, policy, work, c.Reason)
			}
			t.add(append(cells, message)...)
		}
	}
	return t
}

// objectName is "PropagationPolicy/web": no space, so a column stays one
// word (a PropagationPolicy's namespace is its template's).
func objectName(o objectRef) string {
	return o.Kind + "/" + o.Name
}
