#!/usr/bin/env bash
# hack/test.sh: what `make test` runs, every test of the project, in stages
# laid out for a 2-core machine (DEVELOPMENT.md, "How make test spends its
# time"): builds at full speed, suites that wait on API servers side by
# side, Karmada's e2e binary built at low priority while the e2e suite
# waits on its fleets. Ends with a timing table (hack/stages.sh); exits
# non-zero when any stage failed, after running every stage that does not
# depend on a failed one.
set -uo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=hack/stages.sh
source hack/stages.sh
trap 'stages_stop; exit 130' INT
trap 'stages_stop; exit 143' TERM

finish() {
  stage_wait || true
  if [[ -z ${STAGES_OWNER:-} ]]; then
    stages_table
  else
    # The caller (.ci/run) prints the table for its whole run.
    ! cut -f5 "$STAGES_FILE" | grep -qv '^0$'
  fi
  exit $?
}

# Everything else needs the fleet's programs, federator and the Ginkgo CLI:
# four builds (the Kubernetes programs, etcd, kwok, federator) side by side,
# so one links while another compiles.
stage build make -j4 binaries build ginkgo || finish

# vet compiles while unit's API servers start and wait.
stage_bg vet make vet
stage unit make unit
stage_wait vet
# Karmada's suite shares its dependencies' versions with federator
# (hack/moduleversions), so vet and unit have compiled nearly all of it.
stage_bg karmada-build nice -n 15 make karmada-e2e-build
stage e2e make e2e
# The soak and Karmada's two runs each wait on their own fleet; the checker
# follows Karmada's runs, so no more than two fleets are busy at once.
stage_bg soak make soak
stage_wait karmada-build && stage karmada-e2e make karmada-e2e
stage chaos-short make chaos-short
finish
