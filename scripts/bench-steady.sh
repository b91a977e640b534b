#!/usr/bin/env bash
# Times the hooks as a session pays for them between tasks, in its steady
# state: each row runs the same hook again and again on one project, with
# nothing put back between runs (scripts/bench.sh resets the record, the
# runtime files or the doom-loop ring before each run, which makes the hooks
# rebuild what a session keeps; docs/perf.md has both). Every figure is the
# hook's whole process against a static Go binary that reads the same
# payload and does nothing else (the floor), timed in turn, pair by pair
# (scripts/pairtime).
#
#   scripts/bench-steady.sh                 # 1,000 and 10,000 tasks, 40 pairs a row
#   RUNS=20 SIZES=1000 scripts/bench-steady.sh
#   BIN=/path/to/built/bin scripts/bench-steady.sh   # another build (scripts/build.sh DIR)
#   REF=/path/to/reference/hooks scripts/bench-steady.sh
#
# REF names the directory of the Python reference's hooks (the skill's
# upstream, skills/harness/hooks of github.com/cexll/myclaude: harness-
# sessionstart.py, harness-stop.py, harness-subagentstop.py). With it, each
# hook the reference also has is timed a second time against the reference's
# (`python3 HOOK.py`) instead of the floor, on the same project and payload:
# the "× faster than the reference" rows of docs/perf.md. The reference is
# not part of this repository; bring it yourself. PYTHON names the
# interpreter (default python3); give a real one, not a version manager's
# shim (pyenv's python3 is a shell script that adds some 60 ms a run).
#
# The project: a git repository, a state of N tasks (60 % completed, the
# rest pending in one dependency chain; session_count 100,001, so that the
# bench's thousands of sessions never give it a digit more: a count that
# grows by a digit writes the tasks file whole, and the new-session row's
# runs, milliseconds apart, then all met a tree changed within git's racy
# two seconds and asked git) adopted by `harness adopt`, a
# progress log of LOG_MB megabytes, one session started. The PreToolUse rows
# cycle through 25 different calls (a session's calls differ; 20 identical
# ones would be a doom loop). KEEP=1 keeps the scratch directory.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-40}
SIZES=${SIZES:-1000 10000}
LOG_MB=${LOG_MB:-52}

work=$(mktemp -d "${TMPDIR:-/tmp}/harness-bench-steady.XXXXXX")
trap 'kill "$claude" 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
bin=$work/bin
if [ -n "${BIN:-}" ]; then
	mkdir -p "$bin" && cp "$BIN"/harness* "$bin/"
else
	scripts/build.sh "$bin" >/dev/null
fi
go build -o "$bin/pairtime" ./scripts/pairtime
mkdir -p "$work/floor"
printf 'package main\n\nimport (\n\t"io"\n\t"os"\n)\n\nfunc main() { io.Copy(io.Discard, os.Stdin) }\n' >"$work/floor/main.go"
(cd "$work/floor" && printf 'module floor\n\ngo 1.21\n' >go.mod && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$bin/floor" .)

unset HARNESS_STATE_ROOT HARNESS_WORKER_ID HARNESS_LOCK_DIR CLAUDE_CODE_SESSION_ID CLAUDE_PID CLAUDECODE
export HOME=$work/home XDG_RUNTIME_DIR=$work/run XDG_STATE_HOME= GIT_CONFIG_NOSYSTEM=1
export GIT_AUTHOR_NAME=b GIT_AUTHOR_EMAIL=b@example.com GIT_COMMITTER_NAME=b GIT_COMMITTER_EMAIL=b@example.com
mkdir -p "$HOME" "$XDG_RUNTIME_DIR"
# Installed, as a user's harness is: Stop and SessionStart then check the
# wiring (the settings files, the installed executables against their
# manifest) as they do in a session.
"$bin/harness" install >/dev/null
sleep 100000 >/dev/null 2>&1 &
claude=$! # stands in for Claude Code: alive, it holds the session lock

# project DIR N MB ACTIVE (N 0: a repository without harness state)
project() {
	local dir=$1 n=$2 mb=$3 active=$4
	mkdir -p "$dir/src"
	(
		cd "$dir"
		git init -q
		for i in $(seq 25); do echo "package src // file $i" >"src/f$i.go"; done
		echo project >README
		git add -A && git commit -q -m baseline
		[ "$n" -gt 0 ] || exit 0 # no harness state at all
		awk -v n="$n" 'BEGIN {
			printf "{\n  \"version\": 2,\n  \"session_config\": {\"max_sessions\": 1000000},\n  \"tasks\": [\n"
			for (i = 1; i <= n; i++) {
				st = (i <= n * 0.6) ? "completed" : "pending"; dep = (i > 1) ? sprintf("[\"task-%05d\"]", i - 1) : "[]"
				printf "    {\"id\": \"task-%05d\", \"title\": \"Implement part %d\", \"status\": \"%s\", \"priority\": \"P1\", \"depends_on\": %s, \"attempts\": 1, \"max_attempts\": 3, \"validation\": {\"command\": \"true\", \"timeout_seconds\": 300}, \"error_log\": [], \"checkpoints\": [{\"step\": 1, \"total\": 2, \"description\": \"half\", \"timestamp\": \"2025-07-01T10:05:00Z\"}]}%s\n", i, i, st, dep, (i < n ? "," : "")
			}
			printf "  ],\n  \"session_count\": 100001,\n  \"last_session\": null\n}\n"
		}' >harness-tasks.json
		line='[2025-07-01T10:05:00Z] [SESSION-1] CHECKPOINT [task-00001] step=1/2 "first half of the work, with a description of what was done"'
		{ yes "$line" || true; } | head -c $((mb << 20)) >harness-progress.txt
		echo >>harness-progress.txt
		"$bin/harness" adopt --yes >/dev/null
		if [ "$active" = 1 ]; then touch .harness-active; fi
	)
	local p='{"session_id":"bench","cwd":"'$dir'"'
	echo "$p"',"hook_event_name":"SessionStart","source":"startup"}' >"$dir.start.json"
	echo "$p"',"hook_event_name":"Stop","stop_hook_active":false}' >"$dir.stop.json"
	echo "$p"',"hook_event_name":"SubagentStop","stop_hook_active":false,"agent_id":"a1","agent_type":"general-purpose"}' >"$dir.substop.json"
	for i in $(seq -w 25); do
		echo "$p"',"hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"'$dir'/src/f'$((10#$i))'.go"}}' >"$dir.read.$i.json"
		echo "$p"',"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"grep -n func src/f'$((10#$i))'.go"}}' >"$dir.grep.$i.json"
		echo "$p"',"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"go test ./src/... -run T'$i'"}}' >"$dir.test.$i.json"
		echo "$p"',"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"go test ./src/... -run T'$i'"},"tool_response":{"stdout":"ok","stderr":"","interrupted":false}}' >"$dir.post.$i.json"
	done
}

# row NAME DIR HOOK INPUT
row() {
	pair "$2" -label "$1" -a "$bin/$3" -ain "$4" -b "$bin/floor"
}

# pair DIR ARGS...: pairtime's RUNS pairs in the project DIR, in the
# session's environment (the stand-in Claude Code holds the session lock).
pair() {
	local dir=$1
	shift
	(cd "$dir" && CLAUDE_CODE_SESSION_ID=bench CLAUDE_PID=$claude CLAUDE_PROJECT_DIR=$dir \
		"$bin/pairtime" -n "$RUNS" "$@")
}

# changed NAME DIR HOOK INPUT: row, with a project file changed before each
# run of the hook (untimed): the checkpoint and the session start's tree
# state then take their git processes.
changed() {
	printf '#!/bin/sh\necho "// $$" >>"%s/src/f1.go"\n' "$2" >"$work/change.sh"
	chmod +x "$work/change.sh"
	pair "$2" -label "$1" -prep "$work/change.sh" -a "$bin/$3" -ain "$4" -b "$bin/floor"
}

# started NAME DIR INPUT [REF]: row of the session start, each run a new
# Claude Code session (pairtime -session) after the last one ended (its
# session lock released, untimed, as SessionEnd releases it): a new
# session takes the session lock, and its runtime and usage files are new
# files.
# The same id again is a resume (the "again" row). With REF, against the
# reference's hook.
started() {
	printf '#!/bin/sh\nrm -rf "%s"\n' "$XDG_RUNTIME_DIR/harness/harness-$(printf %s "$2" | sha256sum | cut -c1-16).lock" >"$work/ended.sh"
	chmod +x "$work/ended.sh"
	local b="$bin/floor" label=$1
	if [ -n "${4:-}" ]; then
		[ -n "${REF:-}" ] || return 0
		b="${PYTHON:-python3} $REF/$4" label="$1, vs reference"
	fi
	pair "$2" -label "$label" -prep "$work/ended.sh" -session bench -a "$bin/harness-session-start" -ain "$3" -b "$b"
	if [ -n "${4:-}" ]; then
		pair "$2" -label "$1, the floor vs reference (the bound)" -prep "$work/ended.sh" -session bench -a "$bin/floor" -ain "$3" -b "$b"
	fi
}

# refrow NAME DIR HOOK INPUT REFHOOK: our hook (A) against the reference's
# (B), then the floor against it: no hook can be faster than the floor, so
# that row is the most this machine lets any hook's row reach (on one where
# a page fault is dear, a Go process's start weighs more against Python's
# and the bound falls: docs/perf.md).
refrow() {
	[ -n "${REF:-}" ] || return 0
	pair "$2" -label "$1, vs reference" -a "$bin/$3" -ain "$4" -b "${PYTHON:-python3} $REF/$5"
	pair "$2" -label "$1, the floor vs reference (the bound)" -a "$bin/floor" -ain "$4" -b "${PYTHON:-python3} $REF/$5"
}

echo "bench-steady: $RUNS pairs a row; log ${LOG_MB} MB; $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg)"
for n in $SIZES; do
	d=$work/p$n
	project "$d" "$n" "$LOG_MB" 1
	(cd "$d" && CLAUDE_CODE_SESSION_ID=bench CLAUDE_PID=$claude CLAUDE_PROJECT_DIR=$d "$bin/harness-session-start" <"$d.start.json" >/dev/null)
	# A tree whose files were all written in the last two seconds is
	# "racily clean" to the session start's kept git answer (treecache), as
	# it is to git's index: a session's tree is older than that. And the
	# project's files, just made (a 52 MB log), are on disk, as a session's
	# long have been: until the kernel has written them back, every fsync
	# of a hook waits for part of them (the new-session row's lock, count,
	# usage and runtime writes took 2.5, 2.4, 0.9 and 0.9 ms each so).
	sync
	sleep 2.5
	row "stop, work remains ($n tasks)" "$d" harness-stop "$d.stop.json"
	row "pre-tool-use, Read ($n tasks)" "$d" harness-pre-tool-use "$d.read.*.json"
	row "pre-tool-use, Bash grep ($n tasks)" "$d" harness-pre-tool-use "$d.grep.*.json"
	# Between a session's tool calls the model thinks for seconds: the
	# check after a call that changed nothing keeps its judgement of files
	# still for two seconds, and the next PostToolUse ends on it
	# (integrity.AfterTool). The rows above may have written the log.
	sleep 2.1
	row "post-tool-use, Bash ($n tasks)" "$d" harness-post-tool-use "$d.post.*.json"
	row "pre-tool-use, Bash go test, tree as at the last checkpoint ($n tasks)" "$d" harness-pre-tool-use "$d.test.*.json"
	started "session-start, a new session between tasks, git included ($n tasks)" "$d" "$d.start.json"
	row "session-start, the same session again (a resume), git included ($n tasks)" "$d" harness-session-start "$d.start.json"
	# The reference's session start before its Stop: that Stop writes its
	# counter (.harness-stop-counter) into the project at every run, and a
	# tree changed within two seconds is "racily clean" to the session
	# start's kept git answer, so every start right after it ran git status
	# (4.9 ms against 2.5 ms), a cost of the bench's order, not of a session.
	started "session-start, a new session between tasks ($n tasks)" "$d" "$d.start.json" harness-sessionstart.py
	refrow "stop, work remains ($n tasks)" "$d" harness-stop "$d.stop.json" harness-stop.py
	refrow "subagent-stop ($n tasks)" "$d" harness-subagent-stop "$d.substop.json" harness-subagentstop.py
	# Last: a project file changes before each of their runs, and the rows
	# above would see the tree as just changed (git runs).
	changed "pre-tool-use, Bash go test after a change: checkpoint ($n tasks)" "$d" harness-pre-tool-use "$d.test.*.json"
	changed "session-start after a change, git included ($n tasks)" "$d" harness-session-start "$d.start.json"
done
# A project the harness was never set up in: where a user who installed
# it works on anything else, and every hook ends before its packages are
# initialised (internal/quiet).
d=$work/elsewhere
project "$d" 0 0 0
row "stop, no project" "$d" harness-stop "$d.stop.json"
row "pre-tool-use, no project" "$d" harness-pre-tool-use "$d.grep.*.json"
row "post-tool-use, no project" "$d" harness-post-tool-use "$d.post.*.json"
row "session-start, no project" "$d" harness-session-start "$d.start.json"
# As Claude Code starts a hook: an entry in the shell form runs under
# /bin/sh -c, which `harness hooks install` no longer writes (the exec
# form starts the executable alone, as the rows above time it).
pair "$d" -label "pre-tool-use, no project, under /bin/sh -c (the shell form)" -a "/bin/sh -c $bin/harness-pre-tool-use" -ain "$d.grep.01.json" -b "$bin/floor"
# A project whose harness is switched off (no .harness-active): the hooks
# end early where its record says so and the last check's judgement holds.
d=$work/inactive
project "$d" "${SIZES##* }" 0 0
row "pre-tool-use, inactive" "$d" harness-pre-tool-use "$d.grep.*.json"
sleep 2.1 # as for the post-tool-use rows above
row "post-tool-use, inactive" "$d" harness-post-tool-use "$d.post.*.json"
# A turn's end after its tool calls, whose checks kept their judgement.
row "stop, inactive" "$d" harness-stop "$d.stop.json"
row "session-start, inactive" "$d" harness-session-start "$d.start.json"
refrow "stop, inactive" "$d" harness-stop "$d.stop.json" harness-stop.py
refrow "subagent-stop, inactive" "$d" harness-subagent-stop "$d.substop.json" harness-subagentstop.py
refrow "session-start, inactive" "$d" harness-session-start "$d.start.json" harness-sessionstart.py
