#!/usr/bin/env bash
# timeouts.sh TIMEOUT_SECONDS INTERVAL_SECONDS DIR prepares a build of
# Karmada's e2e suite whose framework polls with the given constants
# (framework.PollTimeout 420s and framework.PollInterval 5s, which no flag
# sets): DIR/karmada is a copy of Karmada's module from the module cache
# (36 MB; symbolic links would not do, go:embed refuses them) whose
# test/e2e/framework/constant.go holds the new values, and DIR/go.mod is this module's go.mod replacing Karmada with it
# (`go test -modfile DIR/go.mod`). Nothing else of the suite changes, and
# the module cache is not touched (go -overlay refuses files under it).
set -euo pipefail
timeout=$1 interval=$2 dir=$3
[[ $timeout =~ ^[0-9]+$ && $interval =~ ^[0-9]+$ ]] || { echo "timeouts.sh: seconds, as integers: got '$timeout' '$interval'" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here" && go list -m -f '{{.Dir}}' github.com/karmada-io/karmada)
rm -rf "$dir" && mkdir -p "$dir"
cp -r "$src" "$dir/karmada"
chmod -R u+w "$dir/karmada"
const=$dir/karmada/test/e2e/framework/constant.go
rm "$const"
sed -e "s/^\tPollInterval = 5 \* time.Second$/\tPollInterval = $interval * time.Second/" \
    -e "s/^\tPollTimeout = 420 \* time.Second$/\tPollTimeout = $timeout * time.Second/" \
    "$src/test/e2e/framework/constant.go" >"$const"
if ! grep -q "PollInterval = $interval \* time.Second" "$const" || ! grep -q "PollTimeout = $timeout \* time.Second" "$const"; then
  echo "timeouts.sh: $src/test/e2e/framework/constant.go no longer holds PollInterval = 5 * time.Second and PollTimeout = 420 * time.Second; update this script" >&2
  exit 1
fi
cp "$here/go.mod" "$dir/go.mod"
cp "$here/go.sum" "$dir/go.sum"
echo "replace github.com/karmada-io/karmada => $dir/karmada" >>"$dir/go.mod"
