package kindfleet

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/kind/pkg/cluster/nodeutils"
)

// WebRepository is the kind fleets' workload image (federator/web:TAG,
// hack/workload-image): a server that answers its version on / and is
// ready on /readyz, unless its tag ends in -broken.
const WebRepository = "federator/web"

// WorkloadImages are the tags make workload-image builds: the sample's
// versions, 1.27-broken among them. Start loads those Docker has into
// every member, as `kind load docker-image` does, so pods of them run
// without a registry.
var WorkloadImages = []string{WebRepository + ":1.25", WebRepository + ":1.26", WebRepository + ":1.27-broken", WebRepository + ":1.28"}

// presentImages is those of images that Docker has, in order.
func (d cli) presentImages(ctx context.Context, images []string) []string {
	var present []string
	for _, image := range images {
		if _, err := d.run(ctx, nil, "image", "inspect", "--format", "{{.Id}}", image); err == nil {
			present = append(present, image)
		}
	}
	return present
}

// MissingDockerImages are those of images Docker does not have (all of
// them where Docker does not answer).
func MissingDockerImages(ctx context.Context, images []string) []string {
	present := EngineDocker.cli().presentImages(ctx, images)
	var missing []string
	for _, image := range images {
		if !slices.Contains(present, image) {
			missing = append(missing, image)
		}
	}
	return missing
}

// loadImages saves the WorkloadImages Docker has (make workload-image
// builds them there, whichever engine runs the nodes) into one archive and
// loads it into the containerd of every node of each kind cluster in
// kindNames.
func (f *Fleet) loadImages(ctx context.Context, kindNames []string) error {
	if _, err := exec.LookPath(string(EngineDocker)); err != nil {
		return nil
	}
	images := EngineDocker.cli().presentImages(ctx, WorkloadImages)
	if len(images) == 0 {
		f.printf("no workload images to load (make workload-image builds %s in Docker)", strings.Join(WorkloadImages, ", "))
		return nil
	}
	if err := f.loadDockerImages(ctx, images, kindNames); err != nil {
		return err
	}
	f.loadedImages = images
	return nil
}

// LoadImages loads images, which Docker has, into every node of the
// fleet's cluster name (hub, member1, ...), as `kind load docker-image`
// does: an image built here (make image) runs there without a registry.
func (f *Fleet) LoadImages(ctx context.Context, name string, images ...string) error {
	kindName, err := f.kindName(name)
	if err != nil {
		return err
	}
	return f.loadDockerImages(ctx, images, []string{kindName})
}

// loadDockerImages saves images from Docker into one archive and loads it
// into the containerd of every node of each kind cluster in kindNames.
func (f *Fleet) loadDockerImages(ctx context.Context, images, kindNames []string) error {
	dir, err := os.MkdirTemp("", "federator-images-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	archive := filepath.Join(dir, "images.tar")
	if _, err := (cli{command: "docker"}).run(ctx, nil, append([]string{"save", "-o", archive}, images...)...); err != nil {
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

// WorkloadImagesLoaded says whether every member has every WorkloadImages.
func (f *Fleet) WorkloadImagesLoaded() bool {
	return len(f.loadedImages) == len(WorkloadImages)
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
