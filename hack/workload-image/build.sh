#!/usr/bin/env bash
# Builds the workload images of kind fleets, FROM scratch around one static
# Go server (main.go): federator/web:1.25, and federator/web:1.27-broken,
# whose readiness always fails. Then checks them with ordinary
# (unprivileged) containers: both serve /, 1.25 is ready, 1.27-broken is
# not. `federator up --provider kind` loads them into every member when
# Docker has them. Leaves nothing but the two images behind.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
GOOD=federator/web:1.25
BROKEN=federator/web:1.27-broken

ctx=$(mktemp -d /tmp/workload-image.XXXXXX)
name=federator-web-check-$$
cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	docker rm -f "$name-good" "$name-broken" >/dev/null 2>&1 || true
	rm -rf "$ctx"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

(cd "$ROOT" && CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o "$ctx/web" ./hack/workload-image)
docker build -q -f "$ROOT/hack/workload-image/Dockerfile" --build-arg VERSION=1.25 -t "$GOOD" "$ctx" >/dev/null
docker build -q -f "$ROOT/hack/workload-image/Dockerfile" --build-arg VERSION=1.27 --build-arg BROKEN=true -t "$BROKEN" "$ctx" >/dev/null

# check IMAGE SUFFIX WANT_READY: / answers with the version, /readyz with WANT_READY.
check() {
	local ip code body i version
	docker run -d --name "$name-$2" "$1" >/dev/null
	ip=$(docker inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' "$name-$2")
	for i in $(seq 50); do
		body=$(curl -fsS "http://$ip:8080/" 2>/dev/null) && break
		sleep 0.1
	done
	version=${1#*:}
	[[ $body == "federator web ${version%-broken} on "* ]] ||
		{ echo "$1: GET / answered \"$body\"" >&2; return 1; }
	code=$(curl -s -o /dev/null -w '%{http_code}' "http://$ip:8080/readyz")
	[[ $code == "$3" ]] || { echo "$1: GET /readyz answered $code, want $3" >&2; return 1; }
	echo "$1: serves (\"$body\"), /readyz $code"
	docker rm -f "$name-$2" >/dev/null
}
check "$GOOD" good 200
check "$BROKEN" broken 503
docker image ls --format '{{.Repository}}:{{.Tag}} {{.Size}}' federator/web
