package hold

import (
	"fmt"
	"slices"
	"strings"
)

// maxRecordMessage bounds Record's message: a binding's condition stays
// small whatever the fleet's size.
const maxRecordMessage = 2048

// Record is what a binding says of decisions in its Dispatching
// condition: whether anything holds a cluster, the reason of the first
// held cluster's first hold (by cluster name), and which clusters are held
// by what, "member2, member3: <message>; member1: <message>", the clusters
// that share a message together, groups in the order of their first
// cluster. GitOps tools read it to tell a cluster held on purpose from one
// that is slow or failing.
func Record(decisions map[string]Decision) (held bool, reason, message string) {
	clusters := make([]string, 0, len(decisions))
	for c, d := range decisions {
		if d.Held() {
			clusters = append(clusters, c)
		}
	}
	if len(clusters) == 0 {
		return false, "", ""
	}
	slices.Sort(clusters)
	var order []string
	byMessage := map[string][]string{}
	for _, c := range clusters {
		m := decisions[c].Message()
		if _, seen := byMessage[m]; !seen {
			order = append(order, m)
		}
		byMessage[m] = append(byMessage[m], c)
	}
	var b strings.Builder
	named := 0
	for _, m := range order {
		part := strings.Join(byMessage[m], ", ") + ": " + m
		if b.Len() > 0 {
			part = "; " + part
		}
		if b.Len()+len(part) > maxRecordMessage {
			fmt.Fprintf(&b, "; and %d more held clusters", len(clusters)-named)
			break
		}
		b.WriteString(part)
		named += len(byMessage[m])
	}
	return true, decisions[clusters[0]].Reason(), b.String()
}
