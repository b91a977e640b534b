package guard

import (
	"bytes"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/harness-agent/harness/internal/atomicfile"
	"github.com/harness-agent/harness/internal/hook"
	"github.com/harness-agent/harness/internal/safefile"
	"github.com/harness-agent/harness/internal/state"
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
	path := filepath.Join(c.Root, statecache.RuntimeDir, "calls-"+safeName(session))
	ring := readRing(path)
	fp := fingerprint(c.tool, c.p.Get("tool_input"))
	var add []string
	// The job moving is progress too: a verb recorded something in the
	// tasks file since this session's last call (a claim, a checkpoint, a
	// completion), so `harness claim` after each completed task, the cycle
	// with every edit made through Bash, is not a loop. The ring keeps a
	// mark of the file's stat when it changes: one stat per call.
	mark := c.stateMark()
	last := lastMark(ring)
	if isEdit(c.tool) && !contains(ring, fp) || mark != "" && last != "" && mark != last {
		add = append(add, resetMark)
	}
	if mark != "" && mark != last {
		add = append(add, mark)
	}
	add = append(add, fp)
	ring = append(ring, add...)
	if len(ring) > loopWindow {
		ring = ring[len(ring)-loopWindow:]
	}
	saveRing(path, add, ring)

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

// stateMark is the ring's entry for the tasks file as it is now (its size
// and modification time), "" when it cannot be read.
func (c *call) stateMark() string {
	fi, err := os.Stat(filepath.Join(c.Root, state.FileName))
	if err != nil {
		return ""
	}
	return fmt.Sprintf("=%d:%d", fi.Size(), fi.ModTime().UnixNano())
}

// lastMark is the newest state mark in the ring, "" when none is left in
// its window.
func lastMark(ring []string) string {
	for i := len(ring) - 1; i >= 0; i-- {
		if strings.HasPrefix(ring[i], "=") {
			return ring[i]
		}
	}
	return ""
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

// The ring file is append-only: a call adds its lines with one write and
// reads the file's tail. Rewriting it at every call, truncated in place or
// as a new file renamed over it, costs a tool call about 100 µs on ext4
// (the truncation or the new inode), more than the rest of the check;
// an append costs a few. Once the file reaches ringCompactAt bytes it is
// rewritten with its window alone.
const (
	// ringTail is what readRing reads: a window of fingerprints (17 bytes
	// a line) with a reset mark before each, and to spare.
	ringTail      = 2048
	ringCompactAt = 32 << 10
)

// readRing returns the window of the ring at path (its last loopWindow
// lines), nil when there is none.
func readRing(path string) []string {
	f, err := safefile.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil
	}
	at := max(fi.Size()-ringTail, 0)
	buf := make([]byte, fi.Size()-at)
	n, _ := f.ReadAt(buf, at)
	buf = buf[:n]
	if at > 0 {
		// The first line read may be the end of one: drop it.
		if i := bytes.IndexByte(buf, '\n'); i >= 0 {
			buf = buf[i+1:]
		}
	}
	ring := strings.Fields(string(buf))
	return ring[max(len(ring)-loopWindow, 0):]
}

// saveRing appends the lines add to the ring at path; ring is the window
// with them, which replaces the file once it has grown to ringCompactAt.
func saveRing(path string, add, ring []string) {
	data := []byte(strings.Join(add, "\n") + "\n")
	f, err := safefile.AppendOwn(path, 0o644)
	if errors.Is(err, fs.ErrNotExist) {
		os.MkdirAll(filepath.Dir(path), 0o755)
		f, err = safefile.AppendOwn(path, 0o644)
	}
	if err != nil {
		return
	}
	f.Write(data)
	fi, err := f.Stat()
	f.Close()
	if err == nil && fi.Size() >= ringCompactAt {
		atomicfile.Replace(path, []byte(strings.Join(ring, "\n")+"\n"), 0o644)
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
