#!/usr/bin/env bash
# Times the whole harness-pre-tool-use process on a call that is checkpointed
# (Bash `go test ./...`, a different run filter each time so the doom loop
# never counts it) on generated projects of N small files with nothing
# changed between calls, and prints p50 and p95 in ms (docs/perf.md, "Shadow
# checkpoints"). A Read call on the same project is the reference: the same
# process without a checkpoint.
#
#   scripts/bench-shadow.sh [N ...]     # default: 100 10000
#   RUNS=40 scripts/bench-shadow.sh 100000
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-40}
sizes=("${@:-100 10000}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
scripts/build.sh "$work/bin" >/dev/null
export PATH="$work/bin:$PATH" HOME="$work/home" HARNESS_LOCK_DIR="$work/locks" GIT_CONFIG_NOSYSTEM=1
export GIT_AUTHOR_NAME=b GIT_AUTHOR_EMAIL=b@b GIT_COMMITTER_NAME=b GIT_COMMITTER_EMAIL=b@b
mkdir -p "$HOME" "$HARNESS_LOCK_DIR"

# pct FILE P: the P-th percentile of the numbers in FILE, one a line.
pct() { sort -n "$1" | awk -v p="$2" '{a[NR]=$1} END {i=int(NR*p/100); if (i<1) i=1; printf "%.1f", a[i]}'; }

for n in ${sizes[*]}; do
	proj="$work/p$n"
	mkdir -p "$proj"
	(
		cd "$proj"
		git init -q
		dirs=$(( n / 100 > 0 ? n / 100 : 1 ))
		for ((d = 0; d < dirs; d++)); do mkdir -p "d$d"; done
		for ((i = 0; i < n; i++)); do printf 'package p\n// file %d\n' "$i" >"d$((i % dirs))/f$i.go"; done
		git add -A && git commit -q -m files
		harness init >/dev/null
	)
	export CLAUDE_PROJECT_DIR="$proj"
	for tool in Read Bash; do
		: >"$work/t"
		for ((r = 0; r <= runs; r++)); do
			if [ "$tool" = Read ]; then
				input='{"file_path":"d0/f0.go"}'
			else
				input="{\"command\":\"go test ./... -run X$r\"}"
			fi
			payload="{\"session_id\":\"bench\",\"cwd\":\"$proj\",\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"$tool\",\"tool_input\":$input}"
			start=$(date +%s%N)
			harness-pre-tool-use <<<"$payload" >/dev/null
			end=$(date +%s%N)
			# the first Bash call is the first checkpoint: every file hashed
			# once; past shadow.AddBudget it goes on in the background, and
			# later calls make it a checkpoint once it is done
			if [ "$r" = 0 ]; then
				[ "$tool" = Bash ] || continue
				w=0
				until git --git-dir="$(ls -d "$HOME"/.local/state/harness/records/*/shadow)" for-each-ref refs/shadow | grep -q .; do
					sleep 1
					w=$((w + 1)) # a new command each time: the doom loop denies repeats
					harness-pre-tool-use <<<"${payload/X0/Xwait$w}" >/dev/null
				done
				end=$(date +%s%N)
				echo "$n files: first checkpoint $(( (end - start) / 1000000 )) ms"
				continue
			fi
			echo "$(( (end - start) / 1000 ))" | awk '{printf "%.3f\n", $1/1000}' >>"$work/t"
		done
		echo "$n files: pre-tool-use $tool: p50 $(pct "$work/t" 50) ms, p95 $(pct "$work/t" 95) ms ($runs runs)"
	done
	shadow=$(ls -d "$HOME"/.local/state/harness/records/*/shadow 2>/dev/null | head -1)
	[ -n "$shadow" ] && echo "$n files: history $(du -sh "$shadow" | cut -f1), $(git --git-dir="$shadow" for-each-ref refs/shadow | wc -l) checkpoint(s)"
	rm -rf "$HOME"/.local/state/harness/records/*
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
