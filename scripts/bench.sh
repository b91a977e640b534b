#!/usr/bin/env bash
# Times every harness hook as a whole process, the way Claude Code pays for
# it (spawn, read the payload, decide, exit), on generated states of 10, 1,000
# and 10,000 tasks with dependencies and a 50 MB progress log, and prints one
# markdown table: median and spread (hyperfine), peak memory (GNU time), the
# target, and whether it is met. docs/perf.md holds the latest table.
#
#   scripts/bench.sh                 # the full record (a few minutes)
#   BENCH_RUNS=10 scripts/bench.sh   # quicker, noisier
#
# Knobs: BENCH_RUNS (timed runs per row, default 40), BENCH_WARMUP (default
# 3), BENCH_LOG_MB (progress log size, default 50), BENCH_KEEP=1 keeps the
# scratch directory. Needs go, git, hyperfine and GNU time; installs the last
# two from Debian's packages when missing (root only), and falls back to a
# plain timing loop when hyperfine cannot be had.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${BENCH_RUNS:-40}
WARMUP=${BENCH_WARMUP:-3}
LOG_MB=${BENCH_LOG_MB:-50}

say() { echo "bench: $*" >&2; }

apt_install() {
	[ "$(id -u)" = 0 ] && command -v apt-get >/dev/null || return 1
	apt-get install -y "$@" >/dev/null 2>&1 || { apt-get update >/dev/null 2>&1 && apt-get install -y "$@" >/dev/null 2>&1; }
}
command -v hyperfine >/dev/null || { say "installing hyperfine"; apt_install hyperfine || true; }
[ -x /usr/bin/time ] || { say "installing time"; apt_install time || true; }
have_hyperfine=1
command -v hyperfine >/dev/null || { have_hyperfine=0; say "WARN hyperfine unavailable: using a plain timing loop (no shell-spawn correction)"; }
have_time=1
[ -x /usr/bin/time ] || { have_time=0; say "WARN GNU time unavailable: no peak memory column"; }

work=$(mktemp -d /tmp/harness-bench.XXXXXX)
if [ "${BENCH_KEEP:-}" = 1 ]; then
	say "scratch: $work"
else
	trap 'rm -rf "$work"' EXIT
fi
bin=$work/bin

say "building"
scripts/build.sh "$bin" >/dev/null

# benchtool: the state generator, the static hello baseline and the table,
# in Go so the numbers need nothing but the toolchain the project needs.
mkdir -p "$work/tool" "$work/hello"
cat >"$work/hello/main.go" <<'EOF'
package main

import "os"

func main() { os.Stdout.WriteString("hello\n") }
EOF
cat >"$work/tool/main.go" <<'EOF'
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
)

func main() {
	switch os.Args[1] {
	case "gen":
		n, _ := strconv.Atoi(os.Args[3])
		mb, _ := strconv.Atoi(os.Args[4])
		gen(os.Args[2], n, mb)
	case "loop":
		loop(os.Args[2:])
	case "table":
		table(os.Args[2])
	}
}

// gen writes harness-tasks.json with n tasks (60% completed, a few failed
// and retryable, the rest pending; each depends on one or two earlier
// tasks) and a progress log of mb megabytes into dir.
func gen(dir string, n, mb int) {
	type cp struct {
		Step        int    `json:"step"`
		Total       int    `json:"total"`
		Description string `json:"description"`
		Timestamp   string `json:"timestamp"`
	}
	type task struct {
		ID              string         `json:"id"`
		Title           string         `json:"title"`
		Status          string         `json:"status"`
		Priority        string         `json:"priority"`
		DependsOn       []string       `json:"depends_on"`
		Attempts        int            `json:"attempts"`
		MaxAttempts     int            `json:"max_attempts"`
		StartedAtCommit *string        `json:"started_at_commit"`
		Validation      map[string]any `json:"validation"`
		OnFailure       map[string]any `json:"on_failure"`
		ErrorLog        []string       `json:"error_log"`
		Checkpoints     []cp           `json:"checkpoints"`
		CompletedAt     *string        `json:"completed_at"`
		FailedAt        string         `json:"failed_at,omitempty"`
	}
	ts := "2025-07-01T10:00:00Z"
	base := "0000000000000000000000000000000000000000"
	tasks := make([]task, n)
	for i := range tasks {
		id := fmt.Sprintf("task-%03d", i+1)
		t := task{ID: id, Title: fmt.Sprintf("Implement part %d of the system", i+1), Status: "pending",
			Priority: []string{"P0", "P1", "P2"}[i%3], DependsOn: []string{}, MaxAttempts: 3,
			Validation: map[string]any{"command": "true", "timeout_seconds": 300},
			OnFailure:  map[string]any{"cleanup": nil}, ErrorLog: []string{}, Checkpoints: []cp{}}
		if i > 0 {
			t.DependsOn = append(t.DependsOn, fmt.Sprintf("task-%03d", i))
		}
		if i > 3 && i/2 != i-1 {
			t.DependsOn = append(t.DependsOn, fmt.Sprintf("task-%03d", i/2))
		}
		switch {
		case i < n*6/10:
			t.Status, t.Attempts, t.StartedAtCommit, t.CompletedAt = "completed", 1, &base, &ts
			t.Checkpoints = []cp{{1, 2, "first half done", ts}, {2, 2, "tests pass", ts}}
		case i < n*6/10+max(1, n/100):
			t.Status, t.Attempts, t.StartedAtCommit, t.FailedAt = "failed", 1, &base, ts
			t.ErrorLog = []string{"[TEST_FAIL] 3 tests failed in part " + strconv.Itoa(i+1)}
		}
		tasks[i] = t
	}
	doc := map[string]any{"version": 2, "created": ts,
		"session_config": map[string]any{"concurrency_mode": "exclusive", "max_tasks_per_session": 0, "max_sessions": 0},
		"tasks":          tasks, "session_count": 7, "last_session": ts}
	data, err := json.MarshalIndent(doc, "", "  ")
	check(err)
	check(os.WriteFile(dir+"/harness-tasks.json", append(data, '\n'), 0o644))

	f, err := os.Create(dir + "/harness-progress.txt")
	check(err)
	w := bufio.NewWriterSize(f, 1<<20)
	size, limit := 0, mb<<20
	for i := 0; size < limit; i++ {
		var line string
		id := fmt.Sprintf("task-%03d", i%max(n, 1)+1)
		switch i % 4 {
		case 0:
			line = fmt.Sprintf("[%s] [SESSION-%d] Starting [%s] Implement part %d of the system (base=abc1234)\n", ts, i/1000+1, id, i)
		case 1:
			line = fmt.Sprintf("[%s] [SESSION-%d] CHECKPOINT [%s] step=1/2 \"first half done\"\n", ts, i/1000+1, id)
		case 2:
			line = fmt.Sprintf("[%s] [SESSION-%d] Completed [%s] (commit def5678)\n", ts, i/1000+1, id)
		default:
			line = fmt.Sprintf("[%s] [SESSION-%d] STATS tasks_total=%d completed=%d failed=0 pending=0 blocked=0 attempts_total=%d checkpoints=%d\n", ts, i/1000+1, n, i%n, i, i)
		}
		w.WriteString(line)
		size += len(line)
	}
	check(w.Flush())
	check(f.Close())
}

// loop is the fallback timer: runs PREPARE then sh -c CMD, RUNS times, and
// writes the times in hyperfine's JSON shape.
func loop(args []string) {
	out, runs, prepare, cmd := args[0], atoi(args[1]), args[2], args[3]
	var times []float64
	for i := 0; i < runs; i++ {
		if prepare != "" {
			run(prepare)
		}
		start := time.Now()
		run(cmd)
		times = append(times, time.Since(start).Seconds())
	}
	data, _ := json.Marshal(map[string]any{"results": []any{map[string]any{"command": cmd, "times": times}}})
	check(os.WriteFile(out, data, 0o644))
}

func run(cmd string) {
	p, err := os.StartProcess("/bin/sh", []string{"sh", "-c", cmd}, &os.ProcAttr{Files: []*os.File{nil, nil, os.Stderr}})
	check(err)
	p.Wait()
}

// table reads the rows file (hook|state|target|json|mem per line) and prints
// the markdown table.
func table(rows string) {
	data, err := os.ReadFile(rows)
	check(err)
	var baseline, git float64
	fmt.Println("| hook | call | state | median | × static | p25–p75 | min | peak RSS | target | verdict |")
	fmt.Println("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | --- | --- |")
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.Split(line, "|")
		hook, call, st, target, js, mem := f[0], f[1], f[2], f[3], f[4], f[5]
		var res struct {
			Results []struct {
				Times []float64 `json:"times"`
			} `json:"results"`
		}
		raw, err := os.ReadFile(js)
		check(err)
		check(json.Unmarshal(raw, &res))
		ts := millis(res.Results[len(res.Results)-1].Times)
		med, p25, p75 := q(ts, 0.5), q(ts, 0.25), q(ts, 0.75)
		// A row timed beside the static binary is judged against that
		// timing; the others against the baseline row.
		static := baseline
		if len(res.Results) == 2 {
			static = q(millis(res.Results[0].Times), 0.5)
		}
		rss := "—"
		if kb, err := strconv.Atoi(strings.TrimSpace(mem)); err == nil {
			rss = fmt.Sprintf("%.1f MB", float64(kb)/1024)
		}
		verdict, goal := "—", "—"
		switch target {
		case "baseline":
			baseline = med
			goal = "(reference)"
		case "git":
			git = med
			goal = "(reference: what session-start runs)"
		case "≈baseline":
			limit := static + 1
			goal = fmt.Sprintf("≈ static binary start (≤ %.2f ms)", limit)
			verdict = judge(med, limit)
		case "":
		default:
			// Conditions joined by ";": "≤5" (ms), "≤1.5x" (times the
			// static binary), "≤3x+git" (times the static binary, plus
			// the git processes the hook runs). All must hold.
			var goals, missed []string
			for _, c := range strings.Split(target, ";") {
				num, unit, _ := strings.Cut(strings.TrimPrefix(c, "≤"), "x")
				k, _ := strconv.ParseFloat(num, 64)
				limit, text := k, fmt.Sprintf("≤ %g ms", k)
				if strings.Contains(c, "x") {
					limit, text = k*static, fmt.Sprintf("≤ %g× static", k)
					if unit == "+git" {
						limit += git
						text += " + git"
					}
					text += fmt.Sprintf(" (%.2f ms)", limit)
				}
				goals = append(goals, text)
				if v := judge(med, limit); v != "met" {
					missed = append(missed, v)
				}
			}
			goal, verdict = strings.Join(goals, "; "), "met"
			if len(missed) > 0 {
				verdict = strings.Join(missed, "; ")
			}
		}
		ratio := "—"
		if static > 0 && target != "baseline" {
			ratio = fmt.Sprintf("%.1f×", med/static)
		}
		fmt.Printf("| %s | %s | %s | %.2f ms | %s | %.2f–%.2f | %.2f | %s | %s | %s |\n", hook, call, st, med, ratio, p25, p75, ts[0], rss, goal, verdict)
	}
}

// millis is the times in seconds as sorted milliseconds.
func millis(times []float64) []float64 {
	ts := make([]float64, len(times))
	for i, t := range times {
		ts[i] = t * 1000
	}
	sort.Float64s(ts)
	return ts
}

func judge(med, limit float64) string {
	if med <= limit {
		return "met"
	}
	return fmt.Sprintf("**MISSED** (+%.2f ms)", med-limit)
}

// q is the p-quantile of sorted xs (linear interpolation).
func q(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	pos := p * float64(len(xs)-1)
	i := int(pos)
	if i+1 >= len(xs) {
		return xs[i]
	}
	return xs[i] + (xs[i+1]-xs[i])*(pos-float64(i))
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchtool:", err)
		os.Exit(1)
	}
}
EOF
(cd "$work/tool" && go mod init benchtool >/dev/null 2>&1 && go build -o "$work/benchtool" .)
(cd "$work/hello" && go mod init hello >/dev/null 2>&1 && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$bin/hello" .)
tool=$work/benchtool

# The hooks see what they see under Claude Code: a session id, the Claude
# Code pid (this script: alive for the whole run, so it can hold the lock),
# the project dir, and a private lock directory. Nothing from an outer
# harness session may leak in.
unset HARNESS_STATE_ROOT HARNESS_WORKER_ID HARNESS_HOOK_LOG CLAUDECODE
export CLAUDE_CODE_SESSION_ID=bench-session CLAUDE_PID=$$

# state NAME TASKS LOG_MB: a git project with a generated state, activated.
state() {
	local name=$1 dir=$work/$1
	mkdir -p "$dir" "$work/locks-$name"
	(
		cd "$dir"
		git init -q -b main
		git -c user.email=b@b -c user.name=bench -c commit.gpgsign=false commit -q --allow-empty -m baseline
		echo "# bench" >README.md
		# The record of what the harness wrote lives with the state, so a
		# reset can restore both together.
		export HARNESS_RECORD_DIR="$work/records-$name" HARNESS_LOCK_DIR=$work/locks-$name
		env -u CLAUDE_CODE_SESSION_ID -u CLAUDE_PID "$bin/harness" init >/dev/null
		rm -f harness-init.sh
		"$tool" gen "$dir" "$2" "$3"
		# The generated files are the user's: the record starts from them
		# (else the first hook would find them changed and put back the
		# empty state init wrote).
		env -u CLAUDE_CODE_SESSION_ID -u CLAUDE_PID "$bin/harness" adopt --yes >/dev/null
		"$bin/harness" status >/dev/null ||
			{ echo "bench: the generated state does not load" >&2; exit 1; }
		grep -q '"id"' harness-tasks.json || { echo "bench: the generated tasks did not survive" >&2; exit 1; }
	)
	mkdir -p "$work/pristine-$name"
	cp -a "$work/records-$name" "$work/pristine-records-$name"
	# -p: the reset file keeps the mark the record has of it (size and
	# modification time), so it is the file the harness wrote, not a
	# stranger's copy (a row below times that case).
	cp -p "$dir/harness-tasks.json" "$work/pristine-$name/"
	if [ -f "$dir/harness-tasks.json.bak" ]; then cp -p "$dir/harness-tasks.json.bak" "$work/pristine-$name/"; fi
	stat -c %s "$dir/harness-progress.txt" >"$work/pristine-$name/logsize"
	# Payloads, as Claude Code sends them.
	local common="\"session_id\":\"bench-session\",\"transcript_path\":\"/dev/null\",\"cwd\":\"$dir\",\"permission_mode\":\"bypassPermissions\""
	echo "{$common,\"hook_event_name\":\"SessionStart\",\"source\":\"startup\"}" >"$work/$name-start.json"
	echo "{$common,\"hook_event_name\":\"SessionEnd\",\"reason\":\"other\"}" >"$work/$name-end.json"
	echo "{$common,\"hook_event_name\":\"Stop\",\"stop_hook_active\":false,\"last_assistant_message\":\"All done.\"}" >"$work/$name-stop.json"
	echo "{$common,\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Read\",\"tool_input\":{\"file_path\":\"$dir/README.md\"},\"tool_use_id\":\"toolu_1\"}" >"$work/$name-read.json"
	echo "{$common,\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"go test ./...\",\"description\":\"Run the tests\"},\"tool_use_id\":\"toolu_2\"}" >"$work/$name-bash.json"
	echo "{$common,\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Write\",\"tool_input\":{\"file_path\":\"$dir/notes.md\",\"content\":\"notes\\n\"},\"tool_use_id\":\"toolu_4\"}" >"$work/$name-write.json"
	echo "{$common,\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"go test ./... > test.log 2>&1\",\"description\":\"Run the tests\"},\"tool_use_id\":\"toolu_5\"}" >"$work/$name-bashw.json"
	echo "{$common,\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Edit\",\"tool_input\":{\"file_path\":\"$dir/harness-tasks.json\",\"old_string\":\"\\\"status\\\": \\\"pending\\\"\",\"new_string\":\"\\\"status\\\": \\\"completed\\\"\",\"replace_all\":false},\"tool_use_id\":\"toolu_3\"}" >"$work/$name-edit.json"
	echo "{$common,\"hook_event_name\":\"PostToolUse\",\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"go test ./...\",\"description\":\"Run the tests\"},\"tool_response\":{\"stdout\":\"ok\",\"stderr\":\"\",\"interrupted\":false},\"tool_use_id\":\"toolu_2\"}" >"$work/$name-post.json"
	# reset: the state as generated, no session, no lock, no runtime files.
	cat >"$work/reset-$name.sh" <<EOF
cp -p "$work/pristine-$name/harness-tasks.json" "$dir/harness-tasks.json"
truncate -s \$(cat "$work/pristine-$name/logsize") "$dir/harness-progress.txt"
rm -rf "$dir/.harness-runtime" "$dir/harness-tasks.json.bak" "$work/locks-$name"/*.lock "$work/records-$name"
if [ -f "$work/pristine-$name/harness-tasks.json.bak" ]; then cp -p "$work/pristine-$name/harness-tasks.json.bak" "$dir/"; fi
cp -a "$work/pristine-records-$name" "$work/records-$name"
touch "$dir/.harness-active"
EOF
}

# hook NAME STATE PAYLOAD: the command line that runs one hook.
hookcmd() { echo "CLAUDE_PROJECT_DIR=$work/$2 HARNESS_LOCK_DIR=$work/locks-$2 HARNESS_RECORD_DIR=$work/records-$2 exec $bin/harness-$1 <$work/$2-$3.json >/dev/null 2>&1"; }

rows=$work/rows
: >"$rows"
n=0
# measure HOOK CALL STATE TARGET CMD [PREPARE]
measure() {
	local hook=$1 call=$2 st=$3 target=$4 cmd=$5 prepare=${6:-}
	n=$((n + 1))
	local js=$work/r$n.json mem=""
	say "$hook $call ($st)"
	if [ $have_hyperfine = 1 ]; then
		local args=(--shell=sh --style=none --warmup "$WARMUP" --runs "$RUNS" --export-json "$js")
		case $target in
		*x* | ≈baseline)
			# A row judged against the static binary times it beside
			# itself, in the same hyperfine run, so a noisy minute on a
			# shared machine moves both: the ratio compares like with
			# like. (Its prepare, if any, is the hook's alone.)
			[ -n "$prepare" ] && args+=(--prepare true --prepare "$prepare")
			hyperfine "${args[@]}" "exec $bin/hello >/dev/null" "$cmd" >/dev/null
			;;
		*)
			[ -n "$prepare" ] && args+=(--prepare "$prepare")
			hyperfine "${args[@]}" "$cmd" >/dev/null
			;;
		esac
	else
		"$tool" loop "$js" "$RUNS" "$prepare" "$cmd"
	fi
	if [ $have_time = 1 ]; then
		local kb max=0
		for _ in 1 2 3 4 5; do
			[ -n "$prepare" ] && sh -c "$prepare"
			/usr/bin/time -f %M -o "$work/mem" sh -c "$cmd"
			kb=$(tail -1 "$work/mem")
			[ "$kb" -gt "$max" ] && max=$kb
		done
		mem=$max
	fi
	echo "$hook|$call|$st|$target|$js|$mem" >>"$rows"
}

say "generating states"
state s10 10 "$LOG_MB"
state s1k 1000 "$LOG_MB"
state s10k 10000 "$LOG_MB"
# The inactive project: the largest state, no .harness-active.
state off 10000 "$LOG_MB"
rm -f "$work/off/.harness-active"
sed -i '/harness-active/d' "$work/reset-off.sh"

measure "static hello (baseline)" "—" "—" baseline "exec $bin/hello >/dev/null"
for h in session-start:start stop:stop pre-tool-use:bash; do
	measure "${h%%:*} (inactive)" "${h#*:}" "10,000 tasks" "≈baseline" "$(hookcmd "${h%%:*}" off "${h#*:}")"
done

# The git processes session-start runs for its context (the last commit,
# the work tree's status), timed alone: the ratio targets add them.
measure "git log -1 + git status" "—" "the bench's git project" git "git -C $work/s1k log -1 '--format=%h %s' >/dev/null && git -C $work/s1k status --porcelain=v1 -z --untracked-files=all >/dev/null"

label() { case $1 in s10) echo "10 tasks + ${LOG_MB} MB log" ;; s1k) echo "1,000 tasks + ${LOG_MB} MB log" ;; s10k) echo "10,000 tasks + ${LOG_MB} MB log" ;; esac; }
# The targets: the absolute ones of the first record, and the ratios to
# the static binary (plus, for session-start, the git processes it runs).
limit() { case $1 in s10 | s1k) echo "≤5" ;; s10k) echo "≤20" ;; esac; }
startLimit() { case $1 in s10 | s1k) echo "≤5;≤3x+git" ;; s10k) echo "≤20;≤10x+git" ;; esac; }
for st in s10 s1k s10k; do
	dir=$work/$st
	runtime=$dir/.harness-runtime/session-bench-session.json
	# A session in progress: session-start ran (lock held by this
	# script's pid, session counted), the caches are warm.
	sh "$work/reset-$st.sh"
	sh -c "$(hookcmd session-start "$st" start)"
	[ -f "$runtime" ] || say "WARN session-start wrote no runtime file ($runtime)"
	# One turn ended already (its stop blocked): the valve and the stuck
	# count hold their first marks, as through most of a session.
	sh -c "$(hookcmd stop "$st" stop)"
	cp "$runtime" "$work/$st-runtime.json" 2>/dev/null || : >"$work/$st-runtime.json"
	# Stop: every run is the next turn end, without progress (the
	# session's runtime file restored: the valve never opens), with tasks
	# pending: a block.
	measure stop "tasks pending: block" "$(label $st)" "$(limit $st);≤1.5x" "$(hookcmd stop "$st" stop)" \
		"cp $work/$st-runtime.json $runtime"
	# PreToolUse: every run finds the doom-loop ring of a session in
	# progress, twenty other calls (identical calls would otherwise be
	# counted as a loop), and appends to it as every call does.
	ring=$dir/.harness-runtime/calls-bench-session
	for i in $(seq 1000 1019); do printf '%016x\n' "$i"; done >"$work/$st-ring"
	for call in read:Read bash:"Bash go test ./..." write:"Write notes.md" bashw:"Bash go test ./... > test.log"; do
		measure pre-tool-use "${call#*:}" "$(label $st)" "≤3;≤1.5x" "$(hookcmd pre-tool-use "$st" "${call%%:*}")" \
			"cp $work/$st-ring $ring"
	done
	measure pre-tool-use "Edit harness-tasks.json (deny)" "$(label $st)" "" "$(hookcmd pre-tool-use "$st" edit)" \
		"cp $work/$st-ring $ring"
	# PostToolUse: after every tool call, the integrity check of the
	# harness files (nothing changed here). No target of its own; reported.
	measure post-tool-use "Bash go test ./... (after it ran)" "$(label $st)" "" "$(hookcmd post-tool-use "$st" post)"
	# SessionStart writes the state: every run starts from the pristine
	# state (no lock, no .harness-runtime, the log at its generated size):
	# the record says the harness wrote the file and holds the summary's
	# copy.
	measure session-start "startup, .harness-runtime removed" "$(label $st)" "$(startLimit $st)" "$(hookcmd session-start "$st" start)" \
		"sh $work/reset-$st.sh"
	# No summary anywhere (a record older than the summary's copy): the
	# file is skimmed.
	measure session-start "startup, no summary anywhere" "$(label $st)" "$(startLimit $st)" "$(hookcmd session-start "$st" start)" \
		"sh $work/reset-$st.sh && rm -f $work/records-$st/*/summary.json"
	# After the tasks file was touched (a new modification time, the same
	# text: an editor saving what it opened, a checkout of the same
	# commit): its bytes are compared with the record's copy, and the
	# summary made for them serves.
	measure session-start "startup, file touched (same text)" "$(label $st)" "$(startLimit $st)" "$(hookcmd session-start "$st" start)" \
		"sh $work/reset-$st.sh && touch $dir/harness-tasks.json"
	# After another writer changed the tasks file (a hand edit, a git
	# checkout of other text; here a space appended): its text must be
	# checked whole before it is used.
	measure session-start "startup, file changed by another writer" "$(label $st)" "" "$(hookcmd session-start "$st" start)" \
		"sh $work/reset-$st.sh && printf ' ' >>$dir/harness-tasks.json"
	# Between tasks: the previous session ended cleanly, so the hooks'
	# cache holds the summary of the file and nothing is in progress: the
	# count is the one change, made without parsing the tasks.
	measure session-start "startup, between tasks (cache warm)" "$(label $st)" "$(startLimit $st)" "$(hookcmd session-start "$st" start)" \
		"sh $work/reset-$st.sh && sh -c '$(hookcmd session-start "$st" start)' && sh -c '$(hookcmd session-end "$st" end)'"
done
# What a user's project has after `harness init`: the template
# harness-init.sh, run at every session start.
(cd "$work/s10" && env -u CLAUDE_CODE_SESSION_ID -u CLAUDE_PID HARNESS_RECORD_DIR=$work/records-s10 HARNESS_LOCK_DIR=$work/locks-s10 "$bin/harness" init >/dev/null && cp -a "$work/records-s10/." "$work/pristine-records-s10/")
measure session-start "startup, with init's harness-init.sh template" "$(label s10)" "" \
	"$(hookcmd session-start s10 start)" "sh $work/reset-s10.sh"

cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
echo "Machine: $(nproc) cores, ${cpu:-unknown CPU}, $(go version | cut -d' ' -f3), $(uname -sr); $(date -u +%Y-%m-%dT%H:%MZ); load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)."
echo "Timer: $([ $have_hyperfine = 1 ] && echo "hyperfine $(hyperfine --version | cut -d' ' -f2), $RUNS runs + $WARMUP warm-up per row, shell spawn subtracted" || echo "plain loop, $RUNS runs per row, shell spawn included"); peak RSS: GNU time %M, max of 5 runs."
echo
"$tool" table "$rows"
