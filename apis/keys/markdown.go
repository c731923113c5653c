package keys

import (
	"bytes"
	"fmt"
	"strings"
)

// Markdown is the table as docs/architecture.md shows it.
func Markdown() []byte {
	var b bytes.Buffer
	b.WriteString("| Key | On | Set by | Members get it | New revision | Holds or delays | Meaning |\n")
	b.WriteString("|---|---|---|---|---|---|---|\n")
	for _, k := range Table {
		name := "`" + k.Name + k.Suffix + "`"
		if k.Label {
			name += " (label)"
		}
		revision := "—"
		members := "—"
		if k.On&Template != 0 {
			revision = yesNo(k.NewRevision)
			members = yesNo(k.ToMembers)
		} else if k.On&Member != 0 {
			members = "written there"
		}
		admission := ""
		if k.Admission != "" {
			admission = fmt.Sprintf(" (checked on write: %s)", k.Admission)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s%s |\n", name, k.On, k.SetBy, members, revision,
			effectNames[k.Effect], k.Meaning, admission)
	}
	b.WriteString("\nA key the table does not name is the user's own: members get it and a change of it is a new revision.\n")
	return b.Bytes()
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// String lists the objects, comma-separated.
func (o Objects) String() string {
	var names []string
	for i, name := range objectNames {
		if o&(1<<i) != 0 {
			names = append(names, name)
		}
	}
	return strings.Join(names, ", ")
}
