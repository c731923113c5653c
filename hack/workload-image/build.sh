#!/usr/bin/env bash
# Builds the workload images of kind fleets, FROM scratch around one static
# Go server (main.go): federator/web:1.25, 1.26 and 1.28, the versions of
# the sample's staged rollout, and federator/web:1.27-broken, whose
# readiness always fails. Then checks them with ordinary (unprivileged)
# containers: each serves /, and all but 1.27-broken are ready.
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
for tag in "${TAGS[@]}"; do
	if [[ $tag == *-broken ]]; then check "federator/web:$tag" "$tag" 503; else check "federator/web:$tag" "$tag" 200; fi
done
docker image ls --format '{{.Repository}}:{{.Tag}} {{.Size}}' federator/web
