package wiring

import (
	"encoding/hex"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/harness-agent/harness/internal/atomicfile"
	"github.com/harness-agent/harness/internal/digest"
	"github.com/harness-agent/harness/internal/record"
	"github.com/harness-agent/harness/internal/safefile"
	"github.com/harness-agent/harness/internal/settings"
)

// Stop and SessionStart check the wiring at every turn end and start, and
// it almost never changes: the check keeps its verdict with the stat of
// every file it looked at (each settings file, the drop-in directory, each
// install's registry, manifest and executables, present or not), and a
// check that finds every one of them as it was returns the verdict
// without reading them. A stat is the file's size, modification and change
// times and inode (record.Stamp): nothing rewrites a file without moving
// one of them, except within the same tick of the clock, so a verdict is
// kept only when none of its files changed within racy of it being made
// (as git does with its index).
var racy = 2 * time.Second

// lookedAt holds the stat of each file a check looked at, "-" for none.
type lookedAt map[string]string

// stat notes path's stat as it is now.
func (l lookedAt) stat(path string) {
	if path != "" {
		fi, err := os.Stat(path)
		l.saw(path, fi, err)
	}
}

// saw notes the stat fi (err: none) of path.
func (l lookedAt) saw(path string, fi os.FileInfo, err error) { l[path] = stampText(fi, err) }

// stampText is how a verdict keeps a file's stat fi (err: none): "-" for
// none, "racy" for one changed too recently to tell a later change by.
func stampText(fi os.FileInfo, err error) string {
	if err != nil {
		return "-"
	}
	st := record.StampOf(fi)
	if st.ChangedSince(time.Now().Add(-racy)) {
		return "racy"
	}
	return st.String()
}

// verdictFormat changes with what the check looks for, so that a verdict
// an older harness kept is not taken for this one's.
const verdictFormat = "1"

// key is what decides a verdict besides the files' contents: the places
// the check was given and the ones it finds itself, and what it looks for
// (the hooks the harness registers: a new release may register one more).
func (w Where) key() string {
	var hooks []string
	for _, h := range settings.Hooks {
		hooks = append(hooks, h.Program)
	}
	var b strings.Builder
	for _, part := range [][]string{{verdictFormat}, hooks, w.Projects, w.BinDirs, ConfigDirs(), {ManagedDir(), strconv.FormatBool(w.Registered), w.Verified}} {
		b.WriteString(strings.Join(part, "\x00"))
		b.WriteString("\x01")
	}
	return strconv.Quote(b.String())
}

// verdictFile is where the verdict of w's places (key) is kept: Verdict
// and a digest of key ("" when Verdict is "").
func (w Where) verdictFile(key string) string {
	if w.Verdict == "" {
		return ""
	}
	sum := digest.SHA256([]byte(key))
	return w.Verdict + "-" + hex.EncodeToString(sum[:6]) + ".txt"
}

// keptVerdict returns the verdict kept in file when it was made for key
// and every file it looked at has the stat it had then.
func keptVerdict(file, key string) (problems []string, ok bool) {
	if file == "" {
		return nil, false
	}
	data, err := safefile.ReadFile(file, safefile.Small)
	if err != nil {
		return nil, false
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) == 0 || lines[0] != key {
		return nil, false
	}
	for i, l := range lines[1:] {
		if l == "--" {
			return lines[i+2:], true
		}
		path, want, found := strings.Cut(l, "\t")
		if !found {
			return nil, false
		}
		if fi, err := os.Stat(path); want == "racy" || stampText(fi, err) != want {
			return nil, false
		}
	}
	return nil, false // no end of the files: not a verdict
}

// keepVerdict writes the verdict problems, found for key by looking at
// looked, to file: not when a file looked at had just changed (racy), and
// not again when the file already says so.
func keepVerdict(file, key string, looked lookedAt, problems []string) {
	if file == "" {
		return
	}
	var b strings.Builder
	b.WriteString(key + "\n")
	for _, path := range slices.Sorted(maps.Keys(looked)) {
		if st := looked[path]; st == "racy" || strings.ContainsAny(path, "\t\n") {
			os.Remove(file)
			return
		}
		b.WriteString(path + "\t" + looked[path] + "\n")
	}
	b.WriteString("--\n")
	for _, p := range problems {
		b.WriteString(strings.ReplaceAll(p, "\n", " ") + "\n")
	}
	if old, err := safefile.ReadFile(file, safefile.Small); err == nil && string(old) == b.String() {
		return
	}
	atomicfile.Replace(file, []byte(b.String()), 0o600)
}
