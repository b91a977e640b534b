package sessionhook

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/harness-agent/harness/internal/atomicfile"
	"github.com/harness-agent/harness/internal/hook"
	"github.com/harness-agent/harness/internal/progress"
	"github.com/harness-agent/harness/internal/root"
	"github.com/harness-agent/harness/internal/safefile"
	"github.com/harness-agent/harness/internal/state"
	"github.com/harness-agent/harness/internal/statecache"
)

// CardFile, in the runtime directory, is the resume card: what a session
// was doing when its conversation was compacted, given back to the model
// when the session continues (SessionStart with source compact, clear or
// resume).
const CardFile = "resume-card.txt"

// Bounds of the card: it is read at the top of a fresh context, so it stays
// a few lines whatever the task's error log holds.
const (
	cardErrorLines = 5
	cardMaxBytes   = 2000
	// cardTTL is how long a card is given back: a card older than this
	// speaks of a state the log has long moved past.
	cardTTL = 24 * time.Hour
)

// PreCompact records the resume card before Claude Code compacts the
// conversation: the task in progress, its last checkpoint, the first lines
// of its last failure, and the next step. It never blocks a compaction and
// changes no task state: the claim and the harness stay as they are.
func PreCompact(p hook.Payload) hook.Decision {
	c, ok := active(p)
	if !ok || p.Malformed {
		// A payload that cannot be read tells of no compaction: nothing to record.
		return hook.Decision{}
	}
	rt := ReadRuntime(c.Record(), c.session)
	if rt.toldToStayOut() {
		return hook.Decision{} // told to do no harness work: no card of it
	}
	s, err := state.Load(c.Root)
	if err != nil {
		return hook.Decision{}
	}
	n := s.SessionCount
	if rt != nil && rt.Session > 0 {
		n = rt.Session
	}
	trigger := p.Str("trigger")
	if trigger != "manual" && trigger != "auto" {
		trigger = "unknown"
	}
	card := resumeCard(c, s, trigger)
	if err := writeCard(c.Root, card); err != nil {
		return hook.Decision{Kind: hook.Allow, Warning: "harness: cannot write the resume card: " + oneLine(err)}
	}
	progress.Append(c.Root, progress.Entry{Time: c.now, Session: n, Type: progress.Compact,
		Message: fmt.Sprintf("compaction (trigger=%s); resume card: %s", trigger, cardSummary(card))})
	return hook.Decision{}
}

// resumeCard writes the card's text for the state s as this session sees it.
func resumeCard(c *call, s *state.State, trigger string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "HARNESS RESUME CARD (written %s before a compaction, trigger=%s, session %s)\n",
		c.now.UTC().Format(time.RFC3339), trigger, orUnknown(c.session))
	w := remaining(statecache.Of(s), c.now, c.ids()...)
	for _, cl := range w.own {
		t := s.Task(cl.ID)
		if t == nil {
			continue
		}
		fmt.Fprintf(&b, "task in progress: %s (attempt %d of %d, claimed %s)\n", describe(t.ID, t.Title), t.Attempts+1, t.MaxAttempts, orUnknown(t.ClaimedAt))
		if len(t.Checkpoints) > 0 {
			cp := t.Checkpoints[len(t.Checkpoints)-1]
			fmt.Fprintf(&b, "last checkpoint: step %d/%d %q at %s\n", cp.Step, cp.Total, clip(cp.Description, 200), orUnknown(cp.Timestamp))
		} else {
			b.WriteString("last checkpoint: none yet\n")
		}
		if k := len(t.ErrorLog); k > 0 {
			b.WriteString("last failure:\n")
			for _, l := range firstLines(t.ErrorLog[k-1], cardErrorLines) {
				fmt.Fprintf(&b, "  %s\n", clip(l, 200))
			}
		}
		break // one task: the one the next step continues
	}
	if len(w.own) == 0 {
		b.WriteString("task in progress: none\n")
	}
	if step := nextStep(w, details(s)); step != "" {
		fmt.Fprintf(&b, "next step: %s\n", step)
	}
	fmt.Fprintf(&b, "tasks: %s\n", statecache.Of(s).Stats.Counts())
	return bound(b.String(), cardMaxBytes)
}

// writeCard stores the card in the runtime directory.
func writeCard(dir, card string) error {
	path := filepath.Join(dir, root.RuntimeDir, CardFile)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.Replace(path, []byte(card), 0o644)
}

// readCard returns the resume card when there is one younger than cardTTL.
func readCard(dir string, now time.Time) string {
	path := filepath.Join(dir, root.RuntimeDir, CardFile)
	fi, err := os.Stat(path)
	if err != nil || now.Sub(fi.ModTime()) > cardTTL || fi.Size() > 4*cardMaxBytes {
		return ""
	}
	data, err := safefile.ReadFile(path, 4*cardMaxBytes)
	if err != nil {
		return ""
	}
	return bound(string(data), cardMaxBytes)
}

// cardSummary is the card on one log line: its task and next step.
func cardSummary(card string) string {
	var parts []string
	for _, l := range strings.Split(card, "\n") {
		if strings.HasPrefix(l, "task in progress: ") || strings.HasPrefix(l, "next step: ") {
			parts = append(parts, l)
		}
	}
	return clip(strings.Join(parts, "; "), 400)
}

// firstLines returns the first n non-blank lines of s.
func firstLines(s string, n int) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) == "" {
			continue
		}
		if len(out) == n {
			out = append(out, "…")
			break
		}
		out = append(out, l)
	}
	return out
}

// bound cuts s to at most n bytes, at a line end where it can.
func bound(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := strings.LastIndexByte(s[:n], '\n')
	if cut <= 0 {
		cut = n
		for cut > 0 && s[cut]&0xC0 == 0x80 {
			cut--
		}
	}
	return s[:cut] + "\n…\n"
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
