#!/bin/sh
# launch.sh PROGRAM: how the Claude Code plugin runs a harness hook whose
# executable is not in bin/ yet (hooks/hooks.json execs one that is, with no
# process started before it). It execs PROGRAM from the plugin's bin/
# (PROGRAM.exe on Windows, where Claude Code runs hook commands with Git
# Bash). When bin/ lacks it and Go is on PATH, it
# builds every executable once (scripts/build.sh, under a lock, into a
# temporary directory moved into place), then execs. Without the executables
# and without Go it answers the event with nothing but, at SessionStart, one
# non-blocking systemMessage saying how to get them: a hook never fails, never
# blocks and never goes silently missing.
#
# stdout is the hook's answer to Claude Code: nothing here prints to it but
# that message and the executable itself.
prog=${1:?usage: launch.sh PROGRAM}
root=${CLAUDE_PLUGIN_ROOT:-$(cd "$(dirname "$0")/.." && pwd)}
bin=$root/bin
exe=$bin/$prog

# resolve: PROGRAM.exe where only that is there (a Windows build), told
# from the files rather than by uname, whose process cost every hook call
# about a millisecond. (Where Git Bash finds PROGRAM.exe by the name
# PROGRAM already, exec finds it the same way.)
resolve() {
	[ -e "$exe" ] || [ ! -e "$exe.exe" ] || exe=$exe.exe
}
resolve

# build: every executable into bin/, once, whoever asks first. Others wait
# for that build (a hook timeout is 30 s or more; the build takes seconds
# to a minute), then use what it made.
build() {
	command -v go >/dev/null 2>&1 || return 1
	command -v bash >/dev/null 2>&1 || return 1
	[ -f "$root/scripts/build.sh" ] || return 1
	lock=$root/.harness-build.lock
	if mkdir "$lock" 2>/dev/null; then
		tmp=$root/.harness-build.$$
		if (cd "$root" && bash scripts/build.sh "$tmp") >"$root/.harness-build.log" 2>&1; then
			mkdir -p "$bin"
			for f in "$tmp"/*; do mv -f "$f" "$bin/"; done
		fi
		rm -rf "$tmp"
		rmdir "$lock"
	else
		i=0
		while [ -d "$lock" ] && [ $i -lt 110 ]; do
			sleep 1
			i=$((i + 1))
		done
	fi
	resolve
	[ -x "$exe" ]
}

if [ -x "$exe" ] || build; then
	exec "$exe"
fi

# Neither the executables nor Go: say so once a session, never block.
cat >/dev/null 2>&1
if [ "$prog" = harness-session-start ]; then
	where=$(printf '%s' "$root" | sed 's/\\/\\\\/g; s/"/\\"/g')
	printf '{"systemMessage":"harness plugin: its executables are missing from %s/bin, so its hooks do nothing. Install Go (https://go.dev/dl/) and start a new session (the plugin then builds them), or install a release (see the README: harness install)."}\n' "$where"
fi
exit 0
