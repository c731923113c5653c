#!/usr/bin/env bash
# make fuzz: runs every Go fuzz target (func FuzzXxx in a _test.go under
# apis/, internal/, pkg/ and cmd/) for FUZZTIME, one after another, then
# prints one line per target: the executions, the new interesting inputs
# and whether it failed. A failing input is written by go test under the
# package's testdata/fuzz/FuzzXxx/: commit it with the fix, as the
# regression seed the unit tests then run.
#
#   FUZZTIME=30s      how long each target runs (go test -fuzztime)
#   FUZZ=Gate         run only the targets whose name matches (grep -E)
#   FUZZ_PARALLEL=1   fuzzing workers per target (default: GOMAXPROCS)
#   FUZZMINIMIZETIME=10s  how long each new interesting input is minimized
#                     (go test's default, 60s, can eat a short run)
set -uo pipefail
cd "$(dirname "$0")/.."
fuzztime=${FUZZTIME:-30s}
filter=${FUZZ:-.}
parallel=()
[ -n "${FUZZ_PARALLEL:-}" ] && parallel=(-parallel "$FUZZ_PARALLEL")
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT

summary=()
failed=0
while read -r dir; do
  for target in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go | sed 's/^func //' | grep -E "$filter" | sort); do
    echo "== ./$dir $target (-fuzztime $fuzztime)"
    if go test "./$dir" -run '^$' -fuzz "^$target\$" -fuzztime "$fuzztime" -fuzzminimizetime "${FUZZMINIMIZETIME:-10s}" "${parallel[@]}" 2>&1 | tee "$log/$target"; then
      result=ok
    else
      result=FAILED
      failed=1
    fi
    execs=$(grep -o 'execs: [0-9]*' "$log/$target" | tail -1 | cut -d' ' -f2)
    interesting=$(grep -o 'new interesting: [0-9]*' "$log/$target" | tail -1 | cut -d' ' -f3)
    summary+=("$(printf '%-28s %-22s %12s %6s  %s' "$target" "./$dir" "${execs:-0}" "${interesting:-0}" "$result")")
  done
done < <(grep -rl --include='*_test.go' '^func Fuzz' apis internal pkg cmd | xargs -n1 dirname | sort -u)

echo
printf '%-28s %-22s %12s %6s  %s\n' target package execs new result
printf '%s\n' "${summary[@]}"
exit $failed
