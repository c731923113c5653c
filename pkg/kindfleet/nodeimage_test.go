package kindfleet

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// The node image hack/kind-node-image.sh builds (make kind-image) is what
// kind needs, checked without starting a node (this machine's Docker may
// refuse privileged containers): throwaway, unprivileged containers of it
// run each check. It runs when KIND_NODE_IMAGE names the image to check
// (make kind-image-verify sets it to LocalNodeImage), so that `make test`
// spends no time on it.
func TestLocalNodeImage(t *testing.T) {
	image := os.Getenv("KIND_NODE_IMAGE")
	if image == "" {
		t.Skipf("KIND_NODE_IMAGE is unset: set it to the node image to check (make kind-image-verify checks %s)", LocalNodeImage)
	}
	d := daemonAnswers(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if _, err := d.run(ctx, nil, "image", "inspect", image); err != nil {
		t.Skipf("node image %s is absent (make kind-image builds it), so there is nothing to check: %v", image, err)
	}
	// in runs a shell script in a throwaway container of the image; a
	// script that fails fails the test, and the next check still runs.
	in := func(t *testing.T, script string) string {
		t.Helper()
		out, err := exec.CommandContext(ctx, d.command, "run", "--rm", "--entrypoint", "/bin/sh", image, "-c", script).CombinedOutput()
		if err != nil {
			t.Errorf("in %s: %s: %v\n%s", image, script, err, out)
		}
		return strings.TrimSpace(string(out))
	}

	t.Run("kubernetes binaries are v1.34.1", func(t *testing.T) {
		for cmd, want := range map[string]string{
			"kubelet --version":        "Kubernetes v1.34.1",
			"kubeadm version -o short": "v1.34.1",
			"kubectl version --client -o json | grep '\"gitVersion\"'": `"gitVersion": "v1.34.1",`,
			"cat /kind/version": "v1.34.1",
		} {
			if got := in(t, cmd); got != want {
				t.Errorf("%s: %q, want %q", cmd, got, want)
			}
		}
	})

	t.Run("runtime, CNI plugins and systemd are there", func(t *testing.T) {
		for cmd, want := range map[string]string{
			"containerd --version":       `^containerd github.com/containerd/containerd/v2 v2\.`,
			"containerd-shim-runc-v2 -v": `^containerd-shim-runc-v2:\n +Version: +v2\.`,
			"runc --version":             `(?m)^runc version 1\.`,
			"crictl --version":           `^crictl version v1\.`,
			"cat /etc/crictl.yaml":       `runtime-endpoint: unix:///run/containerd/containerd.sock`,
			// kindnetd's conflist names ptp, host-local and portmap.
			"for p in host-local loopback ptp portmap; do test -x /opt/cni/bin/$p && echo $p; done": `^host-local\nloopback\nptp\nportmap$`,
			// kind's entrypoint execs /sbin/init: systemd.
			"init=$(readlink -f /sbin/init) && echo $init && $init --version | head -1":                                   `^/usr/lib/systemd/systemd\nsystemd 2\d\d `,
			"ls /etc/systemd/system/multi-user.target.wants/":                                                             `containerd\.service\nkubelet\.service\nundo-mount-hacks\.service`,
			"test -x /usr/local/bin/entrypoint && ls /kind/bin /etc/systemd/system/kubelet.service.d":                     `10-kubeadm\.conf\n11-kind\.conf(.|\n)*create-kubelet-cgroup-v2\.sh\nmount-product-files\.sh\nundo-mount-hacks\.sh`,
			"grep -c kindnet /kind/manifests/default-cni.yaml && grep -c local-path /kind/manifests/default-storage.yaml": `^[1-9]\d*\n[1-9]\d*$`,
			"jq -c '.hooks.createContainer' /etc/containerd/cri-base.json":                                                `mount-product-files\.sh`,
		} {
			if got := in(t, cmd); !regexp.MustCompile(want).MatchString(got) {
				t.Errorf("%s: %q, want a match of %q", cmd, got, want)
			}
		}
	})

	// Without it every pod sandbox fails on a node that may not lower
	// oom_score_adj (podman on a host without CAP_SYS_RESOURCE):
	// "can't get final child's PID from pipe: EOF".
	t.Run("containerd restricts oom_score_adj", func(t *testing.T) {
		got := in(t, `sed -n 's/^ *restrict_oom_score_adj *= *//p' /etc/containerd/config.toml`)
		if got != "true" {
			t.Errorf("/etc/containerd/config.toml: restrict_oom_score_adj = %q, want true (hack/kind-node-image.sh sets it)", got)
		}
	})

	t.Run("the image starts systemd as kind runs it", func(t *testing.T) {
		var config struct {
			Config struct {
				Entrypoint []string
				StopSignal string
				Env        []string
			}
		}
		out, err := d.run(ctx, nil, "image", "inspect", "--format", "{{json .}}", image)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(out), &config); err != nil {
			t.Fatal(err)
		}
		c := config.Config
		if !slices.Equal(c.Entrypoint, []string{"/usr/local/bin/entrypoint", "/sbin/init"}) || c.StopSignal != "SIGRTMIN+3" || !slices.Contains(c.Env, "container=docker") {
			t.Errorf("entrypoint %q, stop signal %q, env %q; kind's base image has [/usr/local/bin/entrypoint /sbin/init], SIGRTMIN+3, container=docker",
				c.Entrypoint, c.StopSignal, c.Env)
		}
	})

	t.Run("containerd holds every image kubeadm and kind ask for", func(t *testing.T) {
		// What is asked: kubeadm's list, less its pause, plus containerd's
		// sandbox image (kind's rule), and every image of kind's CNI and
		// storage manifests, the storage helper among them.
		asked := strings.Fields(in(t, `
kubeadm config images list --kubernetes-version "$(cat /kind/version)" | grep -v /pause:
sed -n 's/^ *sandbox_image = "\(.*\)"/\1/p' /etc/containerd/config.toml
sed -n 's/^ *\(- \)\{0,1\}image: *//p' /kind/manifests/*.yaml
grep -h -A1 -- '- --helper-image' /kind/manifests/*.yaml | sed -n 's/^ *- \([^-].*\)/\1/p'`))
		if len(asked) < 10 {
			t.Fatalf("only %d images asked for (%q); the manifests or kubeadm changed?", len(asked), asked)
		}
		// What containerd has, asked of a containerd run here, unprivileged,
		// on the image's own /var/lib/containerd.
		held := strings.Fields(in(t, `set -e
printf 'version = 2\nstate = "/tmp/s"\ndisabled_plugins = ["io.containerd.grpc.v1.cri"]\n[grpc]\n  address = "/tmp/c.sock"\n' >/tmp/c.toml
containerd --config /tmp/c.toml >/tmp/c.log 2>&1 &
for i in $(seq 50); do [ -S /tmp/c.sock ] && break; sleep 0.2; done
ctr --address /tmp/c.sock --namespace k8s.io images ls -q`))
		t.Logf("asked for: %q\nheld: %q", asked, held)
		for _, a := range asked {
			if !slices.Contains(held, a) {
				t.Errorf("%s is asked for but not in the node's containerd (namespace k8s.io holds %q)", a, held)
			}
		}
	})
}
