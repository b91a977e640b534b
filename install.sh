#!/usr/bin/env bash
# install.sh: builds the harness and installs it for Claude Code: the
# executables in a bin directory, the /harness skill, and the hooks in a
# settings.json (edited by `harness hooks`, which keeps everything else in the
# file as it was). Run ./install.sh --help for the options.
#
# Nothing is half-installed: Go is checked before anything happens, the build
# goes to a temporary directory, the settings file and every directory to
# write in are checked before a single file is copied, and if anything still
# fails after that, what this run changed is put back as it was.
if [ -z "${BASH_VERSION:-}" ]; then
	echo "install.sh: ERROR [USAGE] run it with bash: ./install.sh" >&2
	exit 2
fi
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=scripts/programs.sh
. "$repo/scripts/programs.sh"   # sets $programs, the executables
marker=.installed-by-harness # in the installed skill: proves the copy is ours
registry=.harness-installs   # in the bin directory: settings files using it

usage() {
	cat <<EOF
usage: ./install.sh [--bin-dir DIR] [--project DIR] [--dry-run] [--uninstall]

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

# clean_path PATH prints the absolute PATH without ".", ".." and doubled
# slashes, as Go's filepath.Clean (and so `harness hooks`) writes it.
clean_path() {
	local rest=$1/ part out=""
	while [ -n "$rest" ]; do
		part=${rest%%/*}
		rest=${rest#*/}
		case $part in
		'' | .) ;;
		..) out=${out%/*} ;;
		*) out=$out/$part ;;
		esac
	done
	printf '%s\n' "${out:-/}"
}

# unwritable DIR prints why DIR cannot be created or written in, and fails
# when it can.
unwritable() {
	local d=$1
	while [ ! -e "$d" ] && [ ! -L "$d" ]; do d=$(dirname "$d"); done
	if [ ! -d "$d" ]; then
		printf '%s is not a directory' "$d"
	elif [ ! -w "$d" ] || [ ! -x "$d" ]; then
		printf 'no permission to write in %s' "$d"
	else
		return 1
	fi
}

# The journal of an install: what this run created (removed again if the
# run fails) and what it replaced (put back). journal new PATH | journal
# saved PATH COPY.
undo_op=() undo_path=() undo_copy=()
journal() {
	undo_op+=("$1")
	undo_path+=("$2")
	undo_copy+=("${3:-}")
}

# rollback undoes the journal, last change first.
rollback() {
	local i
	for ((i = ${#undo_op[@]} - 1; i >= 0; i--)); do
		rm -rf "${undo_path[i]}"
		[ "${undo_op[i]}" = new ] || mv -f "${undo_copy[i]}" "${undo_path[i]}"
	done
}

# forget_journal drops the copies of what a successful run replaced.
forget_journal() {
	local i
	for ((i = 0; i < ${#undo_op[@]}; i++)); do
		[ "${undo_op[i]}" = new ] || rm -rf "${undo_copy[i]}"
	done
	undo_op=() undo_path=() undo_copy=()
}

# make_dir DIR: mkdir -p, journaling the topmost directory it creates.
make_dir() {
	local d=$1 top=""
	while [ ! -e "$d" ] && [ ! -L "$d" ]; do top=$d d=$(dirname "$d"); done
	[ -n "$top" ] || return 0
	journal new "$top"
	mkdir -p "$1"
}

# copy_file SRC DST: replaces DST atomically (a running hook keeps its file);
# the old DST is kept (a hard link beside it) until the run succeeds.
copy_file() {
	if [ -e "$2" ]; then
		ln -f "$2" "$2.old.$$" 2>/dev/null || cp -p "$2" "$2.old.$$"
		journal saved "$2" "$2.old.$$"
	else
		journal new "$2"
	fi
	journal new "$2.tmp.$$"
	cp "$1" "$2.tmp.$$"
	chmod 0755 "$2.tmp.$$"
	mv -f "$2.tmp.$$" "$2"
}

# copy_skill: replaces the skill directory with the repository's copy.
copy_skill() {
	local new="$skill_dir.tmp.$$"
	make_dir "$(dirname "$skill_dir")"
	journal new "$new"
	cp -R "$repo/skill/harness" "$new"
	printf 'This copy of the harness skill was installed by %s/install.sh;\n./install.sh --uninstall removes it.\n' "$repo" >"$new/$marker"
	if [ -e "$skill_dir" ]; then
		mv "$skill_dir" "$skill_dir.old.$$"
		journal saved "$skill_dir" "$skill_dir.old.$$"
	else
		journal new "$skill_dir"
	fi
	mv "$new" "$skill_dir"
}

# register_install adds the settings file to the bin directory's list of
# settings files install.sh made run hooks from it, so that uninstalling one
# scope leaves the executables another one still uses.
register_install() {
	local list="$bin_dir/$registry"
	if [ -e "$list" ]; then
		cp -p "$list" "$tmp/registry"
		journal saved "$list" "$tmp/registry"
	else
		journal new "$list"
	fi
	touch "$list"
	grep -qxF "$settings" "$list" || printf '%s\n' "$settings" >>"$list"
}

# use_harness: $harness becomes a harness that knows `hooks dirs`: a copy
# of the installed one, else of the one on PATH, else a fresh build. It is
# a copy because the installed one may be removed while it is still needed.
use_harness() {
	local h
	for h in "$bin_dir/harness" "$(command -v harness 2>/dev/null || true)"; do
		if [ -n "$h" ] && [ -x "$h" ] && "$h" hooks dirs --settings "$tmp/none.json" </dev/null >/dev/null 2>&1; then
			cp "$h" "$tmp/harness"
			harness=$tmp/harness
			return 0
		fi
	done
	need_go
	build
	harness=$tmp/bin/harness
}

# uses FILE DIR: whether the settings FILE runs hooks from DIR (as `harness
# hooks dirs` reads it, so a path is compared as Go cleans it). A file that
# cannot be read counts as using it.
uses() {
	local dirs
	dirs=$("$harness" hooks dirs --settings "$1" </dev/null 2>/dev/null) || return 0
	printf '%s\n' "$dirs" | grep -qxF "$2"
}

# holds_ours DIR: whether DIR holds any of the executables or the registry.
holds_ours() {
	local p
	for p in $programs $registry; do
		[ ! -e "$1/$p" ] || return 0
	done
	return 1
}

# release DIR: $settings no longer runs hooks from DIR. Its executables go
# once no other settings file listed in DIR's registry still does. A
# directory install.sh did not fill (no registry) is left alone, unless it
# is this run's bin directory.
release() {
	local dir=$1 list=$1/$registry f others="" keep="" p
	holds_ours "$dir" || return 0
	if [ ! -f "$list" ] && [ "$dir" != "$bin_dir" ]; then
		say "leaving the executables in $dir: install.sh did not put them there"
		return 0
	fi
	if [ -f "$list" ]; then
		while IFS= read -r f; do
			if [ -n "$f" ] && [ "$f" != "$settings" ] && uses "$f" "$dir"; then
				others="$others${others:+, }$f"
				keep="$keep$f"$'\n'
			fi
		done <"$list"
	fi
	if [ -n "$others" ]; then
		say "keeping the executables in $dir: the hooks in $others still use them"
		if [ "$dry_run" = 0 ]; then
			printf '%s' "$keep" >"$list.tmp.$$" && mv -f "$list.tmp.$$" "$list"
		fi
		return 0
	fi
	say "removing the executables from $dir"
	for p in $programs $registry; do
		[ ! -e "$dir/$p" ] || act "remove $dir/$p" rm -f "$dir/$p"
	done
	# The directories go only when empty (and the parent only when it is the
	# default's ~/.claude/harness).
	if [ "$dry_run" = 0 ]; then
		rmdir "$dir" 2>/dev/null || true
		[ "$dir" != "$default_bin" ] || rmdir "$(dirname "$default_bin")" 2>/dev/null || true
	fi
}

# finish runs at exit: a failure nobody reported gets its one ERROR line,
# and a failed install undoes what it changed.
finish() {
	local rc=$?
	trap - EXIT
	if [ "$rc" != 0 ]; then
		local undone=""
		if [ "${#undo_op[@]}" -gt 0 ]; then
			rollback 2>/dev/null || true
			undone="; install.sh undid its changes, everything is as it was before"
		fi
		# shellcheck disable=SC2016 # the backquotes are text
		[ "$reported" = 1 ] ||
			printf 'install.sh: ERROR [ENV_SETUP] %s: `%s` failed (above)%s\n' "$step" "$failed" "$undone" >&2
		rc=2
	fi
	[ -z "${tmp:-}" ] || rm -rf "$tmp"
	exit "$rc"
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
default_bin=$(clean_path "$HOME/.claude/harness/bin")
bin_dir=${bin_dir:-$default_bin}
case $bin_dir in /*) ;; *) bin_dir=$PWD/$bin_dir ;; esac
bin_dir=$(clean_path "$bin_dir")
if [ -n "$project" ]; then
	[ -d "$project" ] || fail CONFIG "--project $project: no such directory"
	project=$(cd "$project" && pwd -P)
	settings=$project/.claude/settings.json
	skill_dir=$project/.claude/skills/harness
	scope="--project $project"
else
	settings=$(clean_path "$HOME/.claude/settings.json")
	skill_dir=$(clean_path "$HOME/.claude/skills/harness")
	scope=""
fi

reported=0 step="preparing" failed=""
trap finish EXIT
set -E
trap 'failed=$BASH_COMMAND' ERR
[ "$uninstall" = 1 ] || need_go
tmp=$(mktemp -d "${TMPDIR:-/tmp}/harness-install.XXXXXX")
[ "$dry_run" = 0 ] || say "dry run: nothing will be changed"

if [ "$uninstall" = 1 ]; then
	step="uninstalling"
	use_harness
	# Where the hooks ran from, before they go: their executables go too.
	if ! ran_from=$("$harness" hooks dirs --settings "$settings"); then
		fail CONFIG "$settings cannot be used (above); nothing was removed"
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
	printf '%s\n%s\n' "$ran_from" "$bin_dir" | awk 'NF && !seen[$0]++' >"$tmp/dirs"
	while IFS= read -r dir; do
		release "$dir"
	done <"$tmp/dirs"
	# A settings file the harness created went with our entries; so does
	# the .claude directory made for it, when nothing else is in it.
	[ "$dry_run" = 1 ] || [ -e "$settings" ] || rmdir "$(dirname "$settings")" 2>/dev/null || true
	if [ "$dry_run" = 1 ]; then
		say "dry run: nothing was changed"
	else
		say "uninstalled${scope:+ ($scope)}"
	fi
	exit 0
fi

step="checking"
keep_skill=""
if [ -e "$skill_dir" ] || [ -L "$skill_dir" ]; then
	if ! skill_is_harness "$skill_dir"; then
		fail CONFIG "$skill_dir exists and is not the harness skill; nothing was installed" "move it away, or install at another scope"
	fi
	# A harness skill install.sh did not put there (an npx skills copy, or
	# the user's own) is theirs: it stays as it is, now and at --uninstall.
	[ -f "$skill_dir/$marker" ] || keep_skill=$skill_dir
fi
# Every directory to write in must be writable before the first copy.
for target in "executables:$bin_dir" "skill:$(dirname "$skill_dir")" "hooks:$(dirname "$settings")"; do
	if why=$(unwritable "${target#*:}"); then
		fail ENV_SETUP "cannot install the ${target%%:*} in ${target#*:}: $why; nothing was installed" \
			"fix that (or choose another --bin-dir or --project), then run ./install.sh again"
	fi
done
build
harness=$tmp/bin/harness

# Check the settings file before anything is copied: an invalid one stops
# the install here, untouched.
if ! "$harness" hooks install --dry-run --settings "$settings" --bin-dir "$bin_dir" >"$tmp/plan" 2>&1; then
	cat "$tmp/plan" >&2
	fail CONFIG "$settings cannot be used (above); nothing was installed"
fi
ran_from=$("$harness" hooks dirs --settings "$settings")

step="installing the executables in $bin_dir"
say "$step"
act "create $bin_dir" make_dir "$bin_dir"
for p in $programs; do
	act "install $bin_dir/$p" copy_file "$tmp/bin/$p" "$bin_dir/$p"
done

step="installing the skill in $skill_dir"
if [ -n "$keep_skill" ]; then
	if diff -r -x "$marker" "$repo/skill/harness" "$skill_dir" >/dev/null 2>&1; then
		say "leaving the skill in $skill_dir as it is (the same as this version's): install.sh did not put it there, so --uninstall will leave it too"
	else
		say "leaving the skill in $skill_dir as it is: install.sh did not put it there (an npx skills copy, or your own), and it differs from this version's skill/harness; to use this one, remove it (npx skills remove harness, or by hand) and run ./install.sh again"
	fi
else
	say "$step"
	act "copy $repo/skill/harness to $skill_dir" copy_skill
fi

if [ "$dry_run" = 1 ]; then
	sed 's/^/  /' "$tmp/plan"
	while IFS= read -r dir; do
		[ -z "$dir" ] || [ "$dir" = "$bin_dir" ] || release "$dir"
	done <<<"$ran_from"
	say "dry run: nothing was changed"
	exit 0
fi
step="registering the hooks in $settings"
register_install
"$bin_dir/harness" hooks install --settings "$settings" --bin-dir "$bin_dir"
forget_journal

# The hooks moved here from another bin directory: the old one's
# executables go once nothing uses them.
step="cleaning up"
while IFS= read -r dir; do
	[ -z "$dir" ] || [ "$dir" = "$bin_dir" ] || release "$dir"
done <<<"$ran_from"

say "installed${scope:+ ($scope)}. In Claude Code, in your project: /harness init, then /harness add \"…\" and /harness run"
case ":$PATH:" in
*":$bin_dir:"*) ;;
*) say "to run harness from your shell too: export PATH=\"$bin_dir:\$PATH\" (the hooks do not need it)" ;;
esac
