package fleet

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// binaries are the absolute paths of the programs a cluster runs.
type binaries struct {
	apiServer         string
	etcd              string
	controllerManager string // empty unless kube-controller-manager is wanted
	scheduler         string // empty unless members run workloads
	kwok              string // empty unless members run workloads
}

// findBinaries resolves the programs in binDir (or $KUBEBUILDER_ASSETS when
// binDir is empty) and checks that they are there before anything starts, so
// a missing build is reported once, with what to do about it.
func findBinaries(binDir string, withControllerManager, withWorkloads bool) (binaries, error) {
	if binDir == "" {
		binDir = os.Getenv("KUBEBUILDER_ASSETS")
	}
	if binDir == "" {
		return binaries{}, errors.New("fleet: no binary directory: set Options.BinDir or $KUBEBUILDER_ASSETS to the directory `make binaries` fills (bin/)")
	}
	abs, err := filepath.Abs(binDir)
	if err != nil {
		return binaries{}, fmt.Errorf("fleet: binary directory %q: %w", binDir, err)
	}
	b := binaries{
		apiServer: filepath.Join(abs, "kube-apiserver"),
		etcd:      filepath.Join(abs, "etcd"),
	}
	wanted := []string{b.apiServer, b.etcd}
	if withControllerManager {
		b.controllerManager = filepath.Join(abs, "kube-controller-manager")
		wanted = append(wanted, b.controllerManager)
	}
	if withWorkloads {
		b.scheduler = filepath.Join(abs, "kube-scheduler")
		b.kwok = filepath.Join(abs, "kwok")
		wanted = append(wanted, b.scheduler, b.kwok)
	}
	var errs []error
	for _, path := range wanted {
		if err := checkExecutable(path); err != nil {
			errs = append(errs, err)
		}
	}
	return b, errors.Join(errs...)
}

func checkExecutable(path string) error {
	info, err := os.Stat(path)
	switch {
	case os.IsNotExist(err):
		return fmt.Errorf("fleet: %s not found: run `make binaries`", path)
	case err != nil:
		return fmt.Errorf("fleet: %s: %w", path, err)
	case info.IsDir() || info.Mode()&0o111 == 0:
		return fmt.Errorf("fleet: %s is not an executable file: run `make binaries`", path)
	}
	return nil
}
