#!/usr/bin/env bash
# stages.sh: run the stages of `make test` and .ci/run, some of them side by
# side, and say at the end what each took. Sourced, not run:
#
#   source hack/stages.sh
#   stage NAME CMD...       run CMD now; its output goes to the terminal
#   stage_bg NAME CMD...    start CMD in the background; its output goes to
#                           .test-logs/NAME.log, printed whole when it ends
#   stage_wait NAME...      wait for background stages (all when none named)
#   stages_table            the table: each stage's start (minutes into the
#                           run), wall time, how busy the machine's CPUs were
#                           meanwhile, and its result; then the total
#
# Records go to $STAGES_FILE (one line a stage), so a caller that runs more
# stages around `make test` (.ci/run) prints one table for the whole run:
# it exports STAGES_FILE and STAGES_OWNER=1, and `make test` then leaves the
# table to it. A stage that fails does not stop the others; stages_table
# returns non-zero when any failed. CPU busy is the machine's (/proc/stat),
# not the stage's own: a stage that waits on API servers shows low, a build
# shows near 100%, and overlapping stages show the same figure.

# Each stage's output is kept in .test-logs/NAME.log (the repository's
# root; a new run starts it afresh), for a look after the run.
if [[ -z ${STAGES_FILE:-} ]]; then
  STAGES_DIR=${STAGES_DIR:-$PWD/.test-logs}
  rm -rf "$STAGES_DIR"
  mkdir -p "$STAGES_DIR"
  STAGES_FILE=$STAGES_DIR/stages.tsv
fi
export STAGES_FILE STAGES_DIR
[[ -f $STAGES_FILE ]] || : >"$STAGES_FILE"
# When the run began: the first stages.sh of a run sets it, nested ones keep it.
export STAGES_BEGAN=${STAGES_BEGAN:-$(date +%s)}
declare -gA _stage_pid=() _stage_start=() _stage_cpu=()

# _cpu prints "busy total" jiffies of all CPUs since boot.
_cpu() {
  local _ user nice system idle iowait irq softirq steal
  read -r _ user nice system idle iowait irq softirq steal _ </proc/stat
  echo "$((user + nice + system + irq + softirq + steal)) $((user + nice + system + idle + iowait + irq + softirq + steal))"
}

# _record NAME START CPU_AT_START STATUS [END BUSY TOTAL] appends the
# stage's line; without END, it ends now.
_record() {
  local name=$1 start=$2 cpu0=$3 status=$4 end=${5:-} busy0 total0 busy1=${6:-} total1=${7:-} pct
  if [[ -z $end ]]; then
    end=$(date +%s)
    read -r busy1 total1 <<<"$(_cpu)"
  fi
  read -r busy0 total0 <<<"$cpu0"
  pct=0
  ((total1 > total0)) && pct=$((100 * (busy1 - busy0) / (total1 - total0)))
  printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$((start - STAGES_BEGAN))" "$((end - start))" "$pct" "$status" >>"$STAGES_FILE"
}

stage() {
  local name=$1 start cpu0 status=0
  shift
  start=$(date +%s) cpu0=$(_cpu)
  echo "=== stage $name: $*"
  "$@" 2>&1 | tee "$STAGES_DIR/$name.log"
  status=${PIPESTATUS[0]}
  _record "$name" "$start" "$cpu0" "$status"
  echo "=== stage $name: $(_verdict "$status") in $(_minutes $(($(date +%s) - start)))"
  return "$status"
}

stage_bg() {
  local name=$1
  shift
  _stage_start[$name]=$(date +%s)
  _stage_cpu[$name]=$(_cpu)
  echo "=== stage $name (in the background, output in $STAGES_DIR/$name.log): $*"
  # Its end is noted when it ends, not when it is waited for.
  ( "$@"; status=$?; echo "$(date +%s) $(_cpu)" >"$STAGES_DIR/$name.end"; exit "$status" ) >"$STAGES_DIR/$name.log" 2>&1 &
  _stage_pid[$name]=$!
}

stage_wait() {
  local names=("$@") name status failed=0
  ((${#names[@]})) || names=("${!_stage_pid[@]}")
  for name in "${names[@]}"; do
    [[ -n ${_stage_pid[$name]:-} ]] || continue
    status=0
    wait "${_stage_pid[$name]}" || status=$?
    local ended=()
    [[ -f $STAGES_DIR/$name.end ]] && read -r -a ended <"$STAGES_DIR/$name.end"
    _record "$name" "${_stage_start[$name]}" "${_stage_cpu[$name]}" "$status" "${ended[@]}"
    echo "=== stage $name (background) output:"
    cat "$STAGES_DIR/$name.log"
    echo "=== stage $name: $(_verdict "$status") in $(_minutes $((${ended[0]:-$(date +%s)} - _stage_start[$name])))"
    unset "_stage_pid[$name]"
    ((status == 0)) || failed=1
  done
  return "$failed"
}

# stages_stop ends background stages still running (on Ctrl-C or an early
# exit): each is sent SIGINT, which go test and the fleet scripts clean up on.
stages_stop() {
  local name pid
  for name in "${!_stage_pid[@]}"; do
    pid=${_stage_pid[$name]}
    kill -INT "$pid" 2>/dev/null || true
  done
  for name in "${!_stage_pid[@]}"; do
    wait "${_stage_pid[$name]}" 2>/dev/null || true
  done
}

_verdict() { if (($1 == 0)); then echo passed; else echo "FAILED (exit $1)"; fi; }
_minutes() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }

stages_table() {
  local name start wall pct status failed=0 total
  total=$(($(date +%s) - STAGES_BEGAN))
  _failures
  echo
  echo "Timing (wall clock; CPU busy is the whole machine's while the stage ran)"
  printf '%-16s %8s %8s %9s  %s\n' stage start wall "CPU busy" result
  while IFS=$'\t' read -r name start wall pct status; do
    printf '%-16s %8s %8s %8s%%  %s\n' "$name" "$(_minutes "$start")" "$(_minutes "$wall")" "$pct" "$(_verdict "$status")"
    ((status == 0)) || failed=1
  done <"$STAGES_FILE"
  printf '%-16s %8s %8s\n' total "" "$(_minutes "$total")"
  echo
  echo "What ran"
  while IFS=$'\t' read -r name _; do
    _counts "$name"
  done <"$STAGES_FILE"
  return "$failed"
}

# _failures prints, for each stage that failed, the lines of its log that
# say why (Ginkgo's failures, go test's, the checker's violations and
# errors, panics) and its last lines: CI keeps the start and the end of a
# run's output, and a failure far up a long log would be lost in between.
_failures() {
  local name status log
  while IFS=$'\t' read -r name _ _ _ status; do
    ((status == 0)) && continue
    log=$STAGES_DIR/$name.log
    [[ -f $log ]] || continue
    echo
    echo "=== stage $name failed: what its log ($log) says of it"
    grep -E -A4 '\[FAILED\]|\[PANICKED\]|\[TIMEDOUT\]|^--- FAIL|^FAIL\s|^panic:|^VIOLATION|[1-9][0-9]* violations?|^chaos: .*(error|failed|did not)' "$log" |
      tail -n 40 | cut -c1-400
    echo "--- its last lines:"
    tail -n 15 "$log" | cut -c1-400
  done <"$STAGES_FILE"
}

# _counts NAME prints what the stage's log says ran: Ginkgo's closing
# lines (specs run, passed, failed, skipped), the Karmada suite's summary
# per run, go test's packages, the checker's verdicts.
_counts() {
  local name=$1 log=$STAGES_DIR/$1.log ok failed
  [[ -f $log ]] || return 0
  grep -E '^Ran [0-9]+ of [0-9]+ Specs|^(SUCCESS|FAIL)! .*Passed|suite "[^"]*": [0-9]+ passed|^seed [0-9]+, [0-9]+ steps in ' "$log" |
    sed -E -e 's/^\[([a-z-]+)\] .*(suite "[^"]*": )/\1: \2/' \
      -e 's/^(seed [0-9]+, [0-9]+ steps in [^:]+):.* ([0-9]+ violations).*$/\1: \2/' | sed "s/^/  $name: /"
  ok=$(grep -cE '^ok\s' "$log")
  failed=$(grep -cE '^(FAIL|---\sFAIL)\s' "$log")
  ((ok + failed > 0)) && echo "  $name: go test: $ok packages passed, $failed failed"
  return 0
}
