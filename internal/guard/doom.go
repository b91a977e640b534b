package guard

import (
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/harness-agent/harness/internal/hook"
	"github.com/harness-agent/harness/internal/statecache"
)

const ruleLoop = "doom-loop"

// The doom-loop window: the last calls remembered, and the counts of one
// identical call that earn a nudge and a denial.
const (
	loopWindow = 20
	loopNudge  = 3
	loopDeny   = 5
	resetMark  = "-"
)

// doomLoop records this call's fingerprint in the session's ring and judges
// the repetition. A new, never-seen edit is progress: it resets the counts,
// so re-running the same test between different fixes is not a loop.
func (c *call) doomLoop() (hook.Decision, bool) {
	session := c.p.Session()
	if session == "" || c.tool == "" {
		return hook.Decision{}, false
	}
	path := filepath.Join(c.dir, statecache.RuntimeDir, "calls-"+safeName(session))
	ring := readRing(path)
	fp := fingerprint(c.tool, c.p.Get("tool_input"))
	if isEdit(c.tool) && !contains(ring, fp) {
		ring = append(ring, resetMark)
	}
	ring = append(ring, fp)
	if len(ring) > loopWindow {
		ring = ring[len(ring)-loopWindow:]
	}
	writeRing(path, ring)

	since := ring
	for i := len(ring) - 1; i >= 0; i-- {
		if ring[i] == resetMark {
			since = ring[i+1:]
			break
		}
	}
	n := count(since, fp)
	// Alternation is judged before repetition: by the 6th call of an A/B
	// swing each action has been seen 3 times, and the more specific nudge
	// is the useful one.
	switch {
	case n >= loopDeny:
		return deny(ruleLoop, fmt.Sprintf("this exact %s call is the %s in your last %d calls with no new edit in between; it is not run again.", c.tool, ordinal(n), loopWindow),
			"step back: re-read the failing output, question the assumption behind the approach, and try something different (or record the blocker with `harness fail ID --category TASK_EXEC \"…\"`)."), true
	case alternating(since):
		c.notes = append(c.notes, fmt.Sprintf("harness [%s]: your last 6 calls alternate between the same two actions. Step back, re-read the failing output, try something different; the %s identical call will be denied.", ruleLoop, ordinal(loopDeny)))
	case n >= loopNudge:
		c.notes = append(c.notes, fmt.Sprintf("harness [%s]: you are repeating yourself (this exact %s call %d times recently). Step back, re-read the failing output, try something different; the %s identical call will be denied.",
			ruleLoop, c.tool, n, ordinal(loopDeny)))
	}
	return hook.Decision{}, false
}

func isEdit(tool string) bool {
	return tool == "Write" || tool == "Edit" || tool == "MultiEdit" || tool == "NotebookEdit"
}

// alternating reports strict A/B alternation over the last 6 calls.
func alternating(ring []string) bool {
	if len(ring) < 6 {
		return false
	}
	last := ring[len(ring)-6:]
	a, b := last[0], last[1]
	if a == b {
		return false
	}
	for i, fp := range last {
		if (i%2 == 0 && fp != a) || (i%2 == 1 && fp != b) {
			return false
		}
	}
	return true
}

// fingerprint identifies a call by what it does. A Bash call is its command
// alone: Claude Code sends a fresh description (and maybe a timeout or
// run_in_background) with every call, and those change nothing about what
// runs. Any other tool's input is hashed in a canonical form (object keys
// sorted, whitespace and escapes normalised), so the same input written
// differently is the same call.
func fingerprint(tool string, input gjson.Result) string {
	h := fnv.New64a()
	h.Write([]byte(tool))
	h.Write([]byte{0})
	if tool == "Bash" && input.IsObject() {
		h.Write([]byte(strings.TrimSpace(input.Get("command").String())))
	} else {
		canonical(h, input, 0)
	}
	return fmt.Sprintf("%016x", h.Sum64())
}

// maxCanonicalDepth bounds the recursion on hostile input; what is deeper
// is hashed as written.
const maxCanonicalDepth = 64

// canonical writes an unambiguous encoding of v to w: a type tag, then
// length-prefixed strings, numbers as written, and object members in key
// order.
func canonical(w io.Writer, v gjson.Result, depth int) {
	if depth > maxCanonicalDepth {
		writeStr(w, 'r', v.Raw)
		return
	}
	switch {
	case v.IsObject():
		type member struct {
			key string
			val gjson.Result
		}
		var ms []member
		v.ForEach(func(k, val gjson.Result) bool {
			ms = append(ms, member{k.String(), val})
			return true
		})
		sort.SliceStable(ms, func(i, j int) bool { return ms[i].key < ms[j].key })
		fmt.Fprintf(w, "{%d", len(ms))
		for _, m := range ms {
			writeStr(w, 'k', m.key)
			canonical(w, m.val, depth+1)
		}
	case v.IsArray():
		arr := v.Array()
		fmt.Fprintf(w, "[%d", len(arr))
		for _, e := range arr {
			canonical(w, e, depth+1)
		}
	case v.Type == gjson.String:
		writeStr(w, 's', v.Str)
	case v.Type == gjson.Number:
		writeStr(w, 'n', strings.TrimSpace(v.Raw))
	case v.Type == gjson.True:
		w.Write([]byte{'t'})
	case v.Type == gjson.False:
		w.Write([]byte{'f'})
	default:
		writeStr(w, 'z', strings.TrimSpace(v.Raw)) // null, or missing
	}
}

func writeStr(w io.Writer, tag byte, s string) {
	fmt.Fprintf(w, "%c%d:", tag, len(s))
	io.WriteString(w, s)
}

func readRing(path string) []string {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	return strings.Fields(string(data))
}

func writeRing(path string, ring []string) {
	data := []byte(strings.Join(ring, "\n") + "\n")
	if err := os.WriteFile(path, data, 0o644); os.IsNotExist(err) {
		os.MkdirAll(filepath.Dir(path), 0o755)
		os.WriteFile(path, data, 0o644)
	}
}

func contains(ring []string, fp string) bool { return count(ring, fp) > 0 }

func count(ring []string, fp string) int {
	n := 0
	for _, x := range ring {
		if x == fp {
			n++
		}
	}
	return n
}

func ordinal(n int) string {
	switch n {
	case 1:
		return "1st"
	case 2:
		return "2nd"
	case 3:
		return "3rd"
	}
	return fmt.Sprintf("%dth", n)
}

// safeName keeps a session id usable as a file name.
func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r
		}
		return '_'
	}, s)
}
