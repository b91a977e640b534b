// Package shadow keeps a history of the project's work tree, taken before
// every tool call that may change it, so that a person can undo what an
// agent's step did: an `rm -rf src`, a `git checkout .`, a `sed -i` over the
// tree or an overwritten file, none of which Claude Code's own checkpoints
// cover when it came from Bash.
//
// The history is a bare git repository of its own beside the record
// (record.Dir(root)/shadow, outside the project, read-only to a sandboxed
// agent like the record), with its own index: the project's .git, index
// and refs are never touched. Each checkpoint is a parentless commit under
// refs/shadow/<seq> whose message is the tool call that followed. It holds
// every file of the state root, tracked, untracked and ignored alike, but
// the harness's own files (an undo never reverts the state), and ignored
// files larger than MaxIgnored (build outputs, logs, caches). The last Keep
// checkpoints are kept; older ones are dropped and their objects collected
// now and then.
//
// A checkpoint costs no git process when the tree's digest says nothing
// changed, nor for the usual change (addInProcess: the files that moved
// are hashed into the index in process); what the ignore rules decide
// takes two, side by side (add -A, and the listing of ignored files). The
// trees, the commit and its ref are written in process. Saving is best
// effort: a checkpoint that cannot be taken never stops the tool call.
package shadow

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/harness-agent/harness/internal/atomicfile"
	"github.com/harness-agent/harness/internal/git"
	"github.com/harness-agent/harness/internal/record"
	"github.com/harness-agent/harness/internal/root"
	"github.com/harness-agent/harness/internal/safefile"
	"github.com/harness-agent/harness/internal/treecache"
)

// Keep is how many checkpoints are kept (a variable for the tests).
var Keep = 100

// gcEvery is how many checkpoints pass between two collections: the refs
// of the checkpoints past Keep are deleted then, and their objects pruned
// in the background (a variable for the tests).
var gcEvery = 50

const (
	// MaxIgnored bounds the size of an ignored file a checkpoint holds.
	MaxIgnored = 1 << 20
	// Timeout bounds a git call of a checkpoint, well inside the hook's
	// 30 s: a hook killed by Claude Code fails open.
	Timeout = 10 * time.Second
	// RefPrefix is the ref namespace of the checkpoints.
	RefPrefix = "refs/shadow/"
	// dirName is the repository's name inside the record directory.
	dirName = "shadow"
	// headName is the file that says which checkpoint is the last and what
	// the index was right after it: the hot path reads it instead of
	// asking git.
	headName = "harness-head"
	// maxMessage bounds a checkpoint's message.
	maxMessage = 300
)

// ErrNone is returned when a project has no checkpoints to restore.
var ErrNone = errors.New("no shadow checkpoints")

// Dir returns the shadow repository of the state root root, "" when no
// record directory can be named.
func Dir(stateRoot string) string {
	d := record.Dir(stateRoot)
	if d == "" {
		return ""
	}
	return filepath.Join(d, dirName)
}

// repo is one project's shadow repository.
type repo struct {
	root, dir string
}

func open(stateRoot string) (repo, error) {
	d := Dir(stateRoot)
	if d == "" {
		return repo{}, errors.New("shadow: no state directory (HOME unset)")
	}
	return repo{root: stateRoot, dir: d}, nil
}

// env is what every git call of the repository runs with: its own git
// directory and index, the state root as the work tree, no user or system
// configuration (a filter or an autocrlf there would change bytes), and a
// fixed identity.
func (r repo) env() []string {
	return []string{
		"GIT_DIR=" + r.dir, "GIT_WORK_TREE=" + r.root, "GIT_INDEX_FILE=" + filepath.Join(r.dir, "index"),
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=" + os.DevNull, "GIT_OPTIONAL_LOCKS=0",
		"GIT_AUTHOR_NAME=harness", "GIT_AUTHOR_EMAIL=harness@localhost",
		"GIT_COMMITTER_NAME=harness", "GIT_COMMITTER_EMAIL=harness@localhost",
		"GIT_NO_REPLACE_OBJECTS=1", "GIT_TERMINAL_PROMPT=0",
	}
}

func (r repo) git(stdin []byte, args ...string) (string, error) {
	return git.Cmd{Dir: r.root, Env: r.env(), Timeout: Timeout, Stdin: stdin}.Run(args...)
}

// attributes make every file's bytes go in and come out unchanged, whatever
// the project's .gitattributes say (info/attributes overrides them).
const attributes = "* -text -filter -ident -working-tree-encoding -eol\n"

// config keeps git from collecting on its own (gc runs when the harness
// says) and from converting line ends.
var config = [][2]string{{"core.autocrlf", "false"}, {"core.safecrlf", "false"}, {"gc.auto", "0"}, {"core.logAllRefUpdates", "false"}, {"core.untrackedCache", "true"}}

// ensure creates the repository the first time.
func (r repo) ensure() error {
	if _, err := os.Stat(filepath.Join(r.dir, "HEAD")); err == nil {
		return nil
	}
	init := exec.Command("git", "init", "-q", "--bare", "--template=", r.dir) // no sample hooks
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") {
			init.Env = append(init.Env, kv)
		}
	}
	if out, err := init.CombinedOutput(); err != nil {
		return fmt.Errorf("git init %s: %v: %s", r.dir, err, bytes.TrimSpace(out))
	}
	for _, kv := range config {
		if _, err := r.git(nil, "config", kv[0], kv[1]); err != nil {
			return err
		}
	}
	var ex bytes.Buffer
	for _, n := range root.OwnedNames {
		ex.WriteString("/" + n + "\n")
	}
	ex.WriteString("/.harness-*\n/" + root.TasksFile + ".corrupt-*\n")
	if err := os.MkdirAll(filepath.Join(r.dir, "info"), 0o700); err != nil {
		return err
	}
	if err := writeNew(filepath.Join(r.dir, "info", "exclude"), ex.Bytes()); err != nil {
		return err
	}
	return writeNew(filepath.Join(r.dir, "info", "attributes"), []byte(attributes))
}

// head is what the hot path knows of the last checkpoint.
type head struct {
	seq   int
	tree  string
	index string // the index file's stamp right after it
	// walk is the work tree's digest as the checkpoint left it
	// (treecache.Digest): the same digest before the next call means
	// nothing changed, and no git runs. "" when none was kept (the tree
	// changed close to the checkpoint), "-" for a tree too large to walk.
	walk string
	// ours: the index at the stamp index was written in process
	// (addInProcess), which smudges every entry whose stat may not tell a
	// later change apart; an index git wrote is read with git's caution.
	ours bool
	// text is the head file as it was read (nil: none), for writeHead to
	// write the next over it in place.
	text []byte
}

// headSize is the head file's length: its line padded with spaces, so
// that the next is written over it in place, in the file's first sector
// (atomicfile.Patch). A file renamed over another costs ext4 a flush of
// the new one, about 0.1 ms of every checkpoint here.
const headSize = 256

func (r repo) readHead() head {
	data, err := safefile.ReadFile(filepath.Join(r.dir, headName), safefile.Small)
	if err != nil {
		return head{}
	}
	f := strings.Fields(string(data))
	if len(f) < 2 {
		return head{}
	}
	seq, err := strconv.Atoi(f[0])
	if err != nil || seq < 0 {
		return head{}
	}
	h := head{seq: seq, tree: f[1], text: data}
	if len(f) > 2 {
		h.index = f[2]
	}
	if len(f) > 3 && f[3] != "none" {
		h.walk = f[3]
	}
	h.ours = len(f) > 4 && f[4] == "ours"
	return h
}

func (r repo) writeHead(h head) error {
	path := filepath.Join(r.dir, headName)
	walk := h.walk
	if walk == "" {
		walk = "none"
	}
	writer := "git"
	if h.ours {
		writer = "ours"
	}
	text := fmt.Appendf(nil, "%d %s %s %s %s", h.seq, h.tree, h.index, walk, writer)
	if pad := headSize - 1 - len(text); pad > 0 {
		text = append(text, bytes.Repeat([]byte{' '}, pad)...)
	}
	text = append(text, '\n')
	// In place over the file as it was read, when it still holds that
	// (Patch checks); a file of another length or another writer's is
	// replaced whole.
	if len(h.text) == len(text) && atomicfile.Patch(path, int64(len(text)), 0, h.text, text) {
		return nil
	}
	tmp := path + ".tmp"
	if err := writeNew(tmp, text); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// indexStamp says whether the index was rewritten: git add leaves it alone
// when nothing changed.
func (r repo) indexStamp() string {
	fi, err := os.Stat(filepath.Join(r.dir, "index"))
	if err != nil {
		return "-"
	}
	return record.StampOf(fi).String()
}

// Save records the work tree of the state root root as a checkpoint whose
// message is message (the tool call about to run), unless nothing changed
// since the last one. It reports whether a checkpoint was made.
func Save(stateRoot, message string) (bool, error) {
	r, err := open(stateRoot)
	if err != nil {
		return false, err
	}
	same, before := r.unchanged(r.readHead())
	if same {
		// Read without the lock: a checkpoint another call is taking
		// meanwhile has nothing to add to a tree that did not change.
		return false, nil
	}
	unlock, err := r.lock()
	if err != nil {
		return false, err
	}
	defer unlock()
	if err := r.ensure(); err != nil {
		return false, r.failed(err)
	}
	saved, _, err := r.save(message, AddBudget, before)
	return saved, r.failed(err)
}

// errName keeps the last failure, shown by `harness undo --list`.
const errName = "harness-error"

func (r repo) failed(err error) error {
	path := filepath.Join(r.dir, errName)
	if err == nil {
		os.Remove(path)
		return nil
	}
	writeNew(path, []byte(time.Now().UTC().Format(time.RFC3339)+" "+err.Error()+"\n"))
	return err
}

// writeNew writes a file of the repository afresh: whatever had its name
// (a FIFO planted there, on which an open for writing would wait) is
// removed first.
func writeNew(path string, data []byte) error {
	os.Remove(path)
	return safefile.CreateOwn(path, data, 0o600)
}

// save takes a checkpoint with the lock held; it returns the head after it.
// before is the tree walked before the lock (unchanged), none when it was
// not: the in-process add and the digest kept for the next call are made
// from it rather than from another walk.
func (r repo) save(message string, budget time.Duration, before look) (bool, head, error) {
	h := r.readHead()
	if h.tree == "" {
		if last, ok := r.newest(); ok {
			h.seq = last.Seq
		}
	}
	t0 := time.Now()
	if pid, busy := r.adding(); busy {
		return false, h, fmt.Errorf("shadow: the work tree is still being recorded in the background (git pid %d); no checkpoint before this call", pid)
	}
	// A git killed at its timeout leaves its lock behind; ours is held,
	// and no add of ours runs on.
	os.Remove(filepath.Join(r.dir, "index.lock"))
	lk := r.look(h, t0, before)
	// ours: the index is now the in-process add's, not git's.
	ours := false
	if lk.tree.Listing != "" && !lk.tree.Nested {
		var err error
		trusted := h.ours && h.index == r.indexStamp() // the add wrote it last
		if ours, err = r.addInProcess(lk.tree.Files, trusted); err != nil {
			return false, h, err
		}
	}
	if !ours {
		if err := r.addWithGit(budget); err != nil {
			return false, h, err
		}
	}
	stamp := r.indexStamp()
	if h.tree != "" && stamp == h.index {
		if h.walk == "-" {
			return false, h, nil // a tree too large: tried again at a new checkpoint
		}
		if walk := r.walked(h, lk); walk != h.walk {
			h.walk = walk
			return false, h, r.writeHead(h)
		}
		return false, h, nil
	}
	tree, err := r.writeTree()
	if err != nil {
		return false, h, err
	}
	// writeTree keeps the trees it made in the index (its cache of
	// trees), rewriting it: the stamp to compare next is this one.
	stamp = r.indexStamp()
	if tree == h.tree {
		h.index, h.ours = stamp, ours
		if h.walk != "-" {
			h.walk = r.walked(h, lk)
		}
		return false, h, r.writeHead(h)
	}
	commit, err := r.writeCommit(tree, oneLine(message), time.Now())
	if err != nil {
		return false, h, err
	}
	next := head{seq: h.seq + 1, tree: tree, index: stamp, walk: h.walk, ours: ours, text: h.text}
	next.walk = r.walked(next, lk)
	if err := r.writeRef(ref(next.seq), commit); err != nil {
		return false, h, err
	}
	if err := r.writeHead(next); err != nil {
		return true, next, err
	}
	if next.seq%gcEvery == 0 || next.seq%10 == 0 && r.manyLoose() {
		r.dropOld(next.seq)
		r.collect()
	}
	return true, next, nil
}

// addWithGit brings the work tree into the index with git: `git add -A`
// beside the listing of the ignored files, then the ignored files' step.
func (r repo) addWithGit(budget time.Duration) error {
	var (
		wg      sync.WaitGroup
		ignored string
		lsErr   error
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		ignored, lsErr = r.git(nil, "ls-files", "-z", "-t", "-c", "-o", "-i", "--exclude-standard")
	}()
	addErr := r.addAll(budget)
	wg.Wait()
	if addErr != nil && !strings.Contains(addErr.Error(), "adding files failed") {
		return addErr
	}
	if lsErr != nil {
		return lsErr
	}
	return r.ignored(ignored)
}

// unchanged reports whether the work tree is as the checkpoint h left it,
// from the digest kept beside it: no git runs. When it changed, before is
// the tree as walked (treecache.WalkAll), whole: the checkpoint records
// it, and keeps its listing as the next digest unless something in it
// changed within quiet of now (before.racy).
//
// A change that recent means the tree changed: the digest h.walk was kept
// only when nothing had changed within two seconds of its checkpoint, and
// that checkpoint came before now. A walk from before the checkpoint
// serves it (save): a change made between the walk and the checkpoint only
// makes the next call's digest differ, and the tree be looked at once
// more (a file changed meanwhile is recorded with its new bytes and the
// stat walked, which the next checkpoint finds out of date), and a change
// cannot make a later tree's listing equal an earlier one (every change
// moves a change time, or an inode).
func (r repo) unchanged(h head) (same bool, before look) {
	if h.tree == "" || h.walk == "" || h.walk == "-" {
		return false, look{}
	}
	t, racy, err := walkAll(r.root, r.skip, time.Now().Add(-quiet))
	if err != nil {
		return false, look{}
	}
	if racy {
		return false, look{tree: t, racy: true}
	}
	return treecache.Salt(h.tree, t.Listing) == h.walk, look{tree: t}
}

// walkAll is treecache.WalkAll (a variable for the tests, which count the
// walks).
var walkAll = treecache.WalkAll

// look is the work tree as a checkpoint sees it.
type look struct {
	tree treecache.Tree // Listing "" when there is none: too large, or not walked
	racy bool           // something in it changed within quiet of the walk
	big  bool           // too large to walk
}

// look is before when there is one, else a walk of the whole tree now
// (t0: when the checkpoint began). A tree known to be too large is walked
// again only at every hundredth checkpoint.
func (r repo) look(h head, t0 time.Time, before look) look {
	if before.tree.Listing != "" {
		return before
	}
	if h.walk == "-" && h.seq%100 != 0 {
		return look{big: true}
	}
	t, racy, err := walkAll(r.root, r.skip, t0.Add(-quiet))
	if err != nil {
		return look{big: errors.Is(err, treecache.ErrTooBig)}
	}
	return look{tree: t, racy: racy}
}

// walked is the work tree's digest for the head h, from the look the
// checkpoint took: "" when anything changed from two seconds before the
// checkpoint on (a change it may not have seen, or one the clock does not
// tell apart), "-" for a tree too large to walk.
func (r repo) walked(h head, lk look) string {
	switch {
	case lk.big:
		return "-"
	case lk.racy || lk.tree.Listing == "":
		return ""
	}
	return treecache.Salt(h.tree, lk.tree.Listing)
}

// quiet is how long before a checkpoint the tree must not have changed for
// its digest to be kept (a variable for the tests).
var quiet = 2 * time.Second

// skip leaves out of the walk what the checkpoints never hold: the
// harness's files, and the directories all of whose files are the
// harness's (.harness-runtime/ and the like; a directory that bears a
// harness file's name holds files of the project).
func (r repo) skip(rel string, dir bool) bool {
	if dir {
		return root.IsHarnessFile(rel + "/-")
	}
	return root.IsHarnessFile(rel)
}

// AddBudget is how long a checkpoint waits for `git add -A`. Hashing a
// big work tree the first time (or after a generator wrote thousands of
// files) can take longer: the add then goes on in the background, where
// nothing kills it half-way, and the checkpoints wait for it.
var AddBudget = 8 * time.Second

// streamed makes git add write the files it hashes into one pack instead
// of one loose object each (its bulk check-in of big files, for every
// file): ten times less disk and far fewer file creations for a first
// checkpoint, or for the ignored files a build just wrote. Only for those
// adds: a pack per checkpoint costs about a millisecond more than the loose
// object or two a step's change makes (a pack and its index written and
// synced), and with it in the configuration gc would not compute deltas
// between versions. Loose objects piling up are collected early (manyLoose).
var streamed = []string{"-c", "core.bigFileThreshold=1"}

// addingName holds the pid of an add that went on in the background.
const addingName = "harness-adding"

// addAll runs `git add -A` into the shadow index, within budget.
func (r repo) addAll(budget time.Duration) error {
	args := []string{"add", "-A", "--ignore-errors"}
	if _, err := os.Lstat(filepath.Join(r.dir, "index")); err != nil {
		args = append(streamed, args...) // the first checkpoint
	}
	cmd := exec.Command("git", args...)
	cmd.Dir = r.root
	cmd.Env = append(os.Environ(), r.env()...)
	errPath := filepath.Join(r.dir, "harness-add.err")
	os.Remove(errPath)
	errFile, err := os.OpenFile(errPath, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	defer errFile.Close()
	cmd.Stderr = errFile // a file, not a pipe: the add may outlive the hook
	detach(cmd)
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			msg, _ := safefile.ReadFile(errPath, safefile.Small)
			return fmt.Errorf("git add -A: %v: %s", err, bytes.TrimSpace(msg))
		}
		return nil
	case <-time.After(budget):
		writeNew(filepath.Join(r.dir, addingName), fmt.Appendf(nil, "%d\n", cmd.Process.Pid))
		return fmt.Errorf("shadow: recording the work tree takes longer than %v; it goes on in the background (git pid %d)", budget, cmd.Process.Pid)
	}
}

// adding reports whether an add left in the background still runs.
func (r repo) adding() (int, bool) {
	path := filepath.Join(r.dir, addingName)
	data, err := safefile.ReadFile(path, safefile.Small)
	if err != nil {
		return 0, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	// A marker older than an hour names a pid that may since be another
	// process's.
	fresh := false
	if fi, err := os.Stat(path); err == nil {
		fresh = time.Since(fi.ModTime()) < time.Hour
	}
	if err == nil && pid > 0 && fresh && alive(pid) {
		return pid, true
	}
	os.Remove(path)
	return 0, false
}

// ignored brings the ignored files into the index up to MaxIgnored, and
// drops those that grew past it. listing is `ls-files -t -c -o -i` output.
func (r repo) ignored(listing string) error {
	var add, drop bytes.Buffer
	for _, e := range strings.Split(listing, "\x00") {
		if len(e) < 3 {
			continue
		}
		tag, name := e[0], e[2:]
		if root.IsHarnessFile(name) || strings.HasSuffix(name, "/") {
			continue
		}
		fi, err := os.Lstat(filepath.Join(r.root, name))
		small := err == nil && (fi.Mode().IsRegular() || fi.Mode()&os.ModeSymlink != 0) && fi.Size() <= MaxIgnored
		switch {
		case tag == '?' && small:
			add.WriteString(name + "\x00")
		case tag != '?' && err == nil && !small:
			drop.WriteString(name + "\x00")
		}
	}
	if add.Len() > 0 {
		if _, err := r.git(add.Bytes(), append(streamed, "add", "-f", "--ignore-errors", "--pathspec-from-file=-", "--pathspec-file-nul")...); err != nil && !strings.Contains(err.Error(), "adding files failed") {
			return err
		}
	}
	if drop.Len() > 0 {
		if _, err := r.git(drop.Bytes(), "rm", "-q", "--cached", "--ignore-unmatch", "--pathspec-from-file=-", "--pathspec-file-nul"); err != nil {
			return err
		}
	}
	return nil
}

// writeCommit stores the checkpoint's commit of tree, with message, and
// returns its id. It writes the loose object itself (the commit's text,
// hashed and compressed as git does) instead of starting `git
// commit-tree`: one process fewer before the tool call. A tree id that is
// not SHA-1's (a repository made with another object format) is left to
// git.
func (r repo) writeCommit(tree, message string, at time.Time) (string, error) {
	if len(tree) != 40 {
		return r.git(nil, "commit-tree", tree, "-m", message)
	}
	who := fmt.Sprintf("harness <harness@localhost> %d +0000", at.Unix())
	body := fmt.Sprintf("tree %s\nauthor %s\ncommitter %s\n\n%s\n", tree, who, who, message)
	oid, err := r.writeObject("commit", []byte(body))
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(oid[:]), nil
}

// writeRef makes the ref name point at commit: a loose ref written whole
// (a temporary file renamed into place), without a git process. The
// checkpoints' refs are new names, never updated, and only this package
// writes them, under its lock.
func (r repo) writeRef(name, commit string) error {
	path := filepath.Join(r.dir, filepath.FromSlash(name))
	tmp := filepath.Join(r.dir, "harness-ref.tmp") // outside refs/: never read as a ref
	if err := writeNew(tmp, []byte(commit+"\n")); err != nil {
		return err
	}
	err := inDir(filepath.Dir(path), func() error { return os.Rename(tmp, path) })
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// inDir runs op, which creates an entry in the directory dir, making dir
// when op finds it missing: a collection running in the background removes
// the directories it emptied (loose objects packed, refs packed), at any
// instant, as git's own writers expect.
func inDir(dir string, op func() error) error {
	err := op()
	for try := 0; try < 3 && errors.Is(err, fs.ErrNotExist); try++ {
		if err = os.MkdirAll(dir, 0o700); err == nil {
			err = op()
		}
	}
	return err
}

// dropOld deletes the refs of the checkpoints older than the Keep newest
// before seq (best effort: list caps what it shows at Keep meanwhile).
func (r repo) dropOld(seq int) {
	out, err := r.git(nil, "for-each-ref", "--format=%(refname)", RefPrefix)
	if err != nil {
		return
	}
	var del bytes.Buffer
	for _, name := range strings.Split(out, "\n") {
		if n, err := strconv.Atoi(strings.TrimPrefix(name, RefPrefix)); err == nil && strings.HasPrefix(name, RefPrefix) && n <= seq-Keep {
			del.WriteString("delete " + name + "\n")
		}
	}
	if del.Len() > 0 {
		r.git(del.Bytes(), "update-ref", "--stdin")
	}
}

// manyLoose reports whether loose objects pile up (a generator wrote
// thousands of files since the last collection), by git's own measure: more
// than 27 in the directory objects/17, some 6,700 in all.
func (r repo) manyLoose() bool {
	f, err := os.Open(filepath.Join(r.dir, "objects", "17"))
	if err != nil {
		return false
	}
	defer f.Close()
	names, _ := f.Readdirnames(28)
	return len(names) > 27
}

// collect drops the objects of the checkpoints no longer kept, in the
// background: the hook does not wait for it. Objects younger than an hour
// stay, so a checkpoint being written meanwhile loses nothing.
func (r repo) collect() {
	cmd := exec.Command("git", "gc", "--quiet", "--prune=1.hour.ago")
	cmd.Dir = r.dir
	cmd.Env = append(os.Environ(), r.env()...)
	detach(cmd)
	if cmd.Start() == nil {
		if waitCollect {
			cmd.Wait()
			return
		}
		go cmd.Wait()
		cmd.Process.Release()
	}
}

// waitCollect makes the collection run in the foreground (for the tests,
// whose temporary directories must not be removed under a running gc).
var waitCollect = false

func ref(seq int) string { return fmt.Sprintf("%s%010d", RefPrefix, seq) }

// oneLine makes a tool call a checkpoint's subject.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > maxMessage {
		s = s[:maxMessage] + "…"
	}
	if s == "" {
		s = "(no message)"
	}
	return s
}

// lock serialises the checkpoints of one project: tool calls run in
// parallel, and git's own index lock would fail the second instead of
// making it wait. A lock older than a minute is a dead holder's.
func (r repo) lock() (func(), error) {
	if err := os.MkdirAll(r.dir, 0o700); err != nil {
		return nil, err
	}
	path := filepath.Join(r.dir, "harness-lock")
	deadline := time.Now().Add(Timeout)
	for {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if err == nil {
			fmt.Fprintf(f, "%d\n", os.Getpid())
			f.Close()
			return func() { os.Remove(path) }, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return nil, err
		}
		if fi, err := os.Stat(path); err == nil && time.Since(fi.ModTime()) > time.Minute {
			os.Remove(path)
			continue
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("shadow: %s is held", path)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
