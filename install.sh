#!/usr/bin/env bash
# install.sh: builds the harness and installs it for Claude Code: the
# executables in a bin directory, the /harness skill, and the hooks in a
# settings.json. Run ./install.sh --help for the options.
#
# It checks Go, builds into a temporary directory, and hands over to the
# freshly built `harness install` (internal/install), the same code a
# release archive or the npm package runs: nothing is half-installed (every
# check passes before the first copy, and a failure after that puts back
# what the run changed).
if [ -z "${BASH_VERSION:-}" ]; then
	echo "install.sh: ERROR [USAGE] run it with bash: ./install.sh" >&2
	exit 2
fi
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=scripts/programs.sh
. "$repo/scripts/programs.sh"   # sets $programs, the executables

usage() {
	cat <<EOF
usage: ./install.sh [--bin-dir DIR] [--project DIR] [--sandbox] [--dry-run] [--uninstall]

Builds the harness (scripts/build.sh) and installs it for Claude Code:
  - the executables in the bin directory (default ~/.claude/harness/bin),
  - the /harness skill in ~/.claude/skills/harness (one already there that
    install.sh did not put there, from npx skills or your own, stays),
  - the hooks in ~/.claude/settings.json, with absolute paths; your other
    settings and hooks stay as they are, a backup is written first
    (settings.json.harness.bak), and running it again changes nothing.

options:
  --bin-dir DIR   install the executables in DIR (moving them from an earlier
                  install updates the hook entries instead of adding more,
                  and empties the old directory once nothing uses it)
  --project DIR   project scope: hooks in DIR/.claude/settings.json and the
                  skill in DIR/.claude/skills/harness (executables still in
                  the bin directory)
  --sandbox       also turn on Claude Code's OS sandbox for the agent's
                  commands, with the harness's record, executables,
                  settings and skill read-only inside it (user scope; with
                  --uninstall, remove only that; see docs/install.md)
  --dry-run       print what would be done, change nothing
  --uninstall     remove what install added: our hook entries, the skill (if
                  install.sh put it there) and, once no settings file uses
                  them any more, the executables in every directory the
                  removed hooks ran from
  -h, --help      this text

Needs Go $(go_wanted) or newer (and git). Exit codes: 0 done, 2 error.
EOF
}

say() { printf 'install.sh: %s\n' "$*"; }

# fail CATEGORY MESSAGE [HINT]: the harness's error format, then exit 2.
fail() {
	printf 'install.sh: ERROR [%s] %s\n' "$1" "$2" >&2
	[ -z "${3:-}" ] || printf 'hint: %s\n' "$3" >&2
	reported=1
	exit 2
}

go_wanted() { awk '$1 == "go" { print $2; exit }' "$repo/go.mod"; }

# version_ge A B: whether dotted version A >= B.
version_ge() {
	local -a a b
	local i x y
	IFS=. read -r -a a <<<"$1"
	IFS=. read -r -a b <<<"$2"
	for i in 0 1 2; do
		x=${a[i]:-0} y=${b[i]:-0}
		((10#$x > 10#$y)) && return 0
		((10#$x < 10#$y)) && return 1
	done
	return 0
}

# need_go refuses to go on without a Go new enough for go.mod. GOTOOLCHAIN
# is pinned to local so the check sees the installed Go, not one it would
# try to download.
need_go() {
	local want have
	want=$(go_wanted)
	[ -n "$want" ] || fail CONFIG "$repo/go.mod has no go line"
	command -v go >/dev/null 2>&1 ||
		fail ENV_SETUP "Go not found: install Go $want or newer (https://go.dev/dl/), then run ./install.sh again"
	have=$(cd "$repo" && GOTOOLCHAIN=local go env GOVERSION 2>/dev/null) || have=""
	have=$(printf '%s' "$have" | sed -n 's/^go\([0-9][0-9.]*\).*/\1/p')
	[ -n "$have" ] ||
		fail ENV_SETUP "cannot tell the version of $(command -v go): install Go $want or newer (https://go.dev/dl/), then run ./install.sh again"
	version_ge "$have" "$want" ||
		fail ENV_SETUP "Go $have is too old: install Go $want or newer (https://go.dev/dl/), then run ./install.sh again"
}

# build puts fresh executables in $tmp/bin.
build() {
	say "building the harness (scripts/build.sh)"
	if ! "$repo/scripts/build.sh" "$tmp/bin" >"$tmp/build.log" 2>&1; then
		cat "$tmp/build.log" >&2
		fail ENV_SETUP "the build failed (output above); nothing was installed"
	fi
	local p
	for p in $programs; do
		[ -x "$tmp/bin/$p" ] || fail ENV_SETUP "the build did not produce $p; nothing was installed"
	done
}

# use_harness: $harness becomes a harness that knows `install`: a copy of
# the installed one, else of the one on PATH, else a fresh build. It is a
# copy because the installed one may be removed while it is still needed.
use_harness() {
	local h
	for h in "${bin_dir:-$HOME/.claude/harness/bin}/harness" "$(command -v harness 2>/dev/null || true)"; do
		if [ -n "$h" ] && [ -x "$h" ] && "$h" install --help </dev/null >/dev/null 2>&1; then
			cp "$h" "$tmp/harness"
			harness=$tmp/harness
			return 0
		fi
	done
	need_go
	build
	harness=$tmp/bin/harness
}

bin_dir="" project="" dry_run=0 uninstall=0 sandbox=0
while [ $# -gt 0 ]; do
	case "$1" in
	--bin-dir | --project)
		if [ $# -lt 2 ] || [ -z "$2" ]; then fail USAGE "$1 needs a directory" "./install.sh --help"; fi
		if [ "$1" = --bin-dir ]; then bin_dir=$2; else project=$2; fi
		shift 2
		;;
	--bin-dir=*) bin_dir=${1#*=} && shift ;;
	--project=*) project=${1#*=} && shift ;;
	--dry-run) dry_run=1 && shift ;;
	--sandbox) sandbox=1 && shift ;;
	--uninstall) uninstall=1 && shift ;;
	-h | --help) usage && exit 0 ;;
	*) fail USAGE "unknown argument $1" "./install.sh --help" ;;
	esac
done

[ -n "${HOME:-}" ] || fail ENV_SETUP "HOME is not set" "run it as the user who runs Claude Code"
# The rest is `harness install`, the one implementation of an install
# (internal/install): the same checks, journal and messages, whichever way
# the harness arrived.
flags=(--as install.sh)
[ -z "$bin_dir" ] || flags+=(--bin-dir "$bin_dir")
[ -z "$project" ] || flags+=(--project "$project")
[ "$dry_run" = 0 ] || flags+=(--dry-run)
[ "$sandbox" = 0 ] || flags+=(--sandbox)
[ "$uninstall" = 1 ] || need_go
tmp=$(mktemp -d "${TMPDIR:-/tmp}/harness-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
if [ "$uninstall" = 1 ]; then
	use_harness
	"$harness" install --uninstall "${flags[@]}" || exit 2
	exit 0
fi
build
"$tmp/bin/harness" install --from "$tmp/bin" --skill "$repo/skill/harness" "${flags[@]}" || exit 2
