#!/usr/bin/env bash
# hack/test.sh: what `make test` runs, every test of the project, in stages
# laid out for a 2-core machine (DEVELOPMENT.md, "How make test spends its
# time"): builds at full speed, the e2e suite alone in three processes,
# then the suites that wait on API servers side by side. Ends with a timing
# table (hack/stages.sh); exits non-zero when any stage failed, after
# running every stage that does not depend on a failed one.
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

# Everything else needs the fleet's programs, federator, the Ginkgo CLI and
# Karmada's karmada-agent (the e2e suite's Pull member): five builds (the
# Kubernetes programs, etcd, kwok, federator, karmada-agent) side by side,
# so one links while another compiles.
stage build make -j4 binaries build ginkgo karmada-agent || finish

# vet compiles while unit's API servers start and wait.
stage_bg vet make vet
stage unit make unit
stage_wait vet
# The e2e suite with the soak beside it: three fleets keep the CPUs 50-70%
# busy, and the soak's one workload fleet, ten minutes of waiting, adds
# about 15%; after the suite it was the longest stage left (10m41s against
# Karmada's 7m48s). A build beside the suite, even at low priority, made it
# a quarter slower: the suite's test binary is compiled once first, so the
# two that run it (ginkgo, go test) link from the same compiled packages.
stage e2e-build go test -c -o /dev/null ./test/e2e/
stage_bg soak make soak
stage e2e make e2e
# Then what waits on fleets of its own, side by side (10-20% CPU each): the
# checker, and Karmada's suite, whose binary builds first from what vet,
# unit and e2e compiled (its dependencies are federator's versions:
# hack/moduleversions).
stage_bg chaos-short make chaos-short
stage karmada-build make karmada-e2e-build && stage karmada-e2e make karmada-e2e
finish
