#!/usr/bin/env bash
# Installs the pinned Claude Code CLI for the end-to-end tests
# (internal/e2e) into .ci/claude-code/ (gitignored) and prints the path of
# its `claude` executable on stdout; everything else goes to stderr.
#
# Why a pinned, project-local copy: the e2e tests assert the CLI's real hook
# contract, which changes between releases, so CI must run the exact version
# the tests were written against, and no machine may be assumed to have it.
# Idempotent: a present copy of the right version is reused without touching
# the network.
set -euo pipefail

# Keep in sync with ClaudeCodeVersion in internal/e2e/claude.go.
VERSION=2.1.332

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dir="$root/.ci/claude-code"
bin="$dir/node_modules/.bin/claude"

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# ok BIN: BIN runs and reports VERSION. HOME is a scratch dir so a user's
# config can't interfere; IS_SANDBOX=1 because CI runs as root.
ok() {
	local v
	[ -x "$1" ] || return 1
	v=$(HOME="$scratch" IS_SANDBOX=1 "$1" --version 2>/dev/null) || return 1
	[ "${v%% *}" = "$VERSION" ]
}

if ! ok "$bin"; then
	command -v npm >/dev/null || { echo "install-claude.sh: npm not found (apt-get install -y nodejs npm)" >&2; exit 1; }
	mkdir -p "$dir"
	cat >"$dir/package.json" <<JSON
{
  "private": true,
  "description": "Claude Code CLI for the harness e2e tests; installed by .ci/install-claude.sh",
  "dependencies": { "@anthropic-ai/claude-code": "$VERSION" }
}
JSON
	# The package declares node >=22 but only its postinstall runs under
	# node, and that works on older versions: the engine warning is noise.
	npm install --prefix "$dir" --no-audit --no-fund --loglevel=error >&2
	if ! ok "$bin"; then
		# npm may skip install scripts (ignore-scripts, allow-scripts
		# policies), leaving the placeholder stub instead of the native
		# binary: run the package's own postinstall by hand.
		(cd "$dir/node_modules/@anthropic-ai/claude-code" && node install.cjs) >&2
	fi
	ok "$bin" || { echo "install-claude.sh: $bin does not run as Claude Code $VERSION" >&2; exit 1; }
fi

echo "$bin"
