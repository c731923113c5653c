#!/usr/bin/env bash
# Delete the kind clusters of a fleet (PREFIX-hub, PREFIX-member1, ...; PREFIX
# defaults to federator) and the kubeconfigs in $KIND_FLEET_DIR (default
# .fleet-kind): what `federator up --provider kind` leaves when it is killed
# rather than stopped with Ctrl-C, in Docker and in podman. Other kind
# clusters are left alone. Uses
# kind at the version go.mod pins (go run, no separate install).
#
#   hack/kind-down.sh [PREFIX]
set -euo pipefail
cd "$(dirname "$0")/.."

prefix=${1:-federator}
# In Docker and in podman, whichever are installed (federator up --engine).
found=0
for engine in docker podman; do
  command -v "$engine" >/dev/null || continue
  kind() { KIND_EXPERIMENTAL_PROVIDER=$engine go run sigs.k8s.io/kind "$@"; }
  mapfile -t clusters < <(kind get clusters 2>/dev/null | grep -E "^${prefix}-(hub|member[0-9]+)$" || true)
  if [[ ${#clusters[@]} -gt 0 ]]; then
    found=1
    kind delete clusters "${clusters[@]}"
  fi
done
((found)) || echo "kind-down: no kind clusters named ${prefix}-hub or ${prefix}-memberN"
dir=${KIND_FLEET_DIR:-.fleet-kind}
rm -f "$dir"/hub.kubeconfig "$dir"/member[0-9]*.kubeconfig
