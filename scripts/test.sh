#!/usr/bin/env bash
# The whole test suite: formatting and vet checks, unit tests, process-level
# scenarios, fuzz seed corpora, and the end-to-end scenarios against the real
# Claude Code CLI. The tools those need (a pinned @anthropic-ai/claude-code,
# node 22 for `npx skills`) are installed into .ci/ on first use; without
# network access they are skipped with a message, unless HARNESS_E2E_REQUIRED=1
# (CI) makes their absence a failure.
#
# scripts/test.sh -short is the quick lane for the edit-test loop: the same
# gofmt and vet, and every test but the slow ones (the real Claude Code
# scenarios, install.sh and release.sh runs, builds of the executables, the
# browser); it installs nothing and skips the Windows build. CI never runs
# it. Other arguments go to go test (-run X, -v, …).
set -euo pipefail
cd "$(dirname "$0")/.."

short=0
for arg in "$@"; do
  case $arg in -short | -short=true | --short | --short=true) short=1 ;; esac
done
if [ "$short" = 1 ] && [ "${HARNESS_E2E_REQUIRED:-}" = 1 ]; then
  echo "test: -short skips the real Claude Code scenarios, which HARNESS_E2E_REQUIRED=1 requires" >&2
  exit 2
fi

for tool in .ci/install-claude.sh .ci/install-node22.sh; do
  [ "$short" = 0 ] || break
  if [ -x "$tool" ]; then
    if ! "$tool" >/dev/null; then
      [ "${HARNESS_E2E_REQUIRED:-}" = 1 ] && { echo "test: $tool failed" >&2; exit 1; }
      echo "test: WARN $tool failed; the tests that need it will be skipped" >&2
    fi
  fi
done

# The report's browser test needs headless Chromium; CI installs Debian's.
if [ "${HARNESS_E2E_REQUIRED:-}" = 1 ] && ! command -v chromium >/dev/null && ! command -v chromium-browser >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null ||
      { echo "test: installing chromium failed" >&2; exit 1; }
  else
    echo "test: chromium is missing (install it: apt-get install -y chromium)" >&2
    exit 1
  fi
fi

# The sandbox scenarios (internal/e2e/sandbox_test.go) run Claude Code's
# own OS sandbox, which on Linux needs bubblewrap and socat; CI installs
# Debian's.
if [ "${HARNESS_E2E_REQUIRED:-}" = 1 ] && [ "$(uname -s)" = Linux ] && { ! command -v bwrap >/dev/null || ! command -v socat >/dev/null; }; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap socat >/dev/null ||
      { echo "test: installing bubblewrap and socat failed" >&2; exit 1; }
  else
    echo "test: bubblewrap or socat is missing (install them: apt-get install -y bubblewrap socat)" >&2
    exit 1
  fi
fi

if git rev-parse --git-dir >/dev/null 2>&1; then
  unformatted=$(git ls-files -z '*.go' | xargs -0 gofmt -l)
else
  unformatted=$(find . -name '*.go' -not -path './.ci/*' -exec gofmt -l {} +)
fi
if [ -n "$unformatted" ]; then
  echo "test: gofmt needed on:" >&2
  echo "$unformatted" >&2
  exit 1
fi
go vet ./...
# Windows and macOS: the executables build and vet clean, the tests
# included (they run on Linux here; internal/quiet's early end has code of
# its own for macOS).
if [ "$short" = 0 ]; then
  GOOS=windows GOARCH=amd64 go build ./...
  GOOS=windows GOARCH=amd64 go vet ./...
  GOOS=darwin GOARCH=arm64 go build ./...
  GOOS=darwin GOARCH=arm64 go vet ./...
fi
# A package's whole run is bounded at 45 min: internal/programs takes 15
# on a machine where a process start costs 4 ms (its chaos scenario alone
# up to 7 under the suite's load), 4 on a quicker one.
#
# The real Claude Code scenarios (internal/e2e) run after the rest, on
# their own: beside internal/programs on a 2-core machine a scenario that
# takes 8 s alone took over 60. Both runs happen whatever the first one
# says, so one CI run shows every failure.
status=0
go test -count=1 -timeout 45m "$@" $(go list ./... | grep -v '/internal/e2e$') || status=$?
go test -count=1 -timeout 45m "$@" ./internal/e2e || status=$?
exit "$status"
