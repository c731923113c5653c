#!/usr/bin/env bash
# Run Karmada v1.16.0's own end-to-end suite (test/e2e/suites/base, built
# unmodified by `make karmada-e2e` into bin/karmada-e2e) against a local
# federator fleet: `federator up --members 3`, a kubeconfig with the contexts
# the suite reads (karmada-apiserver and karmada-host, both the hub; members
# are reached through their push-mode Cluster secrets, as the suite does on a
# Karmada hub), then one line per spec, passed or failed.
#
#   hack/karmada-e2e.sh [--hub-crds DIR] [--name NAME]
#
# --hub-crds DIR starts the hub with Karmada's own CRDs (as a Karmada hub moving
# over has them) before federator's controllers start.
#
# Environment: KARMADA_E2E_FOCUS (Ginkgo focus regexp), KARMADA_E2E_POLL_TIMEOUT
# and KARMADA_E2E_POLL_INTERVAL (the suite's --poll-timeout/--poll-interval),
# KARMADA_E2E_OUT (where each run's report.json, suite.log and federator.log are
# kept; default .karmada-e2e), FLEET_ARGS (more `federator up` flags), BIN.
#
# The fleet is stopped and its directory removed on success, failure and
# Ctrl-C. Exit status: 0 when every spec passed but those listed in
# hack/karmada-e2e/known-failures.txt (docs/karmada.md says why each cannot
# pass here), 1 otherwise.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${BIN:-$ROOT/bin}
FOCUS=${KARMADA_E2E_FOCUS:-'Suspension|\[BasicCase\] PropagationPolicy testing|\[BasicCase\] ClusterPropagationPolicy testing|\[AdvancedPropagation\]|\[AdvancedCase\]|priority|OverridePolicy'}
POLL_TIMEOUT=${KARMADA_E2E_POLL_TIMEOUT:-120s}
POLL_INTERVAL=${KARMADA_E2E_POLL_INTERVAL:-1s}
OUT_ROOT=${KARMADA_E2E_OUT:-$ROOT/.karmada-e2e}
KNOWN=$ROOT/hack/karmada-e2e/known-failures.txt

hub_crds=""
name=fresh-hub
while [[ $# -gt 0 ]]; do
  case $1 in
    --hub-crds) hub_crds=$2; name=karmada-crds; shift 2 ;;
    --name) name=$2; shift 2 ;;
    *) echo "karmada-e2e: unknown argument $1 (use --hub-crds DIR, --name NAME)" >&2; exit 2 ;;
  esac
done
for b in federator karmada-e2e karmada-e2e-summary kubectl kube-apiserver etcd; do
  [[ -x $BIN/$b ]] || { echo "karmada-e2e: $BIN/$b is missing: run make karmada-e2e (it builds it)" >&2; exit 2; }
done

out=$OUT_ROOT/$name
rm -rf "$out" && mkdir -p "$out"
work=$(mktemp -d "${TMPDIR:-/tmp}/karmada-e2e.XXXXXX")
fleet_pid=""
suite_pid=""

# stop PID SECONDS WHAT: SIGINT (both programs clean up on it), then SIGKILL
# if it is still running after SECONDS.
stop() {
  local pid=$1 seconds=$2 what=$3
  kill -0 "$pid" 2>/dev/null || return 0
  kill -INT "$pid" 2>/dev/null || true
  for _ in $(seq 1 $((seconds * 2))); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
  if kill -0 "$pid" 2>/dev/null; then
    echo "karmada-e2e: $what ($pid) did not stop in ${seconds}s; killing it" >&2
    kill -KILL "$pid" 2>/dev/null || true
  fi
  wait "$pid" 2>/dev/null || true
}

cleanup() {
  local status=$?
  trap - EXIT INT TERM
  [[ -n $suite_pid ]] && stop "$suite_pid" 30 "the suite"
  # federator up stops every API server, etcd and kwok it started on SIGINT.
  [[ -n $fleet_pid ]] && stop "$fleet_pid" 60 "federator up"
  [[ -f $work/fleet/federator.log ]] && cp "$work/fleet/federator.log" "$out/federator.log"
  [[ -f $work/up.log ]] && cp "$work/up.log" "$out/up.log"
  rm -rf "$work"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

began=$(date +%s)
up_args=(up --members 3 --dir "$work/fleet" --bin-dir "$BIN")
[[ -n $hub_crds ]] && up_args+=(--hub-crds "$hub_crds")
# shellcheck disable=SC2206
up_args+=(${FLEET_ARGS:-})
echo "karmada-e2e [$name]: federator ${up_args[*]}"
"$BIN/federator" "${up_args[@]}" >"$work/up.log" 2>&1 &
fleet_pid=$!
until grep -q '^federator: ready' "$work/up.log" 2>/dev/null; do
  if ! kill -0 "$fleet_pid" 2>/dev/null; then
    echo "karmada-e2e [$name]: federator up exited before the fleet was ready:" >&2
    cat "$work/up.log" >&2
    exit 1
  fi
  if (($(date +%s) - began > 300)); then
    echo "karmada-e2e [$name]: the fleet is not ready after 300s:" >&2
    cat "$work/up.log" >&2
    exit 1
  fi
  sleep 1
done
ready=$(date +%s)
echo "karmada-e2e [$name]: fleet ready in $((ready - began))s"

# The suite reads two contexts of $KUBECONFIG: karmada-apiserver (Karmada's
# API) and karmada-host (where Karmada's components run): both are the hub.
kc=$work/karmada.kubeconfig
cp "$work/fleet/hub.kubeconfig" "$kc"
k() { "$BIN/kubectl" --kubeconfig "$kc" "$@"; }
cluster=$(k config view -o jsonpath='{.contexts[0].context.cluster}')
user=$(k config view -o jsonpath='{.contexts[0].context.user}')
k config rename-context "$(k config current-context)" karmada-apiserver >/dev/null
k config set-context karmada-host --cluster="$cluster" --user="$user" >/dev/null

# The suite runs `go env GOPATH` (for karmadactl, which the focus does not use).
echo "karmada-e2e [$name]: focus $FOCUS; --poll-timeout=$POLL_TIMEOUT --poll-interval=$POLL_INTERVAL"
set +e
(cd "$work" && KUBECONFIG=$kc exec "$BIN/karmada-e2e" -test.timeout 90m \
  -ginkgo.focus "$FOCUS" -ginkgo.v -ginkgo.no-color \
  -ginkgo.json-report "$out/report.json" \
  -poll-timeout "$POLL_TIMEOUT" -poll-interval "$POLL_INTERVAL") >"$out/suite.log" 2>&1 &
suite_pid=$!
wait "$suite_pid"
suite_status=$?
suite_pid=""
set -e
done_at=$(date +%s)
echo "karmada-e2e [$name]: suite exited $suite_status after $((done_at - ready))s (fleet start included: $((done_at - began))s); log $out/suite.log"
if [[ ! -s $out/report.json ]]; then
  echo "karmada-e2e [$name]: no report; the suite's log ends:" >&2
  tail -40 "$out/suite.log" >&2
  exit 1
fi
"$BIN/karmada-e2e-summary" -known "$KNOWN" "$out/report.json" | tee "$out/summary.txt"
