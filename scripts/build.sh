#!/usr/bin/env bash
# Builds every harness executable (the list: scripts/programs.sh) as a static
# binary into OUTDIR (default ./bin). Other tooling (install.sh, the plugin's
# hooks.json, tests) relies on these names.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/programs.sh
out="${1:-bin}"
mkdir -p "$out"
version="$(git describe --always --dirty 2>/dev/null || echo dev)"
export CGO_ENABLED=0
for p in $programs; do
  dir=${p#harness-}
  flags="-s -w"
  [ "$p" != harness ] || flags="$flags -X github.com/harness-agent/harness/internal/cli.Version=$version"
  go build -trimpath -ldflags "$flags" -o "$out/$p" "./hooks/$dir"
done
echo "built into $out: $programs"
