// Package statecache gives the hot-path hooks (PreToolUse before every tool call,
// Stop at every turn end) what they need of the state without parsing it each
// time: counts, the next task, the claims in progress and the few settings
// they enforce. The summary is cached in .harness-runtime/summary.json, keyed
// by the tasks file's inode, size and modification time; every state write
// renames a new file or patches the old one in place, so any change gives a
// new key, and the harness's writers store the new summary themselves.
//
// A missing or stale cache costs one read of the file: a skim when the
// record says the harness wrote the file as it is (its schema then held
// when the harness read it back), a full parse, which checks every field,
// when another hand changed it.
package statecache

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/harness-agent/harness/internal/atomicfile"
	"github.com/harness-agent/harness/internal/jsonobj"
	"github.com/harness-agent/harness/internal/record"
	"github.com/harness-agent/harness/internal/root"
	"github.com/harness-agent/harness/internal/safefile"
	"github.com/harness-agent/harness/internal/schedule"
	"github.com/harness-agent/harness/internal/state"
)

// RuntimeDir is the harness's scratch directory inside the state root. Its
// name starts with .harness- so git rollbacks and dirty checks ignore it.
const RuntimeDir = root.RuntimeDir

// Brief names a task.
type Brief struct {
	ID    string
	Title string
}

// Claim is a task in progress.
type Claim struct {
	Brief
	ClaimedBy      string
	LeaseExpiresAt string
	AllowedPaths   []string
	Command        string
	Worktree       string
}

// Summary is what the hot-path hooks need of a state. Its file is written
// and read by codec.go.
type Summary struct {
	Key          string
	Concurrent   bool
	Config       state.Config
	SessionCount int
	Stats        schedule.Stats
	Next         *Brief
	Eligible     int
	Why          string
	InProgress   []Claim
	Fingerprint  string
	// DepsClean is set when dependency validation has nothing to mark (no
	// cycle, no task blocked by one that failed for good): a session start
	// then need not parse the tasks to validate them.
	DepsClean bool
	// NextTask is the task Next names, whole, so that a hook can describe
	// it (attempts, last error) without parsing the tasks file.
	NextTask *state.Task
	// FromBackup is set when the tasks file is corrupt and this summary was
	// read from harness-tasks.json.bak (such a summary is never cached).
	FromBackup bool
}

// Path returns the cache file of the state root dir.
func Path(dir string) string { return filepath.Join(dir, RuntimeDir, "summary.json") }

// Load returns the summary of the state in dir, from the cache when the tasks
// file has not changed since it was written.
func Load(dir string) (*Summary, error) {
	key, err := statKey(state.Path(dir))
	if err != nil {
		if os.IsNotExist(err) {
			return nil, state.ErrNotFound
		}
		return nil, err
	}
	if s := cachedAt(dir, key); s != nil {
		return s, nil
	}
	if s := skimmed(dir, key); s != nil {
		return s, nil
	}
	st, err := state.Load(dir)
	if err != nil {
		return nil, err
	}
	s := Of(st)
	if st.FromBackup {
		s.FromBackup = true
		return s, nil // never cache what the corrupt file does not say
	}
	s.Key = key
	s.write(dir)
	return s, nil
}

// Update is state.Update for the harness's writers: when it writes the
// tasks file it also refreshes the hooks' cache with the state as written
// (under the same transaction lock), so the next hook does not parse the
// file again.
func Update(dir string, fn func(*state.State) error) (*state.State, error) {
	return state.UpdateThen(dir, fn, Store)
}

// Store caches the summary of a state that was just written.
func Store(st *state.State) {
	if st.Dir != "" {
		Of(st).follow(st.Dir)
	}
}

// write writes the cache (jsonobj.WriteFile: in place when only the key's
// stamp and a count moved, else a temporary file renamed over it) but
// without fsync: the cache is derived data, and a copy lost or left empty
// by a crash is read as stale and rebuilt from the state. An fsync costs
// milliseconds on every state write, the hooks' included.
//
// A second copy goes to the record's directory (internal/record), outside
// the work tree, where removing .harness-runtime (`git clean -fdx`, a
// user tidying up) does not reach it: the next hook then finds the
// summary there instead of reading the tasks file again.
func (s *Summary) write(dir string) {
	data := s.encode()
	os.MkdirAll(filepath.Join(dir, RuntimeDir), 0o755)
	jsonobj.WriteFile(Path(dir), data, 0o644)
	if copy := recordPath(dir); copy != "" {
		jsonobj.WriteFile(copy, data, 0o600)
	}
}

// recordPath is the summary's copy in the record's directory of the state
// root dir ("" when there is none: no record yet, no home).
func recordPath(dir string) string {
	rd := record.Dir(dir)
	if rd == "" {
		return ""
	}
	if _, err := os.Stat(rd); err != nil {
		return "" // the record is made by the writes of the tasks file
	}
	return filepath.Join(rd, "summary.json")
}

// known returns the summary of the tasks file as it is now when it costs
// no full parse: the cached one, the one of the same text under a new stat
// (sameText), or one made from a skim of a file the harness wrote
// (skimmed). nil otherwise. Its callers (the in-place edits) hold the
// transaction lock.
func known(dir string) *Summary {
	key, err := statKey(state.Path(dir))
	if err != nil {
		return nil
	}
	if s := cachedAt(dir, key); s != nil {
		return s
	}
	if s := sameText(dir, key); s != nil {
		return s
	}
	return skimmed(dir, key)
}

// sameText returns the summary of the tasks file when its stat moved since
// the harness wrote it but its text did not (a touch, an editor saving what
// it opened, a checkout of the same text): its bytes are the record's copy
// of the file the harness last wrote, for which the cached summary was
// made. The record's mark then follows the file, and the caller's write
// the summary (as Retouched does both for the integrity check).
// nil otherwise: another hand changed the text, or there is no record or
// no summary of that file. The caller holds the transaction lock, as
// internal/integrity does for the same repair at the other hooks' start.
func sameText(dir, key string) *Summary {
	rec := record.Of(dir)
	m, ok := rec.Mark()
	if !ok || m.Root != dir {
		return nil
	}
	fi, err := os.Stat(state.Path(dir))
	if err != nil || keyOf(fi) != key || fi.Size() != m.Size {
		return nil
	}
	s := ofMark(dir, m) // before the file is read: no summary, no use
	if s == nil || !rec.SameTasks() {
		return nil
	}
	// The caller's write keys and stores the summary (follow): only the
	// mark is written here.
	rec.Touch(fi)
	return s
}

// Retouched follows a tasks file whose text is the record's copy of the
// file the harness last wrote (mark m) but whose stat moved (fi): the
// record's mark takes the file's new stat, and the summary made for the
// file of mark m is keyed to it. It returns that summary, nil when there is
// none. The caller has compared the bytes (Record.SameTasks), as
// internal/integrity does at the other hooks' start.
func Retouched(dir string, m record.Mark, fi os.FileInfo) *Summary {
	record.Of(dir).Touch(fi)
	s := ofMark(dir, m)
	if s == nil {
		return nil
	}
	s.Key = keyOf(fi)
	s.write(dir)
	return s
}

// ofMark returns the cached summary when it was made for the tasks file
// the record's mark m describes (its stamp is the summary's key), nil
// otherwise.
func ofMark(dir string, m record.Mark) *Summary {
	stamp := m.Tasks().String()
	return cached(dir, func(key string) bool { return key == stamp })
}

// skimmed makes and caches the summary of the tasks file without a full
// parse when the file is the one the harness last wrote: its stat key
// matches the record's mark (internal/record), so its schema held when
// the harness read it back before writing, and a skim (state.Skim) reads
// what the summary needs. The tasks it names whole (the next one, the
// claims in progress) are then parsed alone. nil when the record does not
// vouch for the file or the skim fails: the caller parses it.
func skimmed(dir, key string) *Summary {
	m, ok := record.Of(dir).Mark()
	if !ok || m.Root != dir {
		return nil
	}
	if fi, err := os.Stat(state.Path(dir)); err != nil || keyOf(fi) != key || record.StampOf(fi) != m.Tasks() {
		return nil
	}
	raw, err := safefile.ReadFile(state.Path(dir), state.MaxFileSize)
	if err != nil || int64(len(raw)) != m.Size {
		return nil
	}
	s, err := fromSkim(raw)
	if err != nil {
		return nil
	}
	skims++
	s.Key = key
	s.write(dir)
	return s
}

// skims counts the summaries skimmed (tests check which path a read took).
var skims int

// fromSkim is the summary of the tasks file text raw, from a skim of it
// and a full parse of the tasks the summary holds whole: the same summary
// Of gives for the parsed file (a test holds the two together).
func fromSkim(raw []byte) (*Summary, error) {
	st, err := state.Skim(raw)
	if err != nil {
		return nil, err
	}
	s := Of(st)
	if s.Next != nil {
		t, err := st.Whole(st.Index(s.Next.ID))
		if err != nil {
			return nil, err
		}
		s.NextTask = &t
	}
	for j, c := range s.InProgress {
		t, err := st.Whole(st.Index(c.ID))
		if err != nil {
			return nil, err
		}
		s.InProgress[j] = claimOf(&t)
	}
	return s, nil
}

// Of computes the summary of a parsed state.
func Of(st *state.State) *Summary {
	s := &Summary{
		Concurrent: st.Concurrent(), Config: st.Config,
		SessionCount: st.SessionCount, Stats: schedule.Count(st.Tasks),
	}
	cands := schedule.Candidates(st.Tasks)
	s.Eligible = len(cands)
	if len(cands) > 0 {
		s.Next = &Brief{ID: cands[0].ID, Title: cands[0].Title}
		next := *cands[0]
		s.NextTask = &next
	} else {
		s.Why = string(schedule.Explain(st.Tasks))
	}
	for i := range st.Tasks {
		t := &st.Tasks[i]
		if t.Status == state.InProgress && !t.Validated() {
			// A task waiting in the merge queue is nobody's work: the
			// hooks neither hold a session to it nor guard its tree.
			s.InProgress = append(s.InProgress, claimOf(t))
		}
	}
	s.Fingerprint = fmt.Sprintf("completed=%d attempts=%d checkpoints=%d", s.Stats.Completed, s.Stats.Attempts, s.Stats.Checkpoints)
	s.DepsClean = len(schedule.Validate(st.Tasks)) == 0
	return s
}

// claimOf is the claim of t, a task in progress.
func claimOf(t *state.Task) Claim {
	return Claim{Brief: Brief{ID: t.ID, Title: t.Title}, ClaimedBy: t.ClaimedBy,
		LeaseExpiresAt: t.LeaseExpiresAt, AllowedPaths: t.AllowedPaths, Command: t.Command, Worktree: t.Worktree}
}

// Cached returns the cached summary when it is the summary of the tasks
// file as it is now, nil otherwise. It never parses the file.
func Cached(dir string) *Summary {
	key, err := statKey(state.Path(dir))
	if err != nil {
		return nil
	}
	return cachedAt(dir, key)
}

// cachedAt returns the cached summary when it was made for the version of
// the tasks file that key identifies, nil otherwise.
func cachedAt(dir, key string) *Summary {
	return cached(dir, func(made string) bool { return made == key })
}

// cached returns the cached summary whose key fits, from the runtime
// copy or else the record's, nil when neither does.
func cached(dir string, fits func(key string) bool) *Summary {
	if s := readAt(Path(dir), fits); s != nil {
		return s
	}
	copy := recordPath(dir)
	if copy == "" {
		return nil
	}
	s := readAt(copy, fits)
	if s != nil {
		// .harness-runtime was removed: the record's copy puts it back.
		if data, err := safefile.ReadFile(copy, maxSummary); err == nil && os.MkdirAll(filepath.Join(dir, RuntimeDir), 0o755) == nil {
			atomicfile.Replace(Path(dir), data, 0o644)
		}
	}
	return s
}

// maxSummary bounds a summary file read: the claims of thousands of tasks
// in progress fit many times over.
const maxSummary = 16 << 20

// readAt reads the summary cached at path when its key fits, nil
// otherwise.
func readAt(path string, fits func(key string) bool) *Summary {
	data, err := safefile.ReadFile(path, maxSummary)
	if err != nil {
		return nil
	}
	s := decode(data)
	if s == nil || !fits(s.Key) {
		return nil
	}
	return s
}

// follow keys s to the tasks file as it now is and caches it: s says what
// the file just written says (a summary of it, or one whose count or date
// the in-place edit changed), and the writer holds the transaction lock.
func (s *Summary) follow(dir string) {
	if key, err := statKey(state.Path(dir)); err == nil {
		s.Key = key
		s.write(dir)
	}
}

// CountSession counts a new session in the tasks file without parsing it
// (state.CountSession) when the cache holds the summary of the file as it
// is and accept takes it; the cache then follows the file. It returns the
// summary with the new count and the file's new text, or ok false (nothing
// written) for the caller to take the full path.
func CountSession(dir string, accept func(*Summary) bool) (sum *Summary, ok bool, err error) {
	_, ok, err = state.CountSession(dir, func() bool {
		sum = known(dir)
		return sum != nil && accept(sum)
	}, func(n int) {
		sum.SessionCount = n
		sum.follow(dir)
	})
	if !ok {
		return nil, false, err
	}
	return sum, true, nil
}

// statKey identifies one version of a file: renames give a new inode, edits
// in place a new size or time.
func statKey(path string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	return keyOf(fi), nil
}

func keyOf(fi os.FileInfo) string { return record.StampOf(fi).String() }

// SetLastSession sets last_session without parsing the tasks file
// (state.SetLastSession) when the cache holds the summary of the file as it
// is; the cache then follows the file. It returns that summary, or ok false
// (nothing written) for the caller to take the full path.
func SetLastSession(dir, at string) (sum *Summary, ok bool, err error) {
	ok, err = state.SetLastSession(dir, at, func() bool {
		sum = known(dir)
		return sum != nil
	}, func() { sum.follow(dir) })
	if !ok {
		return nil, false, err
	}
	return sum, true, nil
}
