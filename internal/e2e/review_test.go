package e2e

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/harness-agent/harness/internal/e2e/fakeapi"
)

// TestScenarioReview: a task whose command passes but whose reviewer,
// scripted to object, fails it with reasons. The reviewer is the real Claude
// Code, started by `harness validate` (HARNESS_CLAUDE) against the same
// scripted API: its requests arrive while the agent's Bash call waits on
// validate, so one script answers both in order. The objection is a
// [REVIEW] attempt, rolled back; the next claim shows the reasons; the task
// completes once the reviewer passes. The reviewer has only read tools and
// runs no hook: the harness never takes it for a worker.
func TestScenarioReview(t *testing.T) {
	t.Parallel()
	claude := RequireClaude(t)
	p := newProject(t)
	p.initState()
	id := p.add("Write the date parser", "--validate", "test -f parser.txt", "--review")

	const objection = "parser.txt holds no parser, only the word stub"
	var mu sync.Mutex
	var reviews []*fakeapi.Request
	reviewer := func(verdict string) fakeapi.Turn {
		return fakeapi.Func(func(r *fakeapi.Request) fakeapi.Turn {
			mu.Lock()
			reviews = append(reviews, r)
			mu.Unlock()
			return fakeapi.Text(verdict)
		})
	}
	api := fakeapi.New(t,
		fakeapi.Bash("harness claim "+id),
		fakeapi.Write(filepath.Join(p.Dir, "parser.txt"), "stub\n"),
		fakeapi.Bash("harness validate "+id),
		reviewer("I read parser.txt.\nREASONS:\n- "+objection+"\nVERDICT: FAIL"),
		fakeapi.Bash("harness claim "+id),
		fakeapi.Write(filepath.Join(p.Dir, "parser.txt"), "func parse(s string) (time.Time, error)\n"),
		fakeapi.Bash("harness validate "+id),
		reviewer("REASONS:\n- parser.txt declares the parser\nVERDICT: PASS"),
		fakeapi.Text("The parser is done."),
	)
	res := p.run(api, "Work on the harness tasks.", "HARNESS_CLAUDE="+claude)
	if res.ExitCode != 0 || res.IsError {
		t.Fatalf("want a clean end of session, got %v\nrequests:\n%s", res, api.Summary())
	}

	// The reviewer's requests: two, each its own fresh session, shown the
	// task and the attempt's diff, with read tools only.
	if len(reviews) != 2 {
		t.Fatalf("%d reviewer requests, want 2; requests:\n%s", len(reviews), api.Summary())
	}
	for i, r := range reviews {
		if !r.Contains("You review one task") || !r.Contains("Task "+id+": Write the date parser") {
			t.Errorf("review %d was not the reviewer's prompt (the script's order broke?):\n%s", i+1, clip(r.NewText()))
		}
		// DeferredToolPlaceholder (2.1.330) is no tool: "never call this
		// tool", sent to keep deferred tool loading on.
		tools := slices.DeleteFunc(r.ToolNames(), func(n string) bool { return n == "DeferredToolPlaceholder" })
		if !sameSet(tools, []string{"Read", "Grep", "Glob"}) {
			t.Errorf("review %d was offered tools %v, want only Read, Grep, Glob", i+1, r.ToolNames())
		}
		if r.SessionID() == "" || r.SessionID() == res.SessionID {
			t.Errorf("review %d ran in session %q, the agent's is %q: want a fresh one", i+1, r.SessionID(), res.SessionID)
		}
		if r.Contains(sessionStartText) {
			t.Errorf("review %d got the harness's SessionStart context: a hook ran in the reviewer", i+1)
		}
	}
	if !reviews[0].Contains("+stub") {
		t.Errorf("the first review was not shown the attempt's diff (+stub):\n%s", clip(reviews[0].NewText()))
	}
	if reviews[0].SessionID() == reviews[1].SessionID() {
		t.Errorf("both reviews ran in one session %q: each review must start fresh", reviews[0].SessionID())
	}

	// The objection: a [REVIEW] attempt in the agent's tool result, the
	// error_log and the log; the next claim carries the reasons.
	validates := toolResultsOf(api, "harness validate "+id)
	if len(validates) != 2 {
		t.Fatalf("%d validate results, want 2", len(validates))
	}
	if v := validates[0].Text; !strings.Contains(v, "ERROR ["+id+"] [REVIEW] "+objection) || !strings.Contains(v, "rolled back to") {
		t.Errorf("the first validate did not report the reviewer's objection and the rollback:\n%s", v)
	}
	claims := toolResultsOf(api, "harness claim "+id)
	if len(claims) != 2 || !strings.Contains(claims[1].Text, "the reviewer failed the last attempt") || !strings.Contains(claims[1].Text, "- "+objection) {
		t.Errorf("the second claim does not give the agent the reviewer's reasons:\n%v", claims)
	}
	if v := validates[1].Text; !strings.Contains(v, "REVIEW PASS "+id) || !strings.Contains(v, "Completed "+id) {
		t.Errorf("the second validate did not pass the review and complete:\n%s", v)
	}
	tk := p.task(id)
	if tk.Status != "completed" || tk.Attempts != 1 {
		t.Errorf("%s: status %q attempts %d, want completed after 1 failed attempt", id, tk.Status, tk.Attempts)
	}
	if len(tk.ErrorLog) != 1 || tk.ErrorLog[0] != "[REVIEW] "+objection {
		t.Errorf("error_log %q, want the reviewer's objection", tk.ErrorLog)
	}
	log := p.progressLog()
	for _, re := range []string{
		`\] REVIEW \[` + id + `\] FAIL \(.*\): ` + objection,
		`\] ERROR \[` + id + `\] \[REVIEW\] ` + objection,
		`\] ROLLBACK \[` + id + `\]`,
		`\] REVIEW \[` + id + `\] PASS \(.*\): parser.txt declares the parser`,
		`\] Completed \[` + id + `\]`,
	} {
		if !regexp.MustCompile(`(?m)` + re).MatchString(log) {
			t.Errorf("the log has no line matching %s:\n%s", re, log)
		}
	}
	if got := p.git("show", "HEAD:parser.txt"); !strings.Contains(got, "func parse") {
		t.Errorf("the commit holds %q, want the second attempt's parser", got)
	}

	// No hook ran in the reviewer's sessions (disableAllHooks), and its
	// spend is in the agent's session account.
	// (The session has ended: its account is among the ended ones.)
	for _, line := range strings.Split(strings.TrimSpace(readOr(p.HookLog, "")), "\n") {
		var e struct {
			SessionID string `json:"session_id"`
		}
		json.Unmarshal([]byte(line), &e)
		for _, r := range reviews {
			if e.SessionID == r.SessionID() {
				t.Errorf("a harness hook ran in the reviewer's session: %s", line)
			}
		}
	}
	var usage struct {
		Reviews      int   `json:"reviews"`
		ReviewTokens int64 `json:"review_tokens"`
	}
	if err := json.Unmarshal([]byte(readOr(filepath.Join(p.recordDir(), "sessions", "ended", "usage-"+res.SessionID+".json"), "")), &usage); err != nil {
		t.Fatal(err)
	}
	if usage.Reviews != 2 || usage.ReviewTokens <= 0 {
		t.Errorf("the session's budget account holds %d reviews, %d tokens: want both reviews counted", usage.Reviews, usage.ReviewTokens)
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
