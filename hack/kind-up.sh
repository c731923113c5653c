#!/usr/bin/env bash
# Start a fleet of kind clusters: a hub and N members (default 2), named
# PREFIX-hub, PREFIX-member1, ... (PREFIX: --kind-prefix, default federator),
# with kubeconfigs in $KIND_FLEET_DIR (default .fleet-kind), federator's
# controllers running until Ctrl-C, which deletes every cluster it created.
# Further arguments go to `federator up` (--sample, --node-image IMG, ...).
#
# `federator up --provider kind` runs the nodes in Docker where it starts
# privileged containers, else in podman (--engine auto|docker|podman), and
# checks, before creating anything, what that engine needs (for podman: its
# rlimits in containers.conf, inotify instances, the node image, which it
# copies from Docker), saying what to run for each missing piece;
# `federator up` without --provider kind needs neither Docker nor podman.
#
#   hack/kind-up.sh 3 --sample [--engine podman]
set -euo pipefail
cd "$(dirname "$0")/.."

members=2
if [[ $# -gt 0 && $1 =~ ^[0-9]+$ ]]; then
  members=$1
  shift
fi
make --quiet build
exec bin/federator up --provider kind --members "$members" --dir "${KIND_FLEET_DIR:-.fleet-kind}" "$@"
