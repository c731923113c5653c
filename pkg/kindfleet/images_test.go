package kindfleet

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/kind/pkg/exec"
)

// fakeNode is a kind node that only has a name.
type fakeNode struct{ name string }

func (n fakeNode) String() string                     { return n.name }
func (n fakeNode) Role() (string, error)              { return "control-plane", nil }
func (n fakeNode) IP() (string, string, error)        { return "", "", nil }
func (n fakeNode) SerialLogs(io.Writer) error         { return nil }
func (n fakeNode) Command(string, ...string) exec.Cmd { panic("not in this test") }
func (n fakeNode) CommandContext(context.Context, string, ...string) exec.Cmd {
	panic("not in this test")
}

// Every node is given the whole archive, each from its start; the first
// node that fails stops the loading with its name in the error.
func TestLoadArchiveGivesEveryNodeTheWholeArchive(t *testing.T) {
	archive := filepath.Join(t.TempDir(), "images.tar")
	if err := os.WriteFile(archive, []byte("the images"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	load := func(n nodes.Node, r io.Reader) error {
		b, err := io.ReadAll(r)
		got[n.String()] = string(b)
		if n.String() == "bad" {
			return errors.New("ctr: import failed")
		}
		return err
	}
	ns := []nodes.Node{fakeNode{"m1-control-plane"}, fakeNode{"m2-control-plane"}}
	if err := loadArchive(archive, ns, load); err != nil {
		t.Fatal(err)
	}
	for _, n := range ns {
		if got[n.String()] != "the images" {
			t.Errorf("node %s was given %q, want the whole archive", n, got[n.String()])
		}
	}
	clear(got)
	err := loadArchive(archive, []nodes.Node{fakeNode{"bad"}, fakeNode{"after"}}, load)
	if err == nil || !strings.Contains(err.Error(), "node bad: ctr: import failed") {
		t.Errorf("error %v, want it to name the node and say why", err)
	}
	if _, ok := got["after"]; ok {
		t.Error("a node after the failing one was loaded")
	}
}

// Only the members get the workload images: the hub runs none.
func TestMemberKindNames(t *testing.T) {
	f := &Fleet{created: []created{
		{name: "hub", kindName: "p-hub"}, {name: "member1", kindName: "p-member1"}, {name: "member2", kindName: "p-member2"},
	}}
	if got, want := f.memberKindNames(), []string{"p-member1", "p-member2"}; !slices.Equal(got, want) {
		t.Errorf("memberKindNames = %v, want %v", got, want)
	}
}

// presentImages keeps the images Docker has, in order, and drops the rest.
func TestPresentImages(t *testing.T) {
	d := daemonAnswers(t)
	ctx := context.Background()
	image := "federator-test-present:" + strings.ToLower(t.Name())
	if _, err := d.run(ctx, emptyTar(t), "import", "-", image); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = d.run(context.Background(), nil, "rmi", "--force", image) })
	got := d.presentImages(ctx, []string{"federator-test-absent:none", image})
	if want := []string{image}; !slices.Equal(got, want) {
		t.Errorf("presentImages = %v, want %v", got, want)
	}
}
