#!/usr/bin/env bash
# Builds every harness executable as a static binary into OUTDIR (default ./bin).
# Other tooling (install.sh, the plugin's hooks.json, tests) relies on these names.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-bin}"
mkdir -p "$out"
version="$(git describe --always --dirty 2>/dev/null || echo dev)"
export CGO_ENABLED=0
go build -trimpath -ldflags "-s -w -X github.com/harness-agent/harness/internal/cli.Version=$version" -o "$out/harness" ./hooks/harness
for hook in session-start pre-tool-use stop subagent-stop teammate-idle session-end user-prompt-submit post-tool-use post-tool-use-failure; do
  go build -trimpath -ldflags "-s -w" -o "$out/harness-$hook" "./hooks/$hook"
done
echo "built into $out: harness harness-session-start harness-pre-tool-use harness-stop harness-subagent-stop harness-teammate-idle harness-session-end harness-user-prompt-submit harness-post-tool-use harness-post-tool-use-failure"
