#!/usr/bin/env bash
# Builds the workload images of kind fleets, FROM scratch around one static
# Go server (main.go): federator/web:1.25, 1.26 and 1.28, the versions of
# the sample's staged rollout, and federator/web:1.27-broken, whose
# readiness always fails and which fails every second request to / (500).
# Then checks them with ordinary (unprivileged) containers: each serves /,
# all but 1.27-broken are ready, and each counts its requests to / by code
# on /metrics: after five, 1.27-broken's 2nd and 4th failed, none of the
# others'.
# `federator up --provider kind` loads them into every member when Docker
# has them. Leaves nothing but the images behind (one layer, shared).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
TAGS=(1.25 1.26 1.27-broken 1.28) # pkg/kindfleet's WorkloadImages

ctx=$(mktemp -d /tmp/workload-image.XXXXXX)
name=federator-web-check-$$
cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	docker ps -aq --filter "name=^$name-" | xargs -r docker rm -f >/dev/null 2>&1 || true
	rm -rf "$ctx"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

(cd "$ROOT" && CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o "$ctx/web" ./hack/workload-image)
for tag in "${TAGS[@]}"; do
	broken=false
	[[ $tag == *-broken ]] && broken=true
	docker build -q -f "$ROOT/hack/workload-image/Dockerfile" --build-arg VERSION="${tag%-broken}" --build-arg BROKEN=$broken \
		-t "federator/web:$tag" "$ctx" >/dev/null
done

# check IMAGE SUFFIX WANT_READY WANT_FAILED: / answers with the version,
# /readyz with WANT_READY, and /metrics counts WANT_FAILED 500s of five
# requests to / (failures are by count, not chance: main.go's failures).
check() {
	local ip code body i version metrics line
	docker run -d --name "$name-$2" "$1" >/dev/null
	ip=$(docker inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' "$name-$2")
	for i in $(seq 50); do
		body=$(curl -fsS "http://$ip:8080/" 2>/dev/null) && break
		sleep 0.1
	done
	version=${1#*:}
	version=${version%-broken}
	[[ $body == "federator web $version on "* ]] ||
		{ echo "$1: GET / answered \"$body\"" >&2; return 1; }
	code=$(curl -s -o /dev/null -w '%{http_code}' "http://$ip:8080/readyz")
	[[ $code == "$3" ]] || { echo "$1: GET /readyz answered $code, want $3" >&2; return 1; }
	for i in 2 3 4 5; do curl -s -o /dev/null "http://$ip:8080/"; done
	metrics=$(curl -fsS "http://$ip:8080/metrics") || { echo "$1: GET /metrics failed" >&2; return 1; }
	for line in "federator_fleet_http_requests_total{code=\"200\",version=\"$version\"} $((5 - $4))" \
		"federator_fleet_http_requests_total{code=\"500\",version=\"$version\"} $4" \
		"federator_fleet_http_request_duration_seconds_count{version=\"$version\"} 5"; do
		grep -qxF "$line" <<<"$metrics" ||
			{ printf '%s: GET /metrics lacks %s; it answered:\n%s\n' "$1" "$line" "$metrics" >&2; return 1; }
	done
	echo "$1: serves (\"$body\"), /readyz $code, /metrics: $4 of 5 requests to / failed"
	docker rm -f "$name-$2" >/dev/null
}
for tag in "${TAGS[@]}"; do
	if [[ $tag == *-broken ]]; then check "federator/web:$tag" "$tag" 503 2; else check "federator/web:$tag" "$tag" 200 0; fi
done
docker image ls --format '{{.Repository}}:{{.Tag}} {{.Size}}' federator/web
