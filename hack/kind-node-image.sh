#!/usr/bin/env bash
# Builds federator/kind-node:v1.34.1, a kind node image for Kubernetes
# v1.34.1, with no image registry: only Debian's package mirror and the Go
# module proxy are used.
#
#   hack/kind-node-image.sh            build it (make kind-image)
#   hack/kind-node-image.sh --verify   check the built image (go test)
#
# What it makes, following kind v0.30.0's images/base/Dockerfile and
# pkg/build/nodeimage (read from the sigs.k8s.io/kind module; its small
# config files and scripts are copied from there at build time, the
# manifests evaluated from its Go constants by hack/kind-node-image/kindconst):
#   - a Debian bookworm root file system by debootstrap, with systemd,
#     iptables/nftables, conntrack, runc and the CNI plugins from Debian,
#     imported with `docker import`;
#   - containerd v2.1.4 (kind's version; Debian's 1.6.20 is older than any
#     containerd Kubernetes v1.34 is tested with) and crictl built from their
#     Go modules; kubelet, kubeadm, kubectl from k8s.io/kubernetes (hack/tools);
#   - the images `kubeadm config images list` names and kind's CNI and
#     storage images, built FROM scratch around static binaries (kube-proxy
#     and kindnetd on a small debootstrapped Debian with iptables), imported
#     into the node's containerd (namespace k8s.io, unpacked on first use)
#     by running containerd in an ordinary, unprivileged build container, as
#     kind's own build does: so kubelet finds them at boot, and no import
#     step runs on the node.
# Every container, intermediate image, temporary directory and debootstrap
# mount it makes is removed on success, failure and interruption.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
KUBE_VERSION=v1.34.1
IMAGE=${KIND_NODE_IMAGE:-federator/kind-node:${KUBE_VERSION}}
KIND_VERSION=v0.30.0       # sigs.k8s.io/kind in go.mod
CONTAINERD_VERSION=v2.1.4  # hack/kind-node-image/containerd/go.mod
CRICTL_VERSION=v1.34.0     # kind uses v1.33.0, which the module proxy lacks
COREDNS_VERSION=v1.12.1    # kubeadm v1.34.1's
LOCAL_PATH_VERSION=v0.0.30 # the newest the module proxy has
DEBIAN_SUITE=bookworm
DEBIAN_MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
BIN=${BIN:-$ROOT/bin}

# The node's packages: kind's list (images/base/Dockerfile) less nfs-common
# and open-iscsi (storage tests only), plus runc and the CNI plugins, which
# kind builds itself, and busybox-static for the storage helper image.
NODE_PACKAGES=systemd,conntrack,iptables,nftables,iproute2,ethtool,util-linux,mount,kmod,libseccomp2,pigz,fuse-overlayfs,bash,ca-certificates,curl,jq,procps,runc,containernetworking-plugins,busybox-static
# kube-proxy's and kindnetd's base: what they run besides themselves.
NET_PACKAGES=iptables,nftables,conntrack,iproute2

log() { printf '%s kind-node-image: %s\n' "$(date +%T)" "$*" >&2; }
die() { log "error: $*"; exit 1; }

if [[ ${1:-} == --verify ]]; then
	cd "$ROOT"
	KIND_NODE_IMAGE=$IMAGE exec go test ./pkg/kindfleet/ -run 'TestLocalNodeImage' -count=1 -v
fi
[[ $# -eq 0 ]] || die "usage: $0 [--verify]"
[[ $(id -u) == 0 ]] || die "run as root: debootstrap needs it"
docker version --format '{{.Server.Version}}' >/dev/null || die "no Docker daemon answers"

began=$(date +%s)
id=$(date +%s)-$$
# Intermediate images are federator-kind-build/NAME:$id, containers
# federator-kind-build-$id-NAME; both are removed by cleanup.
tag() { echo "federator-kind-build/$1:$id"; }
work=$(mktemp -d /tmp/kind-node-image.XXXXXX)
mkdir "$work/logs"
declare -a pids=()
nbuild=0

# dbuild ARG...: docker build, its output kept in $work/logs and shown when
# it fails. The legacy builder leaves the images of a failed build's steps;
# cleanup removes those (stepimages) unless a kept image is built on them.
# It runs in a session of its own, out of reach of Ctrl-C: a client killed
# mid-build leaves the daemon to finish the step after cleanup has run;
# instead the build ends, then the trap runs.
dbuild() {
	local log="$work/logs/build-$((++nbuild)).log"
	setsid --wait docker build --force-rm "$@" >"$log" 2>&1 && return
	grep -v -e DEPRECATED -e buildx -e '^ *$' "$log" | tail -n 20 >&2
	return 1
}
stepimages() { # the images the builds' steps made, newest first (not their FROMs)
	cat "$work"/logs/build-*.log 2>/dev/null |
		awk '/^Step [0-9]+\/[0-9]+ : /{from = ($4 == "FROM"); next} /^ ---> [0-9a-f]+$/{if (!from) print $2; from = 0}' | tac
}

tree() { # PID: it and its descendants
	local c
	echo "$1"
	for c in $(pgrep -P "$1"); do tree "$c"; done
}
cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	set +e +o pipefail # clean up all there is, whatever fails
	# End the background jobs with all they started (debootstrap, go, dpkg)
	# before unmounting and removing what they work in.
	local procs=() p i img
	for p in "${pids[@]}"; do mapfile -t -O "${#procs[@]}" procs < <(tree "$p"); done
	if ((${#procs[@]})); then
		kill "${procs[@]}" 2>/dev/null || true
		for i in $(seq 50); do # up to 10 s, until only zombies are left
			ps -o stat= -p "$(IFS=,; echo "${procs[*]}")" | grep -qv '^Z' || break
			sleep 0.2
		done
	fi
	docker ps -aq --filter "name=federator-kind-build-$id-" | xargs -r docker rm -f >/dev/null 2>&1 || true
	# Twice: a killed `docker import` may still be tagging its image.
	for i in 1 2; do
		docker images --format "{{.Repository}}:{{.Tag}}" --filter "reference=federator-kind-build/*:$id" | xargs -r docker rmi -f >/dev/null 2>&1
		((i == 2)) || sleep 1
	done
	stepimages | while read -r img; do # untagged ones only: the last is $IMAGE
		[[ $(docker image inspect -f '{{len .RepoTags}}' "$img" 2>/dev/null) == 0 ]] &&
			docker rmi "$img" >/dev/null 2>&1 || true
	done
	# debootstrap mounts proc, sys and devpts in its chroots; a killed one
	# leaves them: unmount, deepest first, before removing the tree.
	findmnt -rno TARGET | grep "^$work/" | sort -r | xargs -r -n1 umount -l 2>/dev/null || true
	rm -rf "$work"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

kind_dir=$(cd "$ROOT" && go mod download -json "sigs.k8s.io/kind@$KIND_VERSION" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
[[ -d $kind_dir/images/base/files ]] || die "sigs.k8s.io/kind@$KIND_VERSION not in the module cache"
kube_dir=$(cd "$ROOT/hack/tools" && go list -m -f '{{.Dir}}' k8s.io/kubernetes)

# --- 1. binaries and root file systems, in parallel --------------------------
mkdir -p "$work/bin" "$work/debs"
go_bins() {
	make -C "$ROOT" --no-print-directory BIN="$BIN" \
		"$BIN"/{kubelet,kubeadm,kubectl,kube-proxy,kube-apiserver,kube-controller-manager,kube-scheduler,etcd}
	local static=(env CGO_ENABLED=0 GOBIN="$work/bin" go install -trimpath)
	(cd "$ROOT/hack/kind-node-image/containerd" && "${static[@]}" -tags "no_aufs no_zfs no_btrfs no_devmapper" \
		-ldflags "-s -w -X github.com/containerd/containerd/v2/version.Version=$CONTAINERD_VERSION" \
		github.com/containerd/containerd/v2/cmd/{containerd,ctr,containerd-shim-runc-v2})
	"${static[@]}" -ldflags "-s -w -X sigs.k8s.io/cri-tools/pkg/version.Version=$CRICTL_VERSION" \
		"sigs.k8s.io/cri-tools/cmd/crictl@$CRICTL_VERSION"
	"${static[@]}" -ldflags "-s -w" "github.com/coredns/coredns@$COREDNS_VERSION"
	"${static[@]}" -ldflags "-s -w -X main.VERSION=$LOCAL_PATH_VERSION" "github.com/rancher/local-path-provisioner@$LOCAL_PATH_VERSION"
	(cd "$ROOT" && "${static[@]}" -ldflags "-s -w" ./hack/kind-node-image/kindnetd)
	gcc -static -Os -DVERSION=v3.10.1-federator -o "$work/bin/pause" "$kube_dir/build/pause/linux/pause.c"
	strip "$work/bin/pause"
}
rootfs() { # NAME PACKAGES
	debootstrap --variant=minbase --cache-dir="$work/debs" --include="$2" \
		"$DEBIAN_SUITE" "$work/$1" "$DEBIAN_MIRROR"
	rm -rf "$work/$1"/var/cache/apt/archives/*.deb "$work/$1"/var/lib/apt/lists/*
	tar -C "$work/$1" --numeric-owner -c . | docker import - "$(tag "$1")" >/dev/null
}
if ! command -v debootstrap >/dev/null; then
	log "installing debootstrap"
	apt-get install -y debootstrap >/dev/null || { apt-get update >/dev/null && apt-get install -y debootstrap >/dev/null; }
fi
log "building binaries and debootstrapping $DEBIAN_SUITE (logs in $work/logs)"
go_bins >"$work/logs/go.log" 2>&1 &
pids+=($!)
# The second debootstrap reuses the first's downloads.
(rootfs node-rootfs "$NODE_PACKAGES" && rootfs net-rootfs "$NET_PACKAGES") >"$work/logs/debootstrap.log" 2>&1 &
pids+=($!)
# The first to fail stops the build (cleanup ends the other).
declare -A job=(["${pids[0]}"]=go ["${pids[1]}"]=debootstrap)
while ((${#job[@]})); do
	wait -n -p done "${!job[@]}" || { tail -n 30 "$work/logs/${job[$done]}.log" >&2; die "${job[$done]} failed (log above)"; }
	unset "job[$done]"
done
pids=()
cp "$work/node-rootfs/bin/busybox" "$work/bin/busybox"
rm -rf "$work/node-rootfs" "$work/net-rootfs" "$work/debs"

# --- 2. the images kubeadm and kind ask for ----------------------------------
# NAME=REFERENCE: the reference the node's containerd keeps it under.
mapfile -t kubeadm_images < <("$BIN/kubeadm" config images list --kubernetes-version "$KUBE_VERSION")
read -r kindnetd_image lpp_image lpp_helper_image < <(cd "$ROOT" && go run ./hack/kind-node-image/kindconst \
	"$kind_dir/pkg/build/nodeimage" kindnetdImage storageProvisionerImage storageHelperImage | paste -sd' ')
ref_for() { # NAME -> the kubeadm reference of that component
	local r
	for r in "${kubeadm_images[@]}"; do [[ ${r%:*} == */$1 ]] && { echo "$r"; return; }; done
	die "kubeadm config images list names no $1"
}
# image NAME BASE ENTRYPOINT ARG... : FROM BASE, with each ARG either
# SRC=DEST (a file copied to that path) or "RUN ..." (a Dockerfile line);
# PATH set as in the upstream images.
image() {
	local name=$1 base=$2 entrypoint=$3 ctx="$work/ctx-$1" a
	shift 3
	mkdir -p "$ctx/root"
	{
		echo "FROM $base"
		echo "COPY root/ /"
		echo "ENV PATH=/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
		echo "ENTRYPOINT [\"$entrypoint\"]"
	} >"$ctx/Dockerfile"
	for a in "$@"; do
		case $a in
		RUN\ *) echo "$a" >>"$ctx/Dockerfile" ;;
		*) install -D -m 0755 "${a%%=*}" "$ctx/root/${a#*=}" ;;
		esac
	done
	dbuild -t "$(tag "$name")" "$ctx"
}
log "building the control-plane and add-on images"
declare -A refs
for c in kube-apiserver kube-controller-manager kube-scheduler; do
	image "$c" scratch "/usr/local/bin/$c" "$BIN/$c=usr/local/bin/$c"
	refs[$c]=$(ref_for "$c")
done
image etcd scratch /usr/local/bin/etcd "$BIN/etcd=usr/local/bin/etcd"
refs[etcd]=$(ref_for etcd)
image coredns scratch /coredns "$work/bin/coredns=coredns"
refs[coredns]=$(ref_for coredns)
image pause scratch /pause "$work/bin/pause=pause"
refs[pause]=$(ref_for pause)
# kube-proxy and kindnetd run iptables; iptables-wrapper picks legacy or
# nft on first use, as the upstream images do.
wrapper=("$ROOT/hack/kind-node-image/iptables-wrapper=usr/sbin/iptables-wrapper"
	"RUN for c in iptables iptables-save iptables-restore ip6tables ip6tables-save ip6tables-restore; do ln -sf iptables-wrapper /usr/sbin/\$c; done")
image kube-proxy "$(tag net-rootfs)" /usr/local/bin/kube-proxy "$BIN/kube-proxy=usr/local/bin/kube-proxy" "${wrapper[@]}"
refs[kube-proxy]=$(ref_for kube-proxy)
# (Under usr/: on merged-/usr Debian, /bin is a link a COPY would replace.)
image kindnetd "$(tag net-rootfs)" /usr/local/bin/kindnetd "$work/bin/kindnetd=usr/local/bin/kindnetd" "${wrapper[@]}"
refs[kindnetd]=$kindnetd_image
image local-path-provisioner scratch /usr/local/bin/local-path-provisioner \
	"$work/bin/local-path-provisioner=usr/local/bin/local-path-provisioner"
refs[local-path-provisioner]=$lpp_image
# The storage helper runs `sh /script/setup|teardown` (mkdir, rm, chmod).
image local-path-helper scratch /bin/sh "$work/bin/busybox=bin/busybox" 'RUN ["/bin/busybox", "--install", "-s", "/bin"]'
refs[local-path-helper]=$lpp_helper_image

# --- 3. the node ---------------------------------------------------------------
log "assembling the node"
n="$work/node"
f="$kind_dir/images/base/files"
mkdir -p "$n"/{usr/local/bin,usr/bin,kind/bin,kind/manifests,etc/containerd,etc/default,etc/sysctl.d,etc/systemd/system/kubelet.service.d}
# kind's base files (Apache-2.0, The Kubernetes Authors), as its Dockerfile
# copies them; the fuse-overlayfs unit is left out with its snapshotter.
install -m 0755 "$f/usr/local/bin/entrypoint" "$n/usr/local/bin/"
install -m 0755 "$f"/kind/bin/* "$n/kind/bin/"
install -m 0644 "$f/etc/crictl.yaml" "$n/etc/"
install -m 0644 "$f/etc/default/kubelet" "$n/etc/default/"
install -m 0644 "$f"/etc/sysctl.d/* "$n/etc/sysctl.d/"
install -m 0644 "$f"/etc/systemd/system/{containerd.service,kubelet.service,kubelet.slice,undo-mount-hacks.service} "$n/etc/systemd/system/"
install -m 0644 "$f"/etc/systemd/system/kubelet.service.d/* "$n/etc/systemd/system/kubelet.service.d/"
# The sandbox image kubeadm expects, as kind's release images set it; and
# restrict_oom_score_adj = true, which kind's entrypoint sets only in a user
# namespace (rootless): where the node runs with fewer capabilities than
# Docker's --privileged gives (podman's --privileged on a host whose bounding
# set lacks CAP_SYS_RESOURCE, docs/kind.md), runc cannot lower a pause
# container's oom_score_adj to -998 and every pod sandbox fails with "can't
# get final child's PID from pipe: EOF". Restricted, containerd never sets a
# score below its own: under Docker, where it runs at -999 (kind's unit), the
# pause container keeps its -998; under podman the pods get containerd's.
sed -e "s|sandbox_image = .*|sandbox_image = \"${refs[pause]}\"|" \
	-e 's|restrict_oom_score_adj = false|restrict_oom_score_adj = true|' \
	"$f/etc/containerd/config.toml" >"$n/etc/containerd/config.toml"
grep -q '^ *restrict_oom_score_adj = true$' "$n/etc/containerd/config.toml" ||
	die "kind's containerd config.toml has no 'restrict_oom_score_adj = false' to turn on (kind $KIND_VERSION changed it?)"
install -m 0755 "$BIN"/{kubelet,kubeadm,kubectl} "$n/usr/bin/"
install -m 0755 "$work"/bin/{containerd,ctr,containerd-shim-runc-v2,crictl} "$n/usr/local/bin/"
echo "$KUBE_VERSION" >"$n/kind/version"
(cd "$ROOT" && go run ./hack/kind-node-image/kindconst "$kind_dir/pkg/build/nodeimage" defaultCNIManifest) >"$n/kind/manifests/default-cni.yaml"
(cd "$ROOT" && go run ./hack/kind-node-image/kindconst "$kind_dir/pkg/build/nodeimage" defaultStorageManifest) >"$n/kind/manifests/default-storage.yaml"
# What the preloaded images are, for the check (--verify) and for people.
for c in "${!refs[@]}"; do echo "${refs[$c]}"; done | sort >"$n/kind/images"
cat >"$work/Dockerfile.node" <<EOF
FROM $(tag node-rootfs)
COPY node/ /
RUN set -eux; \\
    find /lib/systemd/system/sysinit.target.wants/ -name systemd-tmpfiles-setup.service -delete; \\
    rm -f /lib/systemd/system/multi-user.target.wants/* /etc/systemd/system/*.wants/* \\
      /lib/systemd/system/local-fs.target.wants/* /lib/systemd/system/sockets.target.wants/*udev* \\
      /lib/systemd/system/sockets.target.wants/*initctl* /lib/systemd/system/basic.target.wants/*; \\
    echo "ReadKMsg=no" >> /etc/systemd/journald.conf; \\
    ln -sf /lib/systemd/systemd /sbin/init; \\
    systemctl enable kubelet.service containerd.service undo-mount-hacks.service; \\
    systemctl mask systemd-binfmt.service; \\
    mkdir -p /etc/kubernetes/manifests /opt/cni/bin; \\
    for p in host-local loopback ptp portmap bridge; do ln -s /usr/lib/cni/\$p /opt/cni/bin/\$p; done; \\
    ctr oci spec | jq '.hooks.createContainer[.hooks.createContainer| length] |= . + {"path": "/kind/bin/mount-product-files.sh"}' \\
      | jq 'del(.process.rlimits)' > /etc/containerd/cri-base.json
EOF
dbuild -f "$work/Dockerfile.node" -t "$(tag node-stage)" "$work"

log "saving the images and importing them into the node's containerd"
build_refs=()
for c in "${!refs[@]}"; do build_refs+=("$(tag "$c")"); done
docker save "${build_refs[@]}" -o "$work/images.tar"
# containerd runs unprivileged here: importing without unpacking needs only
# its content store and metadata, which land in /var/lib/containerd.
import_script='set -eu
cat >/tmp/ctrd.toml <<EOF
version = 2
root = "/var/lib/containerd"
state = "/tmp/ctrd-state"
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = "/tmp/ctrd.sock"
EOF
containerd --config /tmp/ctrd.toml >/tmp/ctrd.log 2>&1 &
pid=$!
for i in $(seq 50); do [ -S /tmp/ctrd.sock ] && break; sleep 0.2; done
ctr="ctr --address /tmp/ctrd.sock --namespace k8s.io"
$ctr images import --label=io.cri-containerd.pinned=pinned --no-unpack /images.tar >/dev/null
while read -r from to; do
  $ctr images tag --force "docker.io/$from" "$to" >/dev/null
  $ctr images rm "docker.io/$from" >/dev/null
done
$ctr images ls -q
kill $pid; wait || true
rm -rf /tmp/ctrd.toml /tmp/ctrd.log /tmp/ctrd-state /tmp/ctrd.sock'
for c in "${!refs[@]}"; do echo "$(tag "$c") ${refs[$c]}"; done |
	docker run -i --name "federator-kind-build-$id-import" -v "$work/images.tar:/images.tar:ro" \
		--entrypoint /bin/sh "$(tag node-stage)" -c "$import_script" >"$work/imported"
sort "$work/imported" | diff -u "$n/kind/images" - || die "the node's containerd does not hold exactly the images above"
setsid --wait docker commit "federator-kind-build-$id-import" "$(tag node-imported)" >/dev/null
previous=$(docker image inspect --format '{{.Id}}' "$IMAGE" 2>/dev/null || true)
dbuild -t "$IMAGE" - <<EOF
FROM $(tag node-imported)
ENV container=docker
STOPSIGNAL SIGRTMIN+3
ENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]
EOF

# The image this one replaces, now untagged, goes (unless something else uses it).
if [[ -n $previous && $(docker image inspect --format '{{len .RepoTags}}' "$previous" 2>/dev/null) == 0 ]]; then
	docker rmi "$previous" >/dev/null 2>&1 || true
fi
elapsed=$(($(date +%s) - began))
size=$(docker image inspect --format '{{.Size}}' "$IMAGE")
log "built $IMAGE in $((elapsed / 60))m$((elapsed % 60))s; image size $((size / 1000000)) MB ($(wc -l <"$n/kind/images") images preloaded)"
