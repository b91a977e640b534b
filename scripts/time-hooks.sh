#!/usr/bin/env bash
# Times the lifecycle hooks as whole processes, the way Claude Code pays for
# them (spawn, read the payload, decide, exit), against a static binary that
# does nothing: an inactive hook should cost little more than that; an active
# Stop or SessionStart on 1,000 tasks with a 50 MB progress log is measured
# too, and must not grow with the log.
#
#   scripts/time-hooks.sh            # 30 runs per row
#   RUNS=100 TASKS=10000 LOG_MB=50 scripts/time-hooks.sh
#
# Uses hyperfine when it is installed, else a loop timed with date +%s%N.
# Prints one line per row: median and mean wall time and (hyperfine only)
# CPU time, in milliseconds. KEEP=1 keeps the scratch directory.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-30}
TASKS=${TASKS:-1000}
LOG_MB=${LOG_MB:-50}

work=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
bin=$work/bin
scripts/build.sh "$bin" >/dev/null
mkdir -p "$work/noop" && printf 'package main\n\nfunc main() {}\n' >"$work/noop/main.go"
(cd "$work/noop" && printf 'module noop\n\ngo 1.21\n' >go.mod && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$bin/noop" .)

export HARNESS_LOCK_DIR=$work/locks CLAUDE_PID=1 CLAUDE_CODE_SESSION_ID=time-hooks HOME=$work/home
export HARNESS_WORKER_ID=w1 GIT_CONFIG_NOSYSTEM=1
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.com GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.com
mkdir -p "$HARNESS_LOCK_DIR" "$HOME"

# project DIR TASKS LOG_MB ACTIVE: a git repository holding a state of TASKS
# tasks (a third completed, one claimed by another worker, the rest pending
# in dependency chains) and a progress log of LOG_MB megabytes.
project() {
	local dir=$1 n=$2 mb=$3 active=$4
	mkdir -p "$dir"
	git -C "$dir" init -q
	echo "project" >"$dir/README"
	git -C "$dir" add README && git -C "$dir" commit -q -m baseline
	awk -v n="$n" 'BEGIN {
		printf "{\n  \"version\": 2,\n  \"session_config\": {\"concurrency_mode\": \"concurrent\", \"max_tasks_per_session\": 20, \"max_sessions\": 100000},\n  \"tasks\": [\n"
		for (i = 1; i <= n; i++) {
			st = "pending"; extra = ""; dep = "[]"
			if (i <= n / 3) st = "completed"
			if (i == int(n / 3) + 1) { st = "in_progress"; extra = ", \"claimed_by\": \"w2\", \"lease_expires_at\": \"2999-01-01T00:00:00Z\"" }
			if (i > 1 && i != int(n / 3) + 2) dep = sprintf("[\"task-%05d\"]", i - 1)
			printf "    {\"id\": \"task-%05d\", \"title\": \"Implement part %d\", \"status\": \"%s\", \"priority\": \"P1\", \"depends_on\": %s, \"attempts\": 1, \"max_attempts\": 3, \"validation\": {\"command\": \"true\", \"timeout_seconds\": 300}, \"error_log\": [], \"checkpoints\": [{\"step\": 1, \"total\": 2, \"description\": \"half\", \"timestamp\": \"2025-07-01T10:05:00Z\"}]%s}%s\n", i, i, st, dep, extra, (i < n ? "," : "")
		}
		printf "  ],\n  \"session_count\": 1,\n  \"last_session\": null\n}\n"
	}' >"$dir/harness-tasks.json"
	: >"$dir/harness-progress.txt"
	if [ "$mb" -gt 0 ]; then
		local line='[2025-07-01T10:05:00Z] [SESSION-1] CHECKPOINT [task-00001] step=1/2 "first half of the work, with a description of what was done"'
		{ yes "$line" || true; } | head -c $((mb << 20)) >"$dir/harness-progress.txt"
		echo >>"$dir/harness-progress.txt"
	fi
	if [ "$active" = 1 ]; then touch "$dir/.harness-active"; fi
}

# ms RUNS DIR STDIN CMD: prints "median mean cpu" in milliseconds (cpu: user
# plus system time, the steadier number on a busy machine). Both ways run the
# command from a shell, the baseline row too, so the rows compare.
ms() {
	local runs=$1 dir=$2 input=$3 cmd=$4
	if command -v hyperfine >/dev/null; then
		hyperfine -r "$runs" -w 3 --export-json "$work/h.json" "cd $dir && $cmd <$input >/dev/null" >/dev/null 2>&1
		python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"][0]; print("%.2f %.2f %.2f" % (r["median"]*1e3, r["mean"]*1e3, (r["user"]+r["system"])*1e3))' "$work/h.json"
		return
	fi
	local times=() i t0 t1
	for ((i = 0; i < runs; i++)); do
		t0=$(date +%s%N)
		sh -c "cd $dir && $cmd <$input >/dev/null 2>&1" || true
		t1=$(date +%s%N)
		times+=($(((t1 - t0) / 1000)))
	done
	printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR] = $1; s += $1} END {printf "%.2f %.2f -\n", a[int((NR + 1) / 2)] / 1000, s / NR / 1000}'
}

row() {
	local name=$1 dir=$2 input=$3 cmd=$4
	read -r median mean cpu < <(ms "$RUNS" "$dir" "$input" "$cmd")
	printf '%-56s median %7s ms   mean %7s ms   cpu %7s ms\n' "$name" "$median" "$mean" "$cpu"
}

project "$work/inactive" "$TASKS" 0 0
project "$work/big0" "$TASKS" 0 1
project "$work/big" "$TASKS" "$LOG_MB" 1
mkdir -p "$work/none"
stop='{"session_id":"time-hooks","hook_event_name":"Stop","stop_hook_active":true}'
start='{"session_id":"time-hooks","hook_event_name":"SessionStart","source":"startup"}'
for d in inactive big0 big none; do
	echo "${stop%\}},\"cwd\":\"$work/$d\"}" >"$work/$d.stop.json"
	echo "${start%\}},\"cwd\":\"$work/$d\"}" >"$work/$d.start.json"
	echo "{\"session_id\":\"time-hooks\",\"agent_id\":\"a1\",\"cwd\":\"$work/$d\"}" >"$work/$d.sub.json"
	echo "{\"session_id\":\"time-hooks\",\"reason\":\"other\",\"cwd\":\"$work/$d\"}" >"$work/$d.end.json"
done
# The sessions the timed runs continue (counted once, not per run).
(cd "$work/big0" && "$bin/harness-session-start" <"$work/big0.start.json" >/dev/null)
(cd "$work/big" && "$bin/harness-session-start" <"$work/big.start.json" >/dev/null)

echo "time-hooks: $RUNS runs per row; $TASKS tasks; progress log ${LOG_MB} MB; $(command -v hyperfine >/dev/null && echo hyperfine || echo 'date loop')"
row "static binary doing nothing (baseline)" "$work/none" "$work/none.stop.json" "$bin/noop"
row "stop, no state root" "$work/none" "$work/none.stop.json" "$bin/harness-stop"
row "stop, inactive ($TASKS tasks)" "$work/inactive" "$work/inactive.stop.json" "$bin/harness-stop"
row "session-start, inactive" "$work/inactive" "$work/inactive.start.json" "$bin/harness-session-start"
row "subagent-stop, inactive" "$work/inactive" "$work/inactive.sub.json" "$bin/harness-subagent-stop"
row "session-end, inactive" "$work/inactive" "$work/inactive.end.json" "$bin/harness-session-end"
row "stop, active, blocks ($TASKS tasks, empty log)" "$work/big0" "$work/big0.stop.json" "$bin/harness-stop"
row "stop, active, blocks ($TASKS tasks, ${LOG_MB} MB log)" "$work/big" "$work/big.stop.json" "$bin/harness-stop"
row "subagent-stop, active ($TASKS tasks, ${LOG_MB} MB log)" "$work/big" "$work/big.sub.json" "$bin/harness-subagent-stop"
row "session-start, active ($TASKS tasks, empty log)" "$work/big0" "$work/big0.start.json" "$bin/harness-session-start"
row "session-start, active ($TASKS tasks, ${LOG_MB} MB log)" "$work/big" "$work/big.start.json" "$bin/harness-session-start"
