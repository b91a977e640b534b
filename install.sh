#!/usr/bin/env bash
# install.sh: builds the harness and installs it for Claude Code: the
# executables in a bin directory, the /harness skill, and the hooks in a
# settings.json (edited by `harness hooks`, which keeps everything else in the
# file as it was). Run ./install.sh --help for the options.
#
# Nothing is half-installed: Go is checked before anything happens, the build
# goes to a temporary directory, and the settings file is checked before a
# single file is copied.
if [ -z "${BASH_VERSION:-}" ]; then
	echo "install.sh: ERROR [USAGE] run it with bash: ./install.sh" >&2
	exit 2
fi
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
programs="harness harness-session-start harness-pre-tool-use harness-stop harness-subagent-stop harness-teammate-idle harness-session-end"
marker=.installed-by-harness # in the installed skill: proves the copy is ours
registry=.harness-installs   # in the bin directory: settings files using it

usage() {
	cat <<EOF
usage: ./install.sh [--bin-dir DIR] [--project DIR] [--dry-run] [--uninstall]

Builds the harness (scripts/build.sh) and installs it for Claude Code:
  - the executables in the bin directory (default ~/.claude/harness/bin),
  - the /harness skill in ~/.claude/skills/harness,
  - the hooks in ~/.claude/settings.json, with absolute paths; your other
    settings and hooks stay as they are, a backup is written first
    (settings.json.harness.bak), and running it again changes nothing.

options:
  --bin-dir DIR   install the executables in DIR (moving them from an earlier
                  install updates the hook entries instead of adding more)
  --project DIR   project scope: hooks in DIR/.claude/settings.json and the
                  skill in DIR/.claude/skills/harness (executables still in
                  the bin directory)
  --dry-run       print what would be done, change nothing
  --uninstall     remove what install added: our hook entries, the skill (if
                  install.sh put it there) and, once no settings file uses
                  them any more, the executables
  -h, --help      this text

Needs Go $(go_wanted) or newer (and git). Exit codes: 0 done, 2 error.
EOF
}

say() { printf 'install.sh: %s\n' "$*"; }

# fail CATEGORY MESSAGE [HINT]: the harness's error format, then exit 2.
fail() {
	printf 'install.sh: ERROR [%s] %s\n' "$1" "$2" >&2
	[ -z "${3:-}" ] || printf 'hint: %s\n' "$3" >&2
	exit 2
}

# act WHAT CMD…: does CMD, or in a dry run says what it would do.
act() {
	local what=$1
	shift
	if [ "$dry_run" = 1 ]; then
		printf '  would %s\n' "$what"
	else
		"$@"
	fi
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

# skill_is_harness DIR: whether DIR holds a skill named harness.
skill_is_harness() {
	[ -f "$1/SKILL.md" ] && head -n 10 "$1/SKILL.md" | grep -qE '^name:[[:space:]]*"?harness"?[[:space:]]*$'
}

# copy_file SRC DST: replaces DST atomically (a running hook keeps its file).
copy_file() {
	cp "$1" "$2.tmp.$$" && chmod 0755 "$2.tmp.$$" && mv -f "$2.tmp.$$" "$2"
}

# copy_skill: replaces the skill directory with the repository's copy.
copy_skill() {
	local new="$skill_dir.tmp.$$"
	rm -rf "$new"
	mkdir -p "$(dirname "$skill_dir")"
	cp -R "$repo/skill/harness" "$new"
	printf 'This copy of the harness skill was installed by %s/install.sh;\n./install.sh --uninstall removes it.\n' "$repo" >"$new/$marker"
	rm -rf "$skill_dir"
	mv "$new" "$skill_dir"
}

# register_install / unregister_install keep the bin directory's list of
# settings files whose hooks run from it, so that uninstalling one scope
# leaves the executables another one still uses.
register_install() {
	local list="$bin_dir/$registry"
	touch "$list"
	grep -qxF "$settings" "$list" || printf '%s\n' "$settings" >>"$list"
}

# remaining_installs prints the other listed settings files that still run
# hooks from the bin directory.
remaining_installs() {
	local list="$bin_dir/$registry" f
	[ -f "$list" ] || return 0
	while IFS= read -r f; do
		[ -n "$f" ] && [ "$f" != "$settings" ] && grep -qF "$bin_dir/harness-" "$f" 2>/dev/null && printf '%s\n' "$f"
	done <"$list"
	return 0
}

bin_dir="" project="" dry_run=0 uninstall=0
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
	--uninstall) uninstall=1 && shift ;;
	-h | --help) usage && exit 0 ;;
	*) fail USAGE "unknown argument $1" "./install.sh --help" ;;
	esac
done

[ -n "${HOME:-}" ] || fail ENV_SETUP "HOME is not set" "run it as the user who runs Claude Code"
bin_dir=${bin_dir:-$HOME/.claude/harness/bin}
case $bin_dir in /*) ;; *) bin_dir=$PWD/$bin_dir ;; esac
if [ -n "$project" ]; then
	[ -d "$project" ] || fail CONFIG "--project $project: no such directory"
	project=$(cd "$project" && pwd -P)
	settings=$project/.claude/settings.json
	skill_dir=$project/.claude/skills/harness
	scope="--project $project"
else
	settings=$HOME/.claude/settings.json
	skill_dir=$HOME/.claude/skills/harness
	scope=""
fi

[ "$uninstall" = 1 ] || need_go
tmp=$(mktemp -d "${TMPDIR:-/tmp}/harness-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
[ "$dry_run" = 0 ] || say "dry run: nothing will be changed"

if [ "$uninstall" = 1 ]; then
	# The installed harness can edit the settings; without it, a fresh build.
	harness=$bin_dir/harness
	if ! "$harness" hooks --help >/dev/null 2>&1; then
		need_go
		build
		harness=$tmp/bin/harness
	fi
	flags=(--settings "$settings")
	[ "$dry_run" = 0 ] || flags+=(--dry-run)
	"$harness" hooks uninstall "${flags[@]}" || fail ENV_SETUP "could not remove the hooks from $settings (above); nothing else was removed"

	if [ -f "$skill_dir/$marker" ]; then
		say "removing the skill $skill_dir"
		act "remove $skill_dir" rm -rf "$skill_dir"
		[ "$dry_run" = 1 ] || rmdir "$(dirname "$skill_dir")" 2>/dev/null || true
	elif [ -e "$skill_dir" ]; then
		say "leaving $skill_dir: install.sh did not put it there (npx skills remove harness, or remove it by hand)"
	fi

	others=$(remaining_installs)
	if [ -n "$others" ]; then
		say "keeping the executables in $bin_dir: the hooks in $(printf '%s' "$others" | paste -sd, - | sed 's/,/, /g') still use them"
		if [ "$dry_run" = 0 ]; then
			printf '%s\n' "$others" >"$bin_dir/$registry.tmp.$$" && mv -f "$bin_dir/$registry.tmp.$$" "$bin_dir/$registry"
		fi
	else
		say "removing the executables from $bin_dir"
		for p in $programs $registry; do
			[ ! -e "$bin_dir/$p" ] || act "remove $bin_dir/$p" rm -f "$bin_dir/$p"
		done
		# The directories go only when empty (and the parent only when it is
		# the default's ~/.claude/harness).
		if [ "$dry_run" = 0 ]; then
			rmdir "$bin_dir" 2>/dev/null || true
			[ "$bin_dir" != "$HOME/.claude/harness/bin" ] || rmdir "$HOME/.claude/harness" 2>/dev/null || true
		fi
	fi
	if [ "$dry_run" = 1 ]; then
		say "dry run: nothing was changed"
	else
		say "uninstalled${scope:+ ($scope)}"
	fi
	exit 0
fi

if [ -e "$skill_dir" ] && ! skill_is_harness "$skill_dir"; then
	fail CONFIG "$skill_dir exists and is not the harness skill; nothing was installed" "move it away, or install at another scope"
fi
build

# Check the settings file before anything is copied: an invalid one stops
# the install here, untouched.
if ! "$tmp/bin/harness" hooks install --dry-run --settings "$settings" --bin-dir "$bin_dir" >"$tmp/plan" 2>&1; then
	cat "$tmp/plan" >&2
	fail CONFIG "$settings cannot be used (above); nothing was installed"
fi

say "installing the executables in $bin_dir"
act "create $bin_dir" mkdir -p "$bin_dir"
for p in $programs; do
	act "install $bin_dir/$p" copy_file "$tmp/bin/$p" "$bin_dir/$p"
done

say "installing the skill in $skill_dir"
act "copy $repo/skill/harness to $skill_dir" copy_skill

if [ "$dry_run" = 1 ]; then
	sed 's/^/  /' "$tmp/plan"
	say "dry run: nothing was changed"
	exit 0
fi
"$bin_dir/harness" hooks install --settings "$settings" --bin-dir "$bin_dir"
register_install

say "installed${scope:+ ($scope)}. In Claude Code, in your project: /harness init, then /harness add \"…\" and /harness run"
case ":$PATH:" in
*":$bin_dir:"*) ;;
*) say "to run harness from your shell too: export PATH=\"$bin_dir:\$PATH\" (the hooks do not need it)" ;;
esac
