// Package review is the reviewer gate: after a task's validation command
// passed, a fresh Claude Code session that did not do the work reads the
// task, its acceptance criteria, the attempt's diff and the command's output,
// and answers PASS or FAIL with reasons.
//
// The reviewer runs headless (`claude -p`, the program HARNESS_CLAUDE names)
// with read-only tools and every hook switched off, so it can neither change
// the work nor be taken for a worker by the harness's own hooks. Only an
// explicit PASS passes: an answer without a verdict, a crash or a timeout
// is no verdict (Verdict.Outcome None), never a pass.
package review

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/tidwall/gjson"

	"github.com/harness-agent/harness/internal/validation"
)

// The outcomes of a review.
const (
	Pass = "PASS"
	Fail = "FAIL"
	None = "NONE" // no verdict: the reviewer did not run, crashed, timed out or did not answer in form
)

// EnvMarker is set in the reviewer's environment: the harness's hooks stay
// silent in a process that has it, should a hook run there at all.
const EnvMarker = "HARNESS_REVIEWER"

// Request is what the reviewer is shown.
type Request struct {
	TaskID, Title string
	Acceptance    []string
	Command       string // the validation command, which passed
	Output        string // the end of its output
	Base          string // started_at_commit
	Diff          string // the attempt's change since Base
}

// Verdict is the reviewer's answer and what it cost.
type Verdict struct {
	Outcome string // Pass, Fail or None
	// Reasons is the reviewer's reasons on one line ("; " between them);
	// for None, why there is no verdict.
	Reasons string
	Took    time.Duration
	Tokens  int64   // input, cache and output tokens, as the budget counts them
	CostUSD float64 // Claude Code's total_cost_usd
}

// Options say how the reviewer is run.
type Options struct {
	Program string // the Claude Code executable (Program())
	Dir     string // the worker's tree: the reviewer reads files there
	Timeout time.Duration
	Model   string // "": Claude Code's default
}

// Program is the Claude Code executable: $HARNESS_CLAUDE, else `claude`.
func Program() string {
	if p := strings.TrimSpace(os.Getenv("HARNESS_CLAUDE")); p != "" {
		return p
	}
	return "claude"
}

// Tools are the only tools the reviewer has: it reads, it does not write
// or run anything.
var Tools = []string{"Read", "Grep", "Glob"}

// denied are refused by name as well, should a tool list ever let one in.
var denied = []string{"Bash", "Write", "Edit", "MultiEdit", "NotebookEdit", "WebFetch", "WebSearch", "Task", "Agent"}

// Args is the reviewer's command line after the program.
func Args(model string) []string {
	tools := strings.Join(Tools, ",")
	args := []string{"-p", "--output-format", "json",
		"--tools", tools, "--allowedTools", tools, "--disallowedTools", strings.Join(denied, ","),
		"--permission-mode", "dontAsk", "--strict-mcp-config", "--no-session-persistence",
		// The harness's hooks are registered in the settings files (or a
		// plugin): none of them may see the reviewer as a worker.
		"--settings", `{"disableAllHooks":true}`}
	if model != "" {
		args = append(args, "--model", model)
	}
	return args
}

// Run asks the reviewer about req and returns its verdict. The prompt goes
// on standard input (a diff can be longer than a command line may be).
func Run(ctx context.Context, o Options, req Request) Verdict {
	ran := validation.Exec(ctx, validation.Spec{Dir: o.Dir, Args: append([]string{o.Program}, Args(o.Model)...),
		Env: Env(os.Environ()), Stdin: Prompt(req), Timeout: o.Timeout})
	v := Parse(ran.Stdout)
	v.Took = ran.Took
	switch {
	case ran.Err != nil && ctx.Err() != nil:
		v.Outcome, v.Reasons = None, "interrupted: "+ctx.Err().Error()
	case ran.Err != nil:
		v.Outcome, v.Reasons = None, fmt.Sprintf("%s could not run: %v", o.Program, ran.Err)
	case ran.TimedOut:
		v.Outcome, v.Reasons = None, fmt.Sprintf("no answer within %s (session_config.review.timeout_seconds)", o.Timeout)
	case ran.ExitCode != 0 && v.Outcome != None:
		// A verdict from a run that then failed is not trusted.
		v.Outcome, v.Reasons = None, fmt.Sprintf("%s exited %d after answering", o.Program, ran.ExitCode)
	case ran.ExitCode != 0:
		why := lastLine(ran.Stderr)
		if why == "" {
			why = v.Reasons
		}
		v.Reasons = fmt.Sprintf("%s exited %d: %s", o.Program, ran.ExitCode, why)
	}
	return v
}

// Env is the reviewer's environment: the caller's (its credentials, its
// HOME) without what marks a process as running inside the agent's Claude
// Code session (the harness would take the reviewer for that session, and
// for its worker), with EnvMarker set.
func Env(environ []string) []string {
	out := make([]string, 0, len(environ)+1)
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "CLAUDECODE", "CLAUDE_CODE_SESSION_ID", "CLAUDE_PID", "CLAUDE_CODE_ENTRYPOINT", "CLAUDE_ENV_FILE",
			"CLAUDE_PROJECT_DIR", "HARNESS_WORKER_ID", EnvMarker:
			continue
		}
		out = append(out, kv)
	}
	return append(out, EnvMarker+"=1")
}

// Parse reads what `claude -p --output-format json` printed: the answer
// (result), its cost (usage, total_cost_usd) and the verdict in the answer.
func Parse(stdout []byte) Verdict {
	text := strings.TrimSpace(string(stdout))
	if text == "" {
		return Verdict{Outcome: None, Reasons: "the reviewer printed nothing"}
	}
	if !gjson.Valid(text) || !gjson.Parse(text).IsObject() {
		return Verdict{Outcome: None, Reasons: "the reviewer's output is not Claude Code's JSON: " + clip(text, 200)}
	}
	doc := gjson.Parse(text)
	var v Verdict
	for _, k := range []string{"input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens"} {
		v.Tokens += doc.Get("usage." + k).Int()
	}
	v.CostUSD = doc.Get("total_cost_usd").Float()
	result := doc.Get("result")
	switch {
	case doc.Get("is_error").Bool():
		v.Outcome, v.Reasons = None, fmt.Sprintf("the reviewer's run failed (%s): %s", doc.Get("subtype").Str, clip(oneLine(result.Str), 300))
	case result.Type != gjson.String:
		v.Outcome, v.Reasons = None, "the reviewer's output has no result"
	default:
		v.Outcome, v.Reasons = Judge(result.Str)
	}
	return v
}

// verdictLine matches a verdict line, allowing the decoration a model adds
// (bold, a heading mark, backticks). Compiled on first use: the hooks link
// this package and must not pay for it at start.
var verdictLine = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile("(?i)^[\\s*#>_`]*verdict[*_`]*\\s*:\\s*[*_`]*\\s*(pass|fail)\\b")
})

// maxReasons bounds the reasons kept (error_log, the log line).
const maxReasons = 2000

// Judge reads the reviewer's answer: its last VERDICT line decides, the
// lines under REASONS: (or, without them, the rest of the answer) are the
// reasons. An answer without a verdict line is None.
func Judge(answer string) (outcome, reasons string) {
	lines := strings.Split(strings.ReplaceAll(answer, "\r\n", "\n"), "\n")
	at := -1
	for i := len(lines) - 1; i >= 0; i-- {
		if m := verdictLine().FindStringSubmatch(lines[i]); m != nil {
			at, outcome = i, strings.ToUpper(m[1])
			break
		}
	}
	if at < 0 {
		return None, "no VERDICT line in the reviewer's answer: " + clip(oneLine(answer), 300)
	}
	body := lines[:at]
	for i := len(body) - 1; i >= 0; i-- {
		if strings.EqualFold(strings.Trim(strings.TrimSpace(body[i]), "*#_` "), "reasons:") {
			body = body[i+1:]
			break
		}
	}
	var rs []string
	for _, l := range body {
		l = strings.TrimSpace(l)
		l = strings.TrimSpace(strings.TrimLeft(l, "-*•"))
		if l != "" {
			rs = append(rs, l)
		}
	}
	reasons = clip(strings.Join(rs, "; "), maxReasons)
	if reasons == "" && outcome == Fail {
		reasons = "the reviewer gave no reasons"
	}
	return outcome, reasons
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return clip(strings.TrimSpace(lines[len(lines)-1]), 300)
}

// clip cuts s to n bytes at a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8Start(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }
