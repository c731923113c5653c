// Command summary prints one line per spec of a Ginkgo JSON report
// (passed, failed, skipped...), with the failure's location and first line
// of its message, and compares the failures with a list of specs known not
// to pass on a federator fleet (docs/karmada.md says why for each).
//
//	summary -known known-failures.txt report.json
//
// It exits 1 when a spec failed that the list does not name, or a spec the
// list names passed (so the list stays true), 0 otherwise.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/onsi/ginkgo/v2/types"
)

func main() {
	knownFile := flag.String("known", "", "file of full spec texts (one a line, # comments) known not to pass")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: summary [-known FILE] REPORT.json")
		os.Exit(2)
	}
	known, err := readKnown(*knownFile)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	data, err := os.ReadFile(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var reports []types.Report
	if err := json.Unmarshal(data, &reports); err != nil {
		fmt.Fprintf(os.Stderr, "%s: not a Ginkgo JSON report: %v\n", flag.Arg(0), err)
		os.Exit(2)
	}
	counts := map[string]int{}
	var unexpected []string
	seen := map[string]bool{}
	for _, r := range reports {
		specs := r.SpecReports
		sort.SliceStable(specs, func(i, j int) bool { return specs[i].StartTime.Before(specs[j].StartTime) })
		for _, s := range specs {
			if s.LeafNodeType != types.NodeTypeIt {
				// Suite-level nodes print only when they failed.
				if s.Failed() {
					fmt.Printf("FAILED   %s at %s: %s\n", s.LeafNodeType, s.FailureLocation(), firstLine(s.FailureMessage()))
					unexpected = append(unexpected, s.LeafNodeType.String())
				}
				continue
			}
			if s.State == types.SpecStateSkipped && s.Failure.Message == "" {
				counts["skipped"]++
				continue // outside the focus
			}
			name := s.FullText()
			seen[name] = true
			state := s.State.String()
			counts[state]++
			line := fmt.Sprintf("%-8s %6.1fs  %s", state, s.RunTime.Seconds(), name)
			switch {
			case s.Failed() && known[name]:
				line += "  (known: docs/karmada.md)"
			case s.Failed():
				line += "  (NEW)"
				unexpected = append(unexpected, name)
			case known[name]:
				line += "  (listed as known not to pass: take it out of the list)"
				unexpected = append(unexpected, name)
			}
			fmt.Println(line)
			if s.Failed() {
				fmt.Printf("           at %s: %s\n", s.FailureLocation(), firstLine(s.FailureMessage()))
			}
		}
		fmt.Printf("suite %q: %s in %.0fs\n", r.SuiteDescription, summaryCounts(counts), r.RunTime.Seconds())
	}
	var missing []string
	for name := range known {
		if !seen[name] {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		fmt.Printf("not run (outside the focus, or renamed?): %s\n", strings.Join(missing, "; "))
	}
	if len(unexpected) > 0 {
		fmt.Printf("%d result(s) differ from %s\n", len(unexpected), *knownFile)
		os.Exit(1)
	}
}

func readKnown(path string) (map[string]bool, error) {
	known := map[string]bool{}
	if path == "" {
		return known, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line != "" && !strings.HasPrefix(line, "#") {
			known[line] = true
		}
	}
	return known, sc.Err()
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " ..."
	}
	return s
}

func summaryCounts(counts map[string]int) string {
	var parts []string
	for _, k := range []string{"passed", "failed", "panicked", "timedout", "interrupted", "aborted", "pending", "skipped"} {
		if counts[k] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[k], k))
		}
	}
	return strings.Join(parts, ", ")
}
