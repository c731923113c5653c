#!/usr/bin/env bash
# Measures what an idle local fleet costs: start `federator up` with the
# given flags, wait until it is ready, let it settle, then report the total
# RSS and PSS of federator and every process under it, the idle CPU they use
# (cores, over a window), and the startup time. Stops the fleet (SIGTERM) and
# fails unless federator exits 0 with every process it started gone, as
# Ctrl-C on `make up` promises; otherwise figures only.
#
#   hack/fleet-footprint.sh --members 20               # with workloads (default)
#   hack/fleet-footprint.sh --members 20 --workloads=false
#
# SETTLE (seconds before measuring, default 60) and WINDOW (seconds of the
# CPU window, default 60) adjust it; BIN is the directory of the binaries.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
BIN=${BIN:-$root/bin}
SETTLE=${SETTLE:-60}
WINDOW=${WINDOW:-60}
dir=$(mktemp -d)
out="$dir/up.out"

"$BIN/federator" up --dir "$dir/fleet" --bin-dir "$BIN" "$@" >"$out" 2>&1 &
up=$!
cleanup() {
	kill -TERM "$up" 2>/dev/null || true
	wait "$up" 2>/dev/null || true
	rm -rf "$dir"
}
trap cleanup EXIT INT TERM

began=$(date +%s.%N)
until grep -q '^federator: ready' "$out"; do
	if ! kill -0 "$up" 2>/dev/null; then
		cat "$out" >&2
		exit 1
	fi
	sleep 0.2
done
ready=$(date +%s.%N)

# descendants prints up and every process under it, from one snapshot of
# the process table (per-thread children files miss a process now and then).
descendants() {
	ps -e -o pid=,ppid= | awk -v root="$up" '
		{ parent[$1] = $2 }
		END {
			for (p in parent) {
				for (q = p; q != "" && q != 0 && q != 1; q = parent[q]) {
					if (q == root) { print p; break }
				}
			}
		}'
}
# ticks sums user+system clock ticks of the given processes.
ticks() {
	local total=0 pid
	for pid in "$@"; do
		if [[ -r /proc/$pid/stat ]]; then
			total=$((total + $(awk '{print $14 + $15}' /proc/"$pid"/stat)))
		fi
	done
	echo "$total"
}

sleep "$SETTLE"
mapfile -t pids < <(descendants)
before=$(ticks "${pids[@]}")
sleep "$WINDOW"
after=$(ticks "${pids[@]}")
hz=$(getconf CLK_TCK)

declare -A rss_by_name count_by_name
total_kb=0
pss_kb=0
for pid in "${pids[@]}"; do
	[[ -r /proc/$pid/status ]] || continue
	name=$(cat /proc/"$pid"/comm)
	kb=$(awk '/^VmRSS:/ {print $2}' /proc/"$pid"/status)
	rss_by_name[$name]=$((${rss_by_name[$name]:-0} + kb))
	count_by_name[$name]=$((${count_by_name[$name]:-0} + 1))
	total_kb=$((total_kb + kb))
	pss_kb=$((pss_kb + $(awk '/^Pss:/ {print $2}' /proc/"$pid"/smaps_rollup 2>/dev/null || echo 0)))
done

echo "federator up $*"
awk -v b="$began" -v r="$ready" 'BEGIN {printf "startup: %.1f s to ready\n", r - b}'
echo "processes: ${#pids[@]}"
for name in "${!rss_by_name[@]}"; do
	printf '  %-24s x%-3d %6d MiB\n' "$name" "${count_by_name[$name]}" $((rss_by_name[$name] / 1024))
done | sort
printf 'total RSS: %d MiB (summed; pages of a binary shared by its processes count once per process)\n' $((total_kb / 1024))
printf 'total PSS: %d MiB (shared pages divided among the processes sharing them: what the fleet takes)\n' $((pss_kb / 1024))
awk -v t=$((after - before)) -v hz="$hz" -v w="$WINDOW" 'BEGIN {printf "idle CPU: %.2f cores (over %d s)\n", t / hz / w, w}'

# Stop as a user does (Ctrl-C), and check that nothing outlives federator.
declare -A comm_of
for pid in "${pids[@]}"; do
	[[ -r /proc/$pid/comm ]] && comm_of[$pid]=$(cat /proc/"$pid"/comm)
done
stopping=$(date +%s.%N)
kill -TERM "$up"
code=0
wait "$up" || code=$?
stopped=$(date +%s.%N)
trap 'rm -rf "$dir"' EXIT
left=()
for pid in "${!comm_of[@]}"; do
	# A pid reused meanwhile has another name, or is no child of ours.
	if [[ -r /proc/$pid/comm && $(cat /proc/"$pid"/comm 2>/dev/null) == "${comm_of[$pid]}" ]]; then
		left+=("$pid (${comm_of[$pid]})")
	fi
done
awk -v b="$stopping" -v s="$stopped" -v c="$code" -v n="${#comm_of[@]}" \
	'BEGIN {printf "stop: SIGTERM to exit %d in %.1f s; %d processes were running\n", c, s - b, n}'
if ((code != 0 || ${#left[@]} > 0)); then
	echo "federator did not stop cleanly: exit $code; still running: ${left[*]:-none}" >&2
	for p in "${left[@]}"; do kill -KILL "${p%% *}" 2>/dev/null || true; done
	exit 1
fi
