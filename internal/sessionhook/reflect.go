package sessionhook

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/tidwall/gjson"

	"github.com/harness-agent/harness/internal/hook"
	"github.com/harness-agent/harness/internal/jsondepth"
	"github.com/harness-agent/harness/internal/safefile"
)

// ReflectDone is what the model writes on its own line to end the
// self-reflection rounds early: a demand it can discharge, so an honest "all
// good" costs one round, not all of them.
const ReflectDone = "REFLECT-DONE"

// reflectLimit returns the number of self-reflection rounds:
// HARNESS_REFLECT_ITERATIONS, else REFLECT_MAX_ITERATIONS (the reference
// hooks' name), else session_config.max_reflect_iterations; 0 disables. It
// stays below Claude Code's own Stop block cap.
func reflectLimit(configured int) int {
	n := configured
	for _, name := range []string{"HARNESS_REFLECT_ITERATIONS", "REFLECT_MAX_ITERATIONS"} {
		if v, err := strconv.Atoi(strings.TrimSpace(os.Getenv(name))); err == nil {
			n = v
			break
		}
	}
	if c := blockCap(); c > 0 && n > c-1 {
		n = c - 1
	}
	return max(n, 0)
}

// reflection runs the self-reflection rounds of a session that finished the
// run (rt.Finished): up to rt.ReflectLimit blocks with the reflection prompt,
// then the stop is allowed. Anything else, a finished run from an earlier
// session included, is Silent.
func reflection(c *call, rt *Runtime) hook.Decision {
	if rt == nil || !rt.Finished || rt.ReflectDone {
		return hook.Decision{}
	}
	last := c.p.Str("last_assistant_message")
	if rt.ReflectRounds >= rt.ReflectLimit || rt.ReflectRounds > 0 && saidDone(last) {
		rt.ReflectDone = true
		rt.save(c.Record())
		return hook.Decision{}
	}
	rt.ReflectRounds++
	rt.save(c.Record())
	return hook.Decision{Kind: hook.Block, Reason: reflectPrompt(rt.ReflectRounds, rt.ReflectLimit, rt.Ending, originalRequest(c.p.Str("transcript_path")), last)}
}

// saidDone reports whether msg has ReflectDone on a line of its own
// (markdown emphasis and punctuation around it allowed).
func saidDone(msg string) bool {
	for _, line := range strings.Split(msg, "\n") {
		if strings.TrimFunc(line, notWord) == ReflectDone {
			return true
		}
	}
	return false
}

func notWord(r rune) bool {
	return !(r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
}

// reflectPrompt is the text of reflection round i of n; ending says how the
// run ended (see ending).
func reflectPrompt(i, n int, ending, request, last string) string {
	if ending == "" {
		ending = "the harness run is over"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Self-reflect %d/%d: %s and the harness is deactivated. Before you finish, check the work against what was asked.\n", i, n, ending)
	switch {
	case request != "":
		fmt.Fprintf(&b, "Original request:\n%s\n", quote(clipText(request, 2000)))
	case last != "":
		fmt.Fprintf(&b, "Your closing message so far:\n%s\n", quote(clipText(last, 1500)))
	}
	b.WriteString(`Checklist:
1. Each point of the request is done, and a test or a command you ran shows it (not your memory of it).
2. Edge cases, error paths and hostile input are handled and tested.
3. The change reads well: no duplicate, dead or debug code; formatters and linters are clean.
4. Docs and README say what the code now does.
5. Everything is committed; ` + "`git status`" + ` is clean.
Found something? Fix it now, then this check comes back.
Nothing left? Reply with a short summary of what was done and end it with the line ` + ReflectDone + `.`)
	return b.String()
}

// quote prefixes each line with "> ".
func quote(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i, l := range lines {
		lines[i] = "> " + l
	}
	return strings.Join(lines, "\n")
}

// clipText shortens multi-line text to about n bytes, keeping lines.
func clipText(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}

// Transcript reading bounds: the first user message is near the top.
const (
	transcriptBytes = 4 << 20
	transcriptLines = 2000
)

// commandTag finds a slash command's name and arguments in a transcript
// entry. Compiled on first use: every hook process pays for package
// initialisation, few need this.
var commandTag = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`<command-(name|args)>([^<]*)</command-(name|args)>`)
})

// originalRequest returns the first thing the user asked in the session's
// transcript (JSON lines), "" when it cannot be found.
func originalRequest(path string) string {
	f, _, ok := openTranscript(path)
	if !ok {
		return ""
	}
	defer f.Close()
	r := bufio.NewReader(io.LimitReader(f, transcriptBytes))
	for i := 0; i < transcriptLines; i++ {
		line, err := r.ReadBytes('\n')
		if text := userText(line); text != "" {
			return text
		}
		if err != nil {
			return ""
		}
	}
	return ""
}

// askOnly reports whether a /harness sub-command asks about the job or
// sets it up without asking for work on it (the skill's `status`, `add`,
// `init`, `help`): a turn that answered one of them may end while work
// remains.
func askOnly(sub string) bool {
	switch sub {
	case "status", "add", "init", "help":
		return true
	}
	return false
}

// lastPromptBytes bounds how much of the transcript's end askedOnly reads.
const lastPromptBytes = 256 << 10

// askedOnlyFromTranscript returns the /harness sub-command of the turn's
// prompt when it is one of askOnly, "" otherwise (another prompt, or none
// found in the last lastPromptBytes of the transcript). It reads the
// transcript from the end: the prompt that started the turn is the last
// entry a human typed, when Claude Code has written it yet.
func askedOnlyFromTranscript(path string) string {
	f, size, ok := openTranscript(path)
	if !ok {
		return ""
	}
	defer f.Close()
	from := max(size-lastPromptBytes, 0)
	buf := make([]byte, size-from)
	n, _ := f.ReadAt(buf, from)
	lines := bytes.Split(buf[:n], []byte("\n"))
	if from > 0 {
		lines = lines[1:] // the first line is cut
	}
	for i := len(lines) - 1; i >= 0; i-- {
		if text := userText(lines[i]); text != "" {
			return askOnlyCommand(text)
		}
	}
	return ""
}

// openTranscript opens the transcript at path and returns its size; ok is
// false when there is none, or it is not a regular file (never a FIFO or a
// device: it could hang the hook).
func openTranscript(path string) (f *os.File, size int64, ok bool) {
	if path == "" {
		return nil, 0, false
	}
	f, err := safefile.Open(path)
	if err != nil {
		return nil, 0, false
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, false
	}
	return f, fi.Size(), true
}

// userText returns the text a human typed in one transcript entry, "" for
// anything else (tool results, meta entries, other roles).
func userText(line []byte) string {
	if !jsondepth.Valid(line) {
		return ""
	}
	e := gjson.ParseBytes(line)
	if e.Get("type").Str != "user" || e.Get("isMeta").Bool() || e.Get("isCompactSummary").Bool() {
		return ""
	}
	content := e.Get("message.content")
	var text string
	switch {
	case content.Type == gjson.String:
		text = content.Str
	case content.IsArray():
		var parts []string
		for _, block := range content.Array() {
			switch block.Get("type").Str {
			case "text":
				parts = append(parts, block.Get("text").Str)
			case "tool_result":
				return ""
			}
		}
		text = strings.Join(parts, "\n")
	}
	text = strings.TrimSpace(text)
	if strings.HasPrefix(text, "<local-command") || strings.HasPrefix(text, "Caveat:") {
		return ""
	}
	if !strings.Contains(text, "<command-") {
		return text
	}
	if m := commandTag().FindAllStringSubmatch(text, -1); m != nil {
		var cmd []string
		for _, g := range m {
			if s := strings.TrimSpace(g[2]); s != "" {
				cmd = append(cmd, s)
			}
		}
		text = strings.Join(cmd, " ")
	}
	return text
}
