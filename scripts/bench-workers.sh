#!/usr/bin/env bash
# Times `harness workers N` end to end, as a person waits for it, on a plan
# of independent tasks whose validations take a few seconds, with 1 worker
# and with 3, and prints one markdown table (wall time of each run, and the
# ratio). The sessions are a stand-in for Claude Code (claim, write the
# file the validation checks, validate, until nothing is left), so what is
# measured is the harness: the workers' parallel validations against the
# merge queue, which validates every task again on the merged tree.
# docs/perf.md holds the latest table.
#
#   scripts/bench-workers.sh
#
# Knobs: BENCH_TASKS (default 9), BENCH_VALIDATION_SECONDS (each validation's
# sleep, default 3), BENCH_WORKERS (the counts to compare, default "1 3"),
# BENCH_KEEP=1 keeps the scratch directory.
set -euo pipefail
cd "$(dirname "$0")/.."
TASKS=${BENCH_TASKS:-9}
SECONDS_EACH=${BENCH_VALIDATION_SECONDS:-3}
COUNTS=${BENCH_WORKERS:-1 3}

say() { echo "bench-workers: $*" >&2; }

work=$(mktemp -d /tmp/harness-bench-workers.XXXXXX)
if [ "${BENCH_KEEP:-}" = 1 ]; then
	say "scratch: $work"
else
	trap 'rm -rf "$work"' EXIT
fi
say "building"
scripts/build.sh "$work/bin" >/dev/null
export PATH="$work/bin:$PATH"

cat >"$work/claude" <<'EOF'
#!/bin/sh
# Stands in for `claude -p "/harness run"`: claim, do, validate, repeat.
while :; do
  out=$(harness claim --json) || exit 0
  id=$(printf '%s' "$out" | sed -n 's/.*"claimed":{"id":"\([^"]*\)".*/\1/p')
  [ -n "$id" ] || exit 0
  echo "$id" > "$id.txt"
  harness validate "$id" >/dev/null || true
done
EOF
chmod 755 "$work/claude"

# run N: a fresh project with the plan, then `harness workers N`; prints
# the wall time in seconds.
run() {
	local n=$1 dir="$work/project-$1"
	mkdir -p "$dir"
	(
		cd "$dir"
		export HOME="$work/home-$n" HARNESS_LOCK_DIR="$work/locks-$n" HARNESS_WORKTREES="$work/trees-$n"
		export HARNESS_CLAUDE="$work/claude" GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@localhost GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@localhost
		unset CLAUDE_CODE_SESSION_ID CLAUDE_PID CLAUDECODE HARNESS_STATE_ROOT HARNESS_WORKER_ID
		mkdir -p "$HOME" "$HARNESS_LOCK_DIR"
		git init -q -b main
		echo bench >README.md
		git add README.md && git commit -q -m baseline
		harness init >/dev/null
		for i in $(seq "$TASKS"); do
			id=$(printf 'task-%03d' "$i")
			harness add "Task $i" --id "$id" --validate "sleep $SECONDS_EACH && test -f $id.txt" >/dev/null
		done
		start=$(date +%s.%N)
		harness workers "$n" >"$work/workers-$n.out" 2>&1 </dev/null || { cat "$work/workers-$n.out" >&2; exit 1; }
		end=$(date +%s.%N)
		grep -q "job done: all $TASKS tasks integrated" "$work/workers-$n.out" || { cat "$work/workers-$n.out" >&2; exit 1; }
		awk -v a="$start" -v b="$end" 'BEGIN { print b - a }' 
	)
}

declare -A took
for n in $COUNTS; do
	say "harness workers $n: $TASKS tasks, validations of ${SECONDS_EACH}s"
	took[$n]=$(run "$n")
done

first=${COUNTS%% *}
echo "| workers | wall time | vs $first worker(s) |"
echo "|---|---|---|"
for n in $COUNTS; do
	awk -v n="$n" -v t="${took[$n]}" -v f="${took[$first]}" 'BEGIN { printf "| %s | %.1f s | %.2f |\n", n, t, t / f }' 
done
echo
echo "($TASKS independent tasks, each validation \`sleep $SECONDS_EACH\`, run twice per task: in the worker's tree and on the merged tree; stand-in sessions, no model time; $(nproc) cores)"
