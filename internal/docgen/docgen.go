// Package docgen owns the generated parts of the docs: a page keeps a part
// between two marker lines, and a test that knows what the part must say
// (a table from apis/keys, the controllers from pkg/hub) compares or,
// with `make docs`, rewrites it. Tests only.
package docgen

import (
	"bytes"
	"fmt"
	"os"
)

// Markers are the lines that enclose the part called name.
func Markers(name string) (begin, end string) {
	return fmt.Sprintf("<!-- %s: generated (make docs); do not edit -->", name), fmt.Sprintf("<!-- end of %s -->", name)
}

// Splice returns doc with the part called name replaced by content; an
// error when its markers are missing or out of order.
func Splice(doc []byte, name string, content []byte) ([]byte, error) {
	begin, end := Markers(name)
	b := bytes.Index(doc, []byte(begin))
	e := bytes.Index(doc, []byte(end))
	if b < 0 || e < b {
		return nil, fmt.Errorf("no %q line followed by a %q line: put them where the %s go", begin, end, name)
	}
	var out bytes.Buffer
	out.Write(doc[:b+len(begin)])
	out.WriteString("\n")
	out.Write(content)
	out.Write(doc[e:])
	return out.Bytes(), nil
}

// Check compares the part called name of the page at path with content,
// or rewrites it when update is set; it returns what a test reports.
func Check(path, name string, content []byte, update bool) error {
	doc, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	want, err := Splice(doc, name, content)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if update {
		return os.WriteFile(path, want, 0o644)
	}
	if !bytes.Equal(doc, want) {
		return fmt.Errorf("%s: the %s are not what the code says: run make docs", path, name)
	}
	return nil
}
