#!/usr/bin/env bash
# Measures a job shared through a git remote (harness workers N --remote):
# claim latency and claims per second against the remote, with M machines
# of W workers each. A bare repository on this machine stands in for the
# remote (so the figures are the harness's and git's, not a network's),
# each machine is a clone with its own home, lock and worktree directories,
# and the sessions are a stand-in for Claude Code that claims, writes the
# file its task's check wants, and validates, timing each claim. Prints one
# markdown table row per machine count (changes: the pushes of the state
# the remote took, counted by a post-receive hook there, whatever refs
# they moved, and the pushes that lost a race per change; changes/s: per
# second of the run); docs/perf.md holds the latest.
#
#   scripts/bench-remote.sh
#
# Knobs: BENCH_MACHINES (the machine counts to compare, default "0 1 2 3";
# 0 is one machine without a remote, the baseline),
# BENCH_WORKERS (workers per machine, default 4), BENCH_TASKS (default 48),
# BENCH_KEEP=1 keeps the scratch directory.
set -euo pipefail
cd "$(dirname "$0")/.."
COUNTS=${BENCH_MACHINES:-0 1 2 3}
WORKERS=${BENCH_WORKERS:-4}
TASKS=${BENCH_TASKS:-48}

say() { echo "bench-remote: $*" >&2; }

work=$(mktemp -d /tmp/harness-bench-remote.XXXXXX)
if [ "${BENCH_KEEP:-}" = 1 ]; then
	say "scratch: $work"
else
	trap 'rm -rf "$work"' EXIT
fi
say "building"
scripts/build.sh "$work/bin" >/dev/null
export PATH="$work/bin:$PATH"
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@localhost GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@localhost
unset CLAUDE_CODE_SESSION_ID CLAUDE_PID CLAUDECODE HARNESS_STATE_ROOT HARNESS_WORKER_ID

cat >"$work/claude" <<'EOF'
#!/bin/sh
# Stands in for `claude -p "/harness run"`: claim (timed), do, validate.
while :; do
  t0=$(date +%s%N)
  out=$(harness claim --json) || exit 0
  t1=$(date +%s%N)
  id=$(printf '%s' "$out" | sed -n 's/.*"claimed":{"id":"\([^"]*\)".*/\1/p')
  [ -n "$id" ] || exit 0
  echo "$(( (t1 - t0) / 1000000 )) $t1" >> "$BENCH_LATENCIES"
  echo "$id" > "$id.txt"
  # a validation refused (the remote too busy) is run again, as an agent would
  for try in 1 2 3; do harness validate "$id" >/dev/null 2>&1 && break; done
done
EOF
chmod 755 "$work/claude"

plan() {
	printf '{"version": 2, "session_config": {"concurrency_mode": "exclusive"}, "tasks": ['
	for i in $(seq "$TASKS"); do
		[ "$i" -gt 1 ] && printf ','
		printf '{"id": "task-%03d", "title": "Task %d", "status": "pending", "validation": {"command": "test -f task-%03d.txt"}}' "$i" "$i" "$i"
	done
	printf '], "session_count": 1}\n'
}

# machine M K: environment of machine K of run M.
machine_env() {
	export HOME="$work/run-$1/home-$2" HARNESS_LOCK_DIR="$work/run-$1/locks-$2" HARNESS_WORKTREES="$work/run-$1/trees-$2"
	export HARNESS_CLAUDE="$work/claude" BENCH_LATENCIES="$work/run-$1/latencies"
	mkdir -p "$HOME" "$HARNESS_LOCK_DIR"
}

run() {
	local m=$1 r="$work/run-$1" share=(--remote origin) label="$1 × $WORKERS"
	if [ "$m" = 0 ]; then
		m=1 share=() label="1 × $WORKERS, no remote"
	fi
	mkdir -p "$r"
	git init -q --bare -b main "$r/remote.git"
	# One line per push that moved the job's state (the state ref or a
	# task's ref; the branch, logs and queue refs alone are not changes).
	printf '#!/bin/sh\ngrep -q " refs/harness/\\(state\\|tasks/\\)" && echo >>"%s/changes"\nexit 0\n' "$r" >"$r/remote.git/hooks/post-receive"
	chmod 755 "$r/remote.git/hooks/post-receive"
	: >"$r/changes"
	(
		machine_env "$1" 1
		mkdir "$r/m1" && cd "$r/m1"
		git init -q -b main && git remote add origin "$r/remote.git"
		harness init >/dev/null
		plan >harness-tasks.json
		harness adopt --yes >/dev/null
		echo bench >README.md && git add README.md && git commit -q -m baseline && git push -q origin main
	)
	for k in $(seq 2 "$m"); do git clone -q "$r/remote.git" "$r/m$k"; done
	local start end pids=()
	start=$(date +%s%N)
	for k in $(seq "$m"); do
		(
			machine_env "$1" "$k"
			cd "$r/m$k"
			# the first machine publishes; the others wait for the job
			if [ "$k" -gt 1 ]; then
				until git --git-dir="$r/remote.git" rev-parse -q --verify refs/harness/state >/dev/null; do sleep 0.05; done
			fi
			if [ ${#share[@]} -gt 0 ]; then share+=(--machine "m$k"); fi
			harness workers "$WORKERS" "${share[@]}" >"$r/sup-$k.log" 2>&1 || true
		) &
		pids+=($!)
	done
	wait "${pids[@]}"
	end=$(date +%s%N)
	local done lost changes
	done=$(grep -o '"status": *"completed"' "$r/m1/harness-tasks.json" | wc -l)
	lost=$(cat "$r"/m*/harness-progress.txt | grep -c 'LOCK remote push of `' || true)
	changes=$(wc -l <"$r/changes")
	sort -n "$r/latencies" | awk -v label="$label" -v tasks="$TASKS" -v done="$done" -v lost="$lost" -v changes="$changes" -v wall="$(( (end - start) / 1000000 ))" '
		{ lat[NR] = $1; t[NR] = $2; if (NR == 1 || $2 < first) first = $2; if ($2 > last) last = $2 }
		END {
			n = NR
			p50 = lat[int(n * 0.50) > 0 ? int(n * 0.50) : 1]
			p95 = lat[int(n * 0.95) > 0 ? int(n * 0.95) : 1]
			span = (last - first) / 1e9
			share = changes > 0 ? sprintf("%d (%.1f %%)", changes, 100 * lost / changes) : "-"
			rate = changes > 0 ? sprintf("%.1f", changes / (wall / 1000)) : "-"
			printf "| %s | %d | %d/%d | %d | %d | %d | %.1f | %s | %s | %d | %.1f |\n", label, n, done, tasks, p50, p95, lat[n], (span > 0 ? n / span : 0), share, rate, lost, wall / 1000
		}'
}

echo "| machines × workers | claims | tasks done | claim p50 ms | p95 ms | max ms | claims/s | changes (lost per change) | changes/s | pushes that lost a race | wall s |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
for m in $COUNTS; do
	say "$m machines × $WORKERS workers, $TASKS tasks (0: no remote)"
	run "$m"
done
