#!/usr/bin/env bash
# Builds every harness executable (the list: scripts/programs.sh) as a static
# binary into OUTDIR (default ./bin). Other tooling (install.sh, the plugin's
# hooks.json, tests) relies on these names.
#
# One `go build` for them all: the go command loads the packages once and
# links the executables in parallel (a dozen separate builds cost about
# twice the CPU). It builds into a fresh directory inside OUTDIR, where each
# takes its directory's name, then renames each to its own name, so nothing
# else in OUTDIR is touched.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/programs.sh
out="${1:-bin}"
mkdir -p "$out"
version="$(git describe --always --dirty 2>/dev/null || echo dev)"
export CGO_ENABLED=0
use_go_collector
stage=$(mktemp -d "$out/.build.XXXXXX")
trap 'rm -rf "$stage"' EXIT
pkgs=()
for p in $programs; do
  pkgs+=("./hooks/${p#harness-}")
done
# The version stamp is for `harness version`; the hooks do not link
# internal/cli, so it changes nothing in them.
go build -trimpath -ldflags "-s -w -X github.com/harness-agent/harness/internal/cli.Version=$version" -o "$stage/" "${pkgs[@]}"
# Built into a directory, Go adds .exe on Windows; the names stay as they
# were when each was built to its own file name.
exe=$(go env GOEXE)
for p in $programs; do
  mv -f "$stage/${p#harness-}$exe" "$out/$p"
done
echo "built into $out: $programs"
