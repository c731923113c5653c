package kindfleet

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/kind/pkg/cluster/nodeutils"
)

// WorkloadImages are the kind fleets' workload images, built by
// hack/workload-image/build.sh: a server that is ready, and its broken
// release whose readiness always fails. Start loads those Docker has into
// every member, as `kind load docker-image` does, so pods of them run
// without a registry.
var WorkloadImages = []string{"federator/web:1.25", "federator/web:1.27-broken"}

// presentImages is those of images that Docker has, in order.
func (d docker) presentImages(ctx context.Context, images []string) []string {
	var present []string
	for _, image := range images {
		if _, err := d.run(ctx, nil, "image", "inspect", "--format", "{{.Id}}", image); err == nil {
			present = append(present, image)
		}
	}
	return present
}

// loadImages saves images from Docker into one archive and loads it into
// the containerd of every node of each kind cluster in kindNames.
func (f *Fleet) loadImages(ctx context.Context, images, kindNames []string) error {
	if len(images) == 0 {
		return nil
	}
	dir, err := os.MkdirTemp("", "federator-images-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	archive := filepath.Join(dir, "images.tar")
	if _, err := (docker{command: "docker"}).run(ctx, nil, append([]string{"save", "-o", archive}, images...)...); err != nil {
		return fmt.Errorf("kind fleet: saving %s: %w", strings.Join(images, ", "), err)
	}
	for _, name := range kindNames {
		ns, err := f.provider.ListInternalNodes(name)
		if err != nil {
			return fmt.Errorf("kind fleet: nodes of %s: %w", name, err)
		}
		f.printf("loading %s into %s", strings.Join(images, ", "), name)
		if err := loadArchive(archive, ns, nodeutils.LoadImageArchive); err != nil {
			return fmt.Errorf("kind fleet: loading images into %s: %w%s", name, err, commandOutput(err))
		}
	}
	return nil
}

// loadArchive gives each node the archive through load (kind's
// nodeutils.LoadImageArchive: `ctr images import` on the node).
func loadArchive(archive string, ns []nodes.Node, load func(nodes.Node, io.Reader) error) error {
	for _, n := range ns {
		r, err := os.Open(archive)
		if err != nil {
			return err
		}
		err = load(n, r)
		r.Close()
		if err != nil {
			return fmt.Errorf("node %s: %w", n.String(), err)
		}
	}
	return nil
}
