package integrity

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/harness-agent/harness/internal/atomicfile"
	"github.com/harness-agent/harness/internal/progress"
	"github.com/harness-agent/harness/internal/project"
	"github.com/harness-agent/harness/internal/record"
	"github.com/harness-agent/harness/internal/root"
	"github.com/harness-agent/harness/internal/safefile"
	"github.com/harness-agent/harness/internal/state"
)

// AfterTool is Check after a tool call (the PostToolUse hook). A check
// that finds every file as the harness left them keeps that judgement in
// the record (record.Judged) with the stat of each file it rests on, each
// taken before the check read anything: the next PostToolUse of the same
// session reads it before its program is initialised (internal/quiet) and
// ends there when none of those files moved since. Most tool calls change
// no harness file, and their check then costs a dozen system calls where
// the whole hook's start cost a fifth of a process more (docs/perf.md).
func AfterTool(p *project.Project, by string, adopt Adopt) Result {
	return check(p, by, adopt, how{keep: true})
}

// judgedFormat heads a kept judgement. It changes with what the check's
// fast path rests on, so that one an older harness kept is not taken for
// this one's; internal/quiet reads the same text.
const judgedFormat = "harness judged 1"

// judgedRacy: a judgement is kept only when none of its files changed this
// recently. A change within one tick of the clock keeps a file's times
// (record.Stamp.ChangedSince), so a stat taken that soon after a write
// cannot tell a second write from the first.
var judgedRacy = 2 * time.Second

// judgedFiles are the files a clean check rests on: the record's mark and
// its mirror of the log, and the project's tasks file, its backup, its
// log, the marker, the pause and harness-init.sh (seen, look).
func judgedFiles(p *project.Project) []string {
	rec := p.Record()
	return []string{
		rec.MarkPath(), rec.Path(record.LogMirror),
		state.Path(p.Root), state.BackupPath(p.Root), progress.Path(p.Root),
		filepath.Join(p.Root, root.ActiveMarker), filepath.Join(p.Root, root.PausedFile),
		filepath.Join(p.Root, record.InitCopy),
	}
}

// judgedText is the text of a judgement of p, with the stat each file of
// judgedFiles has now: "" where one cannot be kept (a file that is not a
// regular one, one that cannot be stat'ed, one changed within judgedRacy,
// a name that would break the text). Taken before the check looks, so
// that any change after it moves a stat the judgement names.
func judgedText(p *project.Project) string {
	session := hookSession()
	if p.Record().Dir == "" || strings.ContainsAny(p.Root+session, "\t\n") {
		return ""
	}
	since := time.Now().Add(-judgedRacy)
	var b strings.Builder
	b.WriteString(judgedFormat + "\nroot " + p.Root + "\nsession " + session + "\n")
	for _, name := range judgedFiles(p) {
		stat := "-"
		fi, err := os.Lstat(name)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil || !fi.Mode().IsRegular():
			return ""
		default:
			st := record.StampOf(fi)
			if st.ChangedSince(since) {
				return ""
			}
			stat = st.String()
		}
		if strings.ContainsAny(name, "\t\n") {
			return ""
		}
		b.WriteString(name + "\t" + stat + "\n")
	}
	b.WriteString("--\n")
	return b.String()
}

// keepJudged writes text, a judgement of p found clean, into the record,
// unless it says so already.
func keepJudged(p *project.Project, text string) {
	if text == "" {
		return
	}
	file := p.Record().Path(record.Judged)
	if old, err := safefile.ReadFile(file, safefile.Small); err == nil && string(old) == text {
		return
	}
	atomicfile.Replace(file, []byte(text), 0o600)
}
