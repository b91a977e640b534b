// Package remote carries a job's state through a git remote, so that
// workers on several machines share one job without a server of their own:
// the job (its tasks file) lives in the tree of a commit on the remote's
// refs/harness/state, each task that changed since on a ref of its own
// (refs/harness/tasks/<id>), and every change is a new commit on the refs
// it moves, pushed with compare-and-swap (git push --force-with-lease),
// which every git server applies atomically. Two changes race only when
// they move the same ref: the same task, or the job as a whole. The
// history of those refs is the job's audit trail.
//
// This package is the transport alone: fetch the refs, read what they
// hold, write commits on top of them, push them if they are still where
// they were. What a change is, which refs it moves, and how one that lost
// the race is replayed, is internal/state's (UpdateThen).
package remote

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/harness-agent/harness/internal/atomicfile"
	"github.com/harness-agent/harness/internal/git"
	"github.com/harness-agent/harness/internal/record"
	"github.com/harness-agent/harness/internal/safefile"
)

// StateRef is the ref on the remote that holds the job's state.
const StateRef = "refs/harness/state"

// trackRef is where this repository keeps the state commit last fetched.
const trackRef = "refs/harness/remote/state"

// TasksFile is the tasks file's name in a state commit's tree.
const TasksFile = "harness-tasks.json"

// LogFile is machine's progress log's name in its machine ref's tree (in
// the state commit's, on a job shared before machine refs).
func LogFile(machine string) string { return "harness-progress." + machine + ".txt" }

// tasksPrefix holds one ref per task that changed since it was added to
// the job, refs/harness/tasks/<id>: a commit whose tree holds the task's
// entry (TaskFile), which stands for the task's entry in the state
// commit's tasks file. Every change of a task moves its ref alone, so two
// machines changing different tasks never race.
const tasksPrefix = "refs/harness/tasks/"

// TaskRefs is what Fetch takes to bring every task's ref (it always does).
const TaskRefs = tasksPrefix

// TaskRef is the ref of the task id on the remote.
func TaskRef(id string) string { return tasksPrefix + id }

// TaskFile is the task's entry's name in a task ref's tree: the task's
// JSON object, as in the tasks file.
const TaskFile = "task.json"

// machinesPrefix holds one ref per machine, refs/harness/machines/<name>:
// a commit whose tree holds the machine's log and its supervisor's board.
// Only that machine moves it (a forced push), so publishing a log or a
// board never races, nor makes another machine's change of the state
// race: the state ref moves for changes of the state alone.
const machinesPrefix = "refs/harness/machines/"

// MachineRefs is what Fetch takes to bring every machine's ref.
const MachineRefs = machinesPrefix

// MachineRef is machine's ref on the remote.
func MachineRef(machine string) string { return machinesPrefix + machine }

// Timeout bounds each network step (a fetch or a push): a remote that does
// not answer costs the change, never a hang. A hook's steps get
// HookTimeout: Claude Code gives a hook 30 s (5 s at the session's end).
var Timeout = 20 * time.Second

// HookTimeout bounds a network step in a hook's process.
const HookTimeout = 4 * time.Second

func netTimeout() time.Duration {
	if record.Trusted() {
		return HookTimeout
	}
	return Timeout
}

// Config says through which remote the job of a state root is shared, and
// under which name this machine takes part. It is kept in the record's
// directory (outside the work tree, read-only to a sandboxed agent).
type Config struct {
	Remote  string `json:"remote"`
	Machine string `json:"machine"`
	// Clone is this clone's id (CloneID): the claims its workers make
	// carry it, so that a supervisor releases only claims it can prove
	// are its own, whatever the machine's name.
	Clone string `json:"clone,omitempty"`
}

const configName = "remote.json"

// syncedName holds what this machine last took from or gave to the remote:
// the state commit its tasks file is, and how much of its log it published.
const syncedName = "remote-synced.json"

func configPath(root string) string {
	if d := record.Dir(root); d != "" {
		return filepath.Join(d, configName)
	}
	return ""
}

// Load returns the remote configuration of root; ok is false when the job
// is not shared through a remote (the common case: one stat).
func Load(root string) (c Config, ok bool) {
	p := configPath(root)
	if p == "" {
		return c, false
	}
	data, err := safefile.ReadFile(p, 64<<10)
	if err != nil {
		return c, false
	}
	if json.Unmarshal(data, &c) != nil || c.Remote == "" || c.Machine == "" {
		return c, false
	}
	return c, true
}

// ValidMachine reports why name cannot name a machine, "" when it can: it
// becomes part of worker ids, branch names and file names.
func ValidMachine(name string) string {
	ok := len(name) >= 1 && len(name) <= 40 && name[0] != '.' && name[0] != '_'
	for _, r := range name {
		ok = ok && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '.')
	}
	if !ok {
		return fmt.Sprintf("machine name %q must be 1 to 40 letters, digits, '_' or '.', starting with a letter or digit", name)
	}
	return ""
}

// DefaultMachine is the default name of the clone whose id is clone: the
// host's name made fit for a machine name, a dot, and the clone's id. Host
// names are shared more often than one would think (two clones on one
// laptop, containers of one image, CI runners); a clone's id is not.
func DefaultMachine(clone string) string {
	h, _ := os.Hostname()
	h, _, _ = strings.Cut(h, ".")
	var b strings.Builder
	for _, r := range h {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' {
			b.WriteRune(r)
		}
	}
	host := b.String()
	if host == "" {
		host = "machine"
	}
	if clone == "" {
		return host[:min(len(host), 40)]
	}
	return host[:min(len(host), 39-len(clone))] + "." + clone
}

// cloneName holds the clone's id in its record directory.
const cloneName = "clone-id"

// cloneIDLen is how many characters a clone's id has: 36^6, some two
// billion, so that the clones of one job do not meet by chance.
const cloneIDLen = 6

// CloneID returns the id of the clone whose state root is root, made and
// kept in its record directory the first time: short, stable while the
// clone stays where it is, and unlike any other clone's. It is not a
// secret; it tells clones apart, it does not authenticate them.
func CloneID(root string) (string, error) {
	d := record.Dir(root)
	if d == "" {
		return "", errors.New("no state directory for the record (HOME unset)")
	}
	p := filepath.Join(d, cloneName)
	if id := readCloneID(p); id != "" {
		return id, nil
	}
	if err := os.MkdirAll(d, 0o700); err != nil {
		return "", err
	}
	const digits = "0123456789abcdefghijklmnopqrstuvwxyz"
	id := make([]byte, cloneIDLen)
	for i := range id {
		id[i] = digits[rand.IntN(len(digits))]
	}
	// O_EXCL: two commands starting at once in one clone keep one id.
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		_, err = f.Write(append(id, '\n'))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(p)
			return "", err
		}
		return string(id), nil
	}
	if id := readCloneID(p); id != "" {
		return id, nil
	}
	if !errors.Is(err, os.ErrExist) {
		return "", fmt.Errorf("cannot make the clone's id in %s: %w", p, err)
	}
	// A file there that holds no id (cut short, edited): a new one.
	if err := atomicfile.Replace(p, append(id, '\n'), 0o600); err != nil {
		return "", fmt.Errorf("cannot make the clone's id in %s: %w", p, err)
	}
	return string(id), nil
}

func readCloneID(p string) string {
	data, err := safefile.ReadFile(p, 256)
	if err != nil {
		return ""
	}
	id := strings.TrimSpace(string(data))
	if len(id) != cloneIDLen || ValidMachine(id) != "" {
		return ""
	}
	return id
}

// Save records that root's job is shared through c.
func Save(root string, c Config) error {
	p := configPath(root)
	if p == "" {
		return errors.New("no state directory for the record (HOME unset)")
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	data, _ := json.Marshal(c)
	return atomicfile.Replace(p, data, 0o600)
}

// Synced is what this machine last took from or gave to the remote.
type Synced struct {
	Commit string `json:"commit"` // the state commit the local tasks file is made of
	// Refs stands for the state commit and every task ref's commit the
	// local tasks file is made of (a hash of them): when it is what was
	// fetched, the file is the remote's already.
	Refs string `json:"refs,omitempty"`
	Log  int64  `json:"log"` // the size of the local log as last published
	// Machine is the commit this clone last pushed on its machine's ref:
	// the ref found elsewhere was moved by another clone.
	Machine string `json:"machine,omitempty"`
}

// ReadSynced returns root's Synced, zero when none.
func ReadSynced(root string) Synced {
	var s Synced
	if d := record.Dir(root); d != "" {
		if data, err := safefile.ReadFile(filepath.Join(d, syncedName), 64<<10); err == nil {
			json.Unmarshal(data, &s)
		}
	}
	return s
}

// WriteSynced records s. The caller holds the transaction lock.
func WriteSynced(root string, s Synced) {
	if d := record.Dir(root); d != "" {
		data, _ := json.Marshal(s)
		atomicfile.Replace(filepath.Join(d, syncedName), data, 0o600)
	}
}

// ErrUnreachable wraps every failure to reach the remote.
var ErrUnreachable = errors.New("remote unreachable")

// netEnv keeps git from asking for credentials on a terminal nobody reads.
var netEnv = []string{"GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=true", "SSH_ASKPASS=true"}

// Fetch brings the remote's state ref, its task refs and the extra refs
// into this repository (each under refs/harness/remote/…), in one fetch,
// and returns the commit each named one is at on the remote, "" for one
// that does not exist there (the task refs: Tracked).
func (c Config) Fetch(dir string, extra ...string) (map[string]string, error) {
	refs := []string{StateRef, tasksPrefix}
	for _, r := range extra {
		if r != tasksPrefix {
			refs = append(refs, r)
		}
	}
	args := []string{"fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--no-auto-gc", "--prune", c.Remote}
	for _, r := range refs {
		// A pattern refspec: a ref missing on the remote is no error, and
		// --prune drops the local copy of one that was deleted there.
		args = append(args, "+"+r+"*:"+Track(r)+"*")
	}
	if _, err := (git.Cmd{Dir: dir, Env: netEnv, Timeout: netTimeout()}).Run(args...); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnreachable, err)
	}
	out := map[string]string{}
	for _, r := range refs {
		if !strings.HasSuffix(r, "/") { // a prefix has no one commit
			out[r] = git.RefHead(dir, Track(r))
		}
	}
	return out, nil
}

// BoardFile is machine's supervisor's board in its machine ref's tree: its
// workers and how they stand, for `harness status --remote`.
func BoardFile(machine string) string { return "harness-workers." + machine + ".json" }

// TrackedHead is the state commit last fetched here, "" when none.
func TrackedHead(dir string) string { return git.RefHead(dir, trackRef) }

// Track is where this repository keeps its copy of the remote's ref.
func Track(ref string) string {
	if ref == StateRef {
		return trackRef
	}
	return "refs/harness/remote/" + strings.TrimPrefix(ref, "refs/")
}

// Published lists the machines whose refs were last fetched into dir's
// repository, each with its ref's commit.
func Published(dir string) map[string]string {
	out := map[string]string{}
	prefix := Track(machinesPrefix)
	lines, _ := git.Run(dir, "for-each-ref", "--format=%(objectname) %(refname)", prefix)
	for _, l := range strings.Split(lines, "\n") {
		if commit, ref, ok := strings.Cut(l, " "); ok {
			out[strings.TrimPrefix(ref, prefix)] = commit
		}
	}
	return out
}

// MachineFile reads name (LogFile, BoardFile) of machine as last fetched:
// from its machine ref, else from the state commit's tree, where a job
// shared before machine refs kept them.
func MachineFile(dir, machine, name string) ([]byte, bool) {
	if commit := git.RefHead(dir, Track(MachineRef(machine))); commit != "" {
		if data, ok := Read(dir, commit, name); ok {
			return data, true
		}
	}
	return Read(dir, TrackedHead(dir), name)
}

// MachineTime is when machine last published its ref, as last fetched;
// zero when never.
func MachineTime(dir, machine string) time.Time {
	commit := git.RefHead(dir, Track(MachineRef(machine)))
	if commit == "" {
		return time.Time{}
	}
	out, err := git.Run(dir, "log", "-1", "--format=%ct", commit)
	if err != nil {
		return time.Time{}
	}
	var sec int64
	if _, err := fmt.Sscan(out, &sec); err != nil {
		return time.Time{}
	}
	return time.Unix(sec, 0).UTC()
}

// Tracked returns the state commit and each task's ref (task id → commit)
// as last fetched into dir's repository, read in one step.
func Tracked(dir string) (state string, tasks map[string]string) {
	tasks = map[string]string{}
	prefix := Track(tasksPrefix)
	out, _ := git.Run(dir, "for-each-ref", "--format=%(objectname) %(refname)", trackRef, prefix)
	for _, l := range strings.Split(out, "\n") {
		commit, ref, ok := strings.Cut(l, " ")
		switch {
		case !ok:
		case ref == trackRef:
			state = commit
		default:
			tasks[strings.TrimPrefix(ref, prefix)] = commit
		}
	}
	return state, tasks
}

// ReadAll returns the file of each "commit:name" of specs, in one git
// process; nil for one that does not exist.
func ReadAll(dir string, specs []string) [][]byte {
	out := make([][]byte, len(specs))
	if len(specs) == 0 {
		return out
	}
	var in strings.Builder
	for _, s := range specs {
		in.WriteString(s + "\n")
	}
	data, err := git.Cmd{Dir: dir, Stdin: []byte(in.String())}.Output("cat-file", "--batch")
	if err != nil {
		return out
	}
	// Each answer: "<oid> <type> <size>\n<content>\n", or "<spec> missing\n".
	for i := range specs {
		line, rest, ok := bytes.Cut(data, []byte("\n"))
		if !ok {
			break
		}
		data = rest
		f := strings.Fields(string(line))
		if len(f) != 3 || f[1] != "blob" {
			continue
		}
		n, err := strconv.Atoi(f[2])
		if err != nil || n+1 > len(data) {
			break
		}
		out[i], data = data[:n:n], data[n+1:]
	}
	return out
}

// Read returns the file name in the tree of commit, byte for byte; ok is
// false when it has none.
func Read(dir, commit, name string) ([]byte, bool) {
	if commit == "" {
		return nil, false
	}
	data, err := git.Cmd{Dir: dir}.Output("cat-file", "blob", commit+":"+name)
	return data, err == nil
}

// Files lists the names in the tree of commit.
func Files(dir, commit string) []string {
	if commit == "" {
		return nil
	}
	out, err := git.Run(dir, "ls-tree", "--name-only", commit)
	if err != nil || out == "" {
		return nil
	}
	return strings.Split(out, "\n")
}

// Commit writes a state commit on parent ("" for the first) whose tree is
// parent's with files replaced, and returns it.
func Commit(dir, parent string, files map[string][]byte, message string) (string, error) {
	entries := map[string]string{}
	if parent != "" {
		out, err := git.Run(dir, "ls-tree", parent)
		if err != nil {
			return "", err
		}
		for _, line := range strings.Split(out, "\n") {
			if meta, name, ok := strings.Cut(line, "\t"); ok {
				entries[name] = meta
			}
		}
	}
	for name, data := range files {
		hash, err := git.Cmd{Dir: dir, Stdin: data}.Run("hash-object", "-w", "--stdin")
		if err != nil {
			return "", err
		}
		entries[name] = "100644 blob " + hash
	}
	var tree strings.Builder
	for name, meta := range entries {
		fmt.Fprintf(&tree, "%s\t%s\n", meta, name)
	}
	return commitTree(dir, tree.String(), parent, message)
}

// CommitFile writes a commit on parent ("" for the first) whose tree holds
// name alone, and returns it: a task ref's commit.
func CommitFile(dir, parent, name string, data []byte, message string) (string, error) {
	hash, err := git.Cmd{Dir: dir, Stdin: data}.Run("hash-object", "-w", "--stdin")
	if err != nil {
		return "", err
	}
	return commitTree(dir, "100644 blob "+hash+"\t"+name+"\n", parent, message)
}

// commitTree makes the tree that tree lists (git mktree's input) and a
// commit of it on parent ("" for the first), and returns the commit.
func commitTree(dir, tree, parent, message string) (string, error) {
	treeHash, err := git.Cmd{Dir: dir, Stdin: []byte(tree)}.Run("mktree")
	if err != nil {
		return "", err
	}
	args := []string{"commit-tree", treeHash, "-m", message}
	if parent != "" {
		args = append(args, "-p", parent)
	}
	return git.Cmd{Dir: dir, Env: identity}.Run(args...)
}

var identity = []string{"GIT_AUTHOR_NAME=harness", "GIT_AUTHOR_EMAIL=harness@localhost",
	"GIT_COMMITTER_NAME=harness", "GIT_COMMITTER_EMAIL=harness@localhost"}

// Update is one ref to move on the remote: from Old ("" when it must not
// exist yet) to New ("" deletes it). Force moves it from wherever it is
// (a ref only its writer moves: a queued task's commit).
type Update struct {
	Ref, Old, New string
	Force         bool
}

// ErrLost is returned by Push when a ref was no longer where the push
// expected it: another machine pushed first.
var ErrLost = errors.New("the remote moved first")

// Push moves every ref of ups on the remote at once, each only if it is
// still at its Old (one atomic compare-and-swap). On success the local
// copies follow. ErrLost: some ref had moved, nothing was changed.
// ErrUnreachable: the remote did not answer.
func (c Config) Push(dir string, ups ...Update) error {
	args := []string{"push", "--quiet", "--porcelain", "--atomic", "--no-verify", c.Remote}
	for _, u := range ups {
		if !u.Force {
			args = append(args, "--force-with-lease="+u.Ref+":"+u.Old)
		}
	}
	for _, u := range ups {
		if u.Force {
			args = append(args, "+"+u.New+":"+u.Ref)
			continue
		}
		// No "+": a forced refspec would override the lease.
		args = append(args, u.New+":"+u.Ref)
	}
	if out, err := (git.Cmd{Dir: dir, Env: netEnv, Timeout: netTimeout()}).Output(args...); err != nil {
		return classify(string(out), err)
	}
	// The local copies follow, in one git process.
	var in strings.Builder
	for _, u := range ups {
		if u.New == "" {
			fmt.Fprintf(&in, "delete %s\n", Track(u.Ref))
		} else {
			fmt.Fprintf(&in, "update %s %s\n", Track(u.Ref), u.New)
		}
	}
	git.Cmd{Dir: dir, Stdin: []byte(in.String())}.Run("update-ref", "--stdin")
	return nil
}

// Change is one commit of the history of the state ref or of a task's.
type Change struct {
	Commit  string
	Ref     string    // the ref on the remote it moved: StateRef or a TaskRef
	Time    time.Time // when it was made (the committer's clock)
	Subject string    // who made it, by which command
}

// ErrRefused is a push the remote refused for a reason of its own (a
// server hook, a protected ref): trying again does not help.
var ErrRefused = errors.New("the remote refused the push")

// classify names why a push failed, from what git's --porcelain printed
// of each ref on stdout. A ref that moved before the push ("stale info",
// "fetch first"), or that another push held locked on the server at the
// same instant ("cannot lock ref", "failed to update ref", and with
// --atomic every ref of the push: "atomic transaction failed"), lost a
// race. Any other refusal by the server is its own. Anything else did not
// reach it.
func classify(porcelain string, err error) error {
	switch {
	case strings.Contains(porcelain, "stale info"), strings.Contains(porcelain, "[rejected]"):
		return ErrLost
	case strings.Contains(porcelain, "[remote rejected]"):
		for _, race := range []string{"lock", "failed to update ref", "atomic", "expected"} {
			if strings.Contains(porcelain, race) {
				return ErrLost
			}
		}
		return fmt.Errorf("%w: %s", ErrRefused, oneLine(porcelain+" "+err.Error()))
	}
	return fmt.Errorf("%w: %s", ErrUnreachable, oneLine(err.Error()))
}

// Changes lists the changes of the state ref and of every task's ref as
// last fetched, oldest first, a ref's own in the order they were made (one
// git process: their histories share no commit).
func Changes(dir string) ([]Change, error) {
	if git.RefHead(dir, trackRef) == "" {
		return nil, nil
	}
	out, err := git.Run(dir, "log", "--reverse", "--date-order", "--source", "--format=%H %ct %S %s",
		trackRef, "--glob="+strings.TrimSuffix(Track(tasksPrefix), "/"))
	if err != nil || out == "" {
		return nil, err
	}
	var changes []Change
	for _, line := range strings.Split(out, "\n") {
		parts := strings.SplitN(line, " ", 4)
		if len(parts) < 4 {
			continue
		}
		var sec int64
		fmt.Sscan(parts[1], &sec)
		ref := StateRef
		if id, ok := strings.CutPrefix(parts[2], Track(tasksPrefix)); ok {
			ref = TaskRef(id)
		} else if parts[2] != trackRef {
			continue
		}
		changes = append(changes, Change{Commit: parts[0], Ref: ref, Time: time.Unix(sec, 0).UTC(), Subject: parts[3]})
	}
	return changes, nil
}

// Subject is a commit's one-line message.
func Subject(dir, commit string) string {
	out, _ := git.Run(dir, "log", "-1", "--format=%s", commit)
	return out
}

// oneLine folds git's several lines of error into one.
func oneLine(s string) string {
	var parts []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			parts = append(parts, l)
		}
	}
	return strings.Join(parts, " ")
}
