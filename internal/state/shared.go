package state

// A job shared through a git remote (internal/remote): the remote's refs
// are the state, and this machine's tasks file a copy of what they make:
// the tasks file of refs/harness/state with each task that has a ref of its
// own (refs/harness/tasks/<id>) as that ref has it. A change of tasks moves
// those tasks' refs alone; a change of the job as a whole (tasks added or
// removed, settings, session counts) moves the state ref. Every change is
// made on the state as the remote has it and published by one atomic
// compare-and-swap of the refs it moves before it is written here, so two
// changes race only when they move the same ref: the same task, or the
// job. A change that lost the race is replayed on the new state when the
// tasks it touched did not move there, and refused as no longer applying
// when they did.

import (
	"bytes"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/harness-agent/harness/internal/failure"
	"github.com/harness-agent/harness/internal/git"
	"github.com/harness-agent/harness/internal/lock"
	"github.com/harness-agent/harness/internal/progress"
	"github.com/harness-agent/harness/internal/record"
	"github.com/harness-agent/harness/internal/remote"
	"github.com/harness-agent/harness/internal/safefile"
	"github.com/tidwall/gjson"
)

// Shared reports whether the job of dir is shared through a git remote,
// and how.
func Shared(dir string) (remote.Config, bool) { return remote.Load(dir) }

// PublishRef asks the change being made to move ref on the remote from old
// to new in the same atomic push as the state (the integration branch, when
// the merge queue completes tasks). Only a shared job has refs to publish;
// for others it does nothing.
func (s *State) PublishRef(ref, old, new string) {
	s.publish = append(s.publish, remote.Update{Ref: ref, Old: old, New: new})
}

// ErrRefMoved is returned by a change whose PublishRef found the ref moved
// on the remote: the integration branch got a new tip meanwhile.
var ErrRefMoved = errors.New("a published ref moved on the remote")

// Conflict is a change that no longer applies: a task it changed was
// changed on the remote by another machine since.
type Conflict struct {
	Task string // the task changed on both sides ("" for the job's settings)
	By   string // the message of the commit that changed it
}

func (c *Conflict) Error() string {
	what := "the job"
	if c.Task != "" {
		what = c.Task
	}
	return fmt.Sprintf("%s changed on the remote meanwhile (%s): this change no longer applies and was not made", what, c.By)
}

// beforePush, when set (by tests), runs just before each push: another
// machine's change made there makes this one lose the race.
var beforePush func()

// maxRaces bounds the replays of one change: past it the remote is too
// busy, and the change is refused rather than retried for ever.
const maxRaces = 50

// updateShared is UpdateThen for a job shared through rc. The caller holds
// the transaction lock.
func updateShared(dir string, rc remote.Config, fn func(*State) error, written func(*State)) (*State, error) {
	if _, err := rc.Fetch(dir); err != nil {
		return nil, unreachable(rc, err)
	}
	if _, err := materialize(dir); err != nil {
		return nil, err
	}
	s, err := loadForChange(dir)
	if err != nil {
		return s, err
	}
	lines, err := progress.Hold(dir, func() error { return fn(s) })
	if err != nil {
		progress.AppendBytes(dir, lines) // a refusal's lines are true
		return s, err
	}
	doc, touched, err := s.apply()
	if err != nil {
		return s, failure.Wrap(failure.EnvSetup, err, "cannot edit %s: %v", Path(dir), err)
	}
	if string(doc) != string(s.raw) {
		if err := s.readBack(doc, touched); err != nil {
			return s, failure.Wrap(failure.EnvSetup, err, "refusing to write an invalid %s: %v", FileName, err)
		}
	} else if len(s.publish) == 0 {
		progress.AppendBytes(dir, lines)
		return s, nil
	}
	c := &change{dir: dir, rc: rc, s: s, doc: doc, lines: lines}
	if err := c.publish(); err != nil {
		return s, err
	}
	// Published: now, and only now, the change is this machine's too.
	progress.AppendBytes(dir, c.lines)
	for _, l := range c.lost {
		progress.AppendBytes(dir, l)
	}
	// The local file becomes what the refs make now, byte for byte what
	// any machine makes of them: the change's own file when it did not
	// race (compose: the refs it pushed make it), else made again.
	var made []byte
	if len(c.lost) == 0 {
		if _, err := s.save(); err != nil {
			return s, err
		}
		synced := remote.ReadSynced(dir)
		v := tracked(dir)
		synced.Commit, synced.Refs = v.head, v.sum()
		remote.WriteSynced(dir, synced)
	} else if made, err = materialize(dir); err != nil {
		return s, err
	}
	if made != nil {
		ns, err := Parse(made, Path(dir))
		if err != nil {
			return s, err
		}
		ns.Dir = dir
		ns.snapshot()
		s = ns
	}
	if written != nil {
		written(s)
	}
	return s, nil
}

// change is one change of a shared job on its way to the remote.
type change struct {
	dir   string
	rc    remote.Config
	s     *State   // the state as the change left it
	doc   []byte   // the tasks file it makes
	lines []byte   // the log lines it wrote
	lost  [][]byte // a LOCK line per race it lost and was replayed
}

// publish pushes the change: a commit on the ref of each task it changed,
// and on the state ref when it changed the job as a whole, with the refs
// it moves (PublishRef), as one compare-and-swap. A lost race fetches the
// new state and replays the change on it (replay), until it lands, no
// longer applies (*Conflict), moves a ref another machine moved
// (ErrRefMoved), or has lost too often or too long.
func (c *change) publish() error {
	message := changeMessage(c.rc)
	// A change that keeps losing gives up in bounded time, sooner in a
	// hook (whose Claude Code timeout is 30 s).
	deadline := time.Now().Add(time.Minute)
	if record.Trusted() {
		deadline = time.Now().Add(10 * time.Second)
	}
	var refs []string
	for _, u := range c.s.publish {
		refs = append(refs, u.Ref)
	}
	for race := 1; ; race++ {
		ups, err := c.updates(message)
		if err != nil {
			return failure.Wrap(failure.EnvSetup, err, "cannot write the state commit: %v", err)
		}
		if beforePush != nil {
			beforePush()
		}
		err = c.rc.Push(c.dir, ups...)
		if err == nil {
			return nil
		}
		if !errors.Is(err, remote.ErrLost) {
			return unreachable(c.rc, err)
		}
		if race >= maxRaces || time.Now().After(deadline) {
			return failure.New(failure.EnvSetup, "%s: lost the race for %s %d times in a row; the change was not made", c.rc.Remote, refList(ups), race).
				WithHint("too many machines write the job at once; run the command again")
		}
		time.Sleep(backoff(race - 1))
		heads, err := c.rc.Fetch(c.dir, refs...)
		if err != nil {
			return unreachable(c.rc, err)
		}
		for _, u := range c.s.publish {
			if heads[u.Ref] != u.Old {
				return ErrRefMoved
			}
		}
		ref, by := moved(c.dir, ups)
		theirs, _, err := compose(c.dir, tracked(c.dir))
		if err != nil {
			return err
		}
		doc, conflict := replay(c.s, theirs, by)
		if conflict != nil {
			progress.Append(c.dir, progress.Entry{Time: time.Now(), Session: c.s.SessionCount, Type: progress.Lock,
				Message: fmt.Sprintf("remote push of `%s` rejected: %s", commandLine(), conflict.Error())})
			materialize(c.dir)
			return failure.Wrap(failure.Usage, conflict, "%s", conflict.Error()).
				WithHint("run `harness status` to see the job as it is now")
		}
		c.lost = append(c.lost, []byte(progress.Entry{Time: time.Now(), Session: c.s.SessionCount, Type: progress.Lock,
			Message: fmt.Sprintf("remote push of `%s` rejected: %s moved (%s); replayed on the new state", commandLine(), ref, by)}.String()+"\n"))
		c.doc = doc
	}
}

// updates writes the commits of the change on the refs as last fetched
// and returns the moves that publish them: the ref of each task the change
// changed, from where it was (a task's first change creates it); the state
// ref when the change is the job's (jobLevel), with the removed tasks'
// refs deleted; and the refs the change publishes with them.
func (c *change) updates(message string) ([]remote.Update, error) {
	v := tracked(c.dir)
	var ups []remote.Update
	if v.head == "" || jobLevel(c.s) {
		commit, err := remote.Commit(c.dir, v.head, map[string][]byte{remote.TasksFile: c.doc}, message)
		if err != nil {
			return nil, err
		}
		ups = append(ups, remote.Update{Ref: remote.StateRef, Old: v.head, New: commit})
		for _, i := range c.s.removed {
			if id := c.s.origTasks[i].ID; v.tasks[id] != "" {
				ups = append(ups, remote.Update{Ref: remote.TaskRef(id), Old: v.tasks[id]})
			}
		}
	}
	if len(c.s.removed) == 0 {
		for i := range c.s.origTasks {
			t := &c.s.Tasks[i]
			if unchanged(&c.s.origTasks[i], t) {
				continue
			}
			entry := taskEntry(c.doc, t.ID)
			if entry == nil {
				return nil, fmt.Errorf("%s is not in the tasks file the change makes", t.ID)
			}
			old := v.tasks[t.ID]
			commit, err := remote.CommitFile(c.dir, old, remote.TaskFile, entry, message)
			if err != nil {
				return nil, err
			}
			ups = append(ups, remote.Update{Ref: remote.TaskRef(t.ID), Old: old, New: commit})
		}
	}
	return append(ups, c.s.publish...), nil
}

// jobLevel reports whether s changed the job as a whole, not only some of
// its tasks: such a change moves the state ref.
func jobLevel(s *State) bool {
	return s.SessionCount != s.origCount || s.LastSession != s.origLast || len(s.configSet) > 0 ||
		len(s.removed) > 0 || len(s.Tasks) > len(s.origTasks)
}

// moved names the first ref of ups that is no longer where the push
// expected it, as just fetched, and the message of the commit that moved
// it; when none did, the server held one locked for another push at the
// same instant.
func moved(dir string, ups []remote.Update) (ref, by string) {
	v := tracked(dir)
	for _, u := range ups {
		now, ok := v.tasks[strings.TrimPrefix(u.Ref, remote.TaskRefs)], strings.HasPrefix(u.Ref, remote.TaskRefs)
		if u.Ref == remote.StateRef {
			now, ok = v.head, true
		}
		if ok && now != u.Old {
			if now == "" {
				return u.Ref, "deleted"
			}
			return u.Ref, remote.Subject(dir, now)
		}
	}
	return refList(ups), "another push at the same instant"
}

// refList names the refs of ups (the ones of the job: not the branch).
func refList(ups []remote.Update) string {
	var names []string
	for _, u := range ups {
		if u.Ref == remote.StateRef || strings.HasPrefix(u.Ref, remote.TaskRefs) {
			names = append(names, u.Ref)
		}
	}
	return strings.Join(names, ", ")
}

// taskEntry is the task id as its ref holds it: its JSON object in doc,
// byte for byte (nil when doc has none).
func taskEntry(doc []byte, id string) []byte {
	var entry []byte
	gjson.GetBytes(doc, "tasks").ForEach(func(_, v gjson.Result) bool {
		if v.Get("id").Str == id {
			entry = append([]byte(v.Raw), '\n')
			return false
		}
		return true
	})
	return entry
}

// parseEntry reads a task ref's entry: nil when it is not the task id.
func parseEntry(entry []byte, id string) *Task {
	if len(entry) == 0 {
		return nil
	}
	doc := make([]byte, 0, len(entry)+16)
	doc = append(append(append(doc, `{"tasks": [`...), entry...), "]}"...)
	return ParseTask(doc, id)
}

// ParseEntry reads the entry a task ref holds (remote.TaskFile): nil when
// it does not parse as the task id.
func ParseEntry(entry []byte, id string) *Task { return parseEntry(entry, id) }

// refs is where the job's refs were last fetched into a repository.
type refs struct {
	head  string            // the state commit
	tasks map[string]string // task id → its ref's commit
}

func tracked(dir string) refs {
	head, tasks := remote.Tracked(dir)
	return refs{head, tasks}
}

// sum stands for v in a few bytes: two machines' tasks files made of the
// same refs are the same file.
func (v refs) sum() string {
	h := fnv.New64a()
	h.Write([]byte(v.head))
	for _, id := range v.ids() {
		h.Write([]byte("\n" + id + " " + v.tasks[id]))
	}
	return fmt.Sprintf("%016x", h.Sum64())
}

func (v refs) ids() []string {
	ids := make([]string, 0, len(v.tasks))
	for id := range v.tasks {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// compose makes the tasks file the refs v hold: the state commit's, the
// entry of each task that has a ref replaced by that ref's, byte for byte
// (a ref of a task the state does not hold, or whose entry does not parse,
// is left out). Its bytes depend on the refs alone, and a change of one
// task's entry in it is that entry's bytes alone: the file a change made
// here is the file the refs it pushed make.
func compose(dir string, v refs) ([]byte, string, error) {
	if v.head == "" {
		return nil, "", nil
	}
	ids := v.ids()
	specs := []string{v.head + ":" + remote.TasksFile}
	for _, id := range ids {
		specs = append(specs, v.tasks[id]+":"+remote.TaskFile)
	}
	blobs := remote.ReadAll(dir, specs)
	if blobs[0] == nil {
		return nil, "", failure.New(failure.EnvSetup, "the remote's %s (%s) holds no %s", remote.StateRef, git.Short(v.head), remote.TasksFile)
	}
	entries := map[string][]byte{}
	for k, id := range ids {
		if parseEntry(blobs[k+1], id) != nil {
			entries[id] = bytes.TrimRight(blobs[k+1], "\n")
		}
	}
	doc := splice(blobs[0], entries)
	if _, err := Parse(doc, Path(dir)); err != nil {
		return nil, "", failure.Wrap(failure.EnvSetup, err, "the remote's %s (%s) and task refs make a tasks file the harness cannot read: %v", remote.StateRef, git.Short(v.head), err)
	}
	return doc, v.sum(), nil
}

// splice returns doc with the entry of each task of entries (id → its JSON
// object) in place of doc's, in one pass.
func splice(doc []byte, entries map[string][]byte) []byte {
	if len(entries) == 0 {
		return doc
	}
	out := make([]byte, 0, len(doc)+len(doc)/4)
	last := 0
	gjson.GetBytes(doc, "tasks").ForEach(func(_, t gjson.Result) bool {
		if e, ok := entries[t.Get("id").Str]; ok && t.Index > last {
			out = append(append(out, doc[last:t.Index]...), e...)
			last = t.Index + len(t.Raw)
		}
		return true
	})
	return append(out, doc[last:]...)
}

// Composed is the tasks file the job's refs make, as last fetched into the
// repository of dir (nil when no state was fetched).
func Composed(dir string) ([]byte, error) {
	doc, _, err := compose(dir, tracked(dir))
	return doc, err
}

// materialize makes the local tasks file the one the refs last fetched
// make, when it is not already: a change of another machine, or this
// machine's own published just before a crash. It returns the file it
// made, nil when the local one was already it. The caller holds the
// transaction lock.
func materialize(dir string) ([]byte, error) {
	v := tracked(dir)
	synced := remote.ReadSynced(dir)
	if v.head == "" || synced.Refs == v.sum() {
		return nil, nil
	}
	data, sum, err := compose(dir, v)
	if err != nil {
		return nil, err
	}
	if cur, err := safefile.ReadFile(Path(dir), MaxFileSize); err != nil || string(cur) != string(data) {
		if err := Restore(dir, data); err != nil {
			return nil, err
		}
	}
	synced.Commit, synced.Refs = v.head, sum
	remote.WriteSynced(dir, synced)
	return data, nil
}

// Materialize makes the local tasks file of dir the one the job's refs
// make, as last fetched: a clone joining the job.
func Materialize(dir string) error {
	_, err := materialize(dir)
	return err
}

// replay makes on theirs, the tasks file as the remote now has it, the
// change mine made to the text it read: each task mine changed or added
// goes in as mine has it when theirs still has it as mine read it, the
// session count moves by as much. A task changed on both sides is a
// conflict: the change no longer applies.
func replay(mine *State, theirs []byte, by string) ([]byte, *Conflict) {
	t, err := Parse(theirs, Path(mine.Dir))
	if err != nil {
		return nil, &Conflict{By: by}
	}
	t.Dir = mine.Dir
	t.snapshot()
	if len(mine.removed) > 0 && string(theirs) != string(mine.raw) {
		return nil, &Conflict{By: by}
	}
	for i := range mine.origTasks {
		if unchanged(&mine.origTasks[i], &mine.Tasks[i]) {
			continue
		}
		id := mine.origTasks[i].ID
		cur := t.Task(id)
		if cur == nil || !unchanged(cur, &mine.origTasks[i]) {
			return nil, &Conflict{Task: id, By: by}
		}
		*cur = mine.Tasks[i].clone()
	}
	for i := len(mine.origTasks); i < len(mine.Tasks); i++ {
		if t.Task(mine.Tasks[i].ID) != nil {
			return nil, &Conflict{Task: mine.Tasks[i].ID, By: by}
		}
		t.Tasks = append(t.Tasks, mine.Tasks[i].clone())
	}
	t.SessionCount += mine.SessionCount - mine.origCount
	if mine.LastSession != mine.origLast {
		t.LastSession = mine.LastSession
	}
	t.configSet = mine.configSet
	doc, touched, err := t.apply()
	if err != nil {
		return nil, &Conflict{By: by}
	}
	if err := t.readBack(doc, touched); err != nil {
		return nil, &Conflict{By: by}
	}
	return doc, nil
}

// backoff is how long a change that lost the race waits before the next
// try: doubling from 20 ms up to 1 s, jittered so that racing machines
// spread out.
func backoff(race int) time.Duration {
	d := 20 * time.Millisecond << min(race, 6)
	d = min(d, time.Second)
	return d/2 + rand.N(d/2+1)
}

func unreachable(rc remote.Config, err error) error {
	if errors.Is(err, remote.ErrRefused) {
		return failure.Wrap(failure.EnvSetup, err, "the job's remote %s refused the change (%v): the change was not made", rc.Remote, err).
			WithHint("this machine must be allowed to push refs/harness/* and the integration branch to %s", rc.Remote)
	}
	return failure.Wrap(failure.EnvSetup, err, "the job's remote %s cannot be reached (%v): the change was not made", rc.Remote, err).
		WithHint("the work in this tree is kept; run the command again when the remote answers (`git fetch %s` tells why it does not)", rc.Remote)
}

// changeMessage is the state commit's message: which machine and worker
// made it, by which command.
func changeMessage(rc remote.Config) string {
	who := rc.Machine
	if w := os.Getenv("HARNESS_WORKER_ID"); w != "" {
		who = w
	}
	return who + ": " + commandLine()
}

func commandLine() string {
	args := make([]string, 0, len(os.Args))
	args = append(args, filepath.Base(os.Args[0]))
	for _, a := range os.Args[1:] {
		if len(args) >= 4 {
			break
		}
		args = append(args, a)
	}
	return progress.OneLine(strings.Join(args, " "))
}

// Sync brings a shared job's local copy up to the remote: the tasks file
// becomes the remote's when another machine changed it. It fetches the
// extra refs too (the integration branch) and returns where each is on
// the remote.
func Sync(dir string, extra ...string) (map[string]string, error) {
	rc, ok := remote.Load(dir)
	if !ok {
		return nil, nil
	}
	unlock, err := lock.Tx(dir)
	if err != nil {
		return nil, failure.Wrap(failure.EnvSetup, err, "%v", err)
	}
	defer unlock()
	heads, err := rc.Fetch(dir, extra...)
	if err != nil {
		return nil, unreachable(rc, err)
	}
	_, err = materialize(dir)
	return heads, err
}

// ErrMachineMoved is returned by PublishLog when the machine's ref was
// not where this clone left it: another clone publishes under the same
// machine name.
var ErrMachineMoved = errors.New("the machine's ref moved on the remote: another clone publishes under this machine's name")

// PublishLog gives the remote this machine's log, when it grew since it
// was last published, and files of the machine's own (name → content, the
// supervisor's board) that differ from what the remote has: a commit on
// the machine's own ref (remote.MachineRef), which no other machine moves.
// So it does not race other machines, and never makes another machine's
// change race: the state ref is not moved. It is pushed with a lease on
// where this clone last saw it all the same: ErrMachineMoved says another
// clone took the name, and so does a ref fetched since (the supervisor
// fetches every machine's) that is not where this clone last pushed it.
func PublishLog(dir string, files map[string][]byte) error {
	rc, ok := remote.Load(dir)
	if !ok {
		return nil
	}
	unlock, err := lock.Tx(dir)
	if err != nil {
		return failure.Wrap(failure.EnvSetup, err, "%v", err)
	}
	defer unlock()
	synced := remote.ReadSynced(dir)
	logText, err := safefile.ReadFile(progress.Path(dir), record.MaxLog)
	if err != nil {
		return nil
	}
	ref := remote.MachineRef(rc.Machine)
	tip := git.RefHead(dir, remote.Track(ref))
	if synced.Machine != "" && tip != synced.Machine {
		// Fetched moved since this clone last pushed it.
		return ErrMachineMoved
	}
	changed := map[string][]byte{}
	for name, data := range files {
		if cur, ok := remote.Read(dir, tip, name); !ok || string(cur) != string(data) {
			changed[name] = data
		}
	}
	if int64(len(logText)) == synced.Log && tip != "" && len(changed) == 0 {
		return nil
	}
	changed[remote.LogFile(rc.Machine)] = logText
	commit, err := remote.Commit(dir, tip, changed, rc.Machine+": log")
	if err != nil {
		return failure.Wrap(failure.EnvSetup, err, "cannot write the machine's commit: %v", err)
	}
	if err := rc.Push(dir, remote.Update{Ref: ref, Old: tip, New: commit}); err != nil {
		if errors.Is(err, remote.ErrLost) {
			return ErrMachineMoved
		}
		return unreachable(rc, err)
	}
	synced.Log, synced.Machine = int64(len(logText)), commit
	remote.WriteSynced(dir, synced)
	return nil
}

// TakeMachineRef makes the machine's ref, where it was last fetched, the
// one this clone's next PublishLog builds on: the name was judged free
// (workers.CheckName) though another clone, or this one before a crash,
// moved the ref since this clone last pushed it.
func TakeMachineRef(dir string) error {
	rc, ok := remote.Load(dir)
	if !ok {
		return nil
	}
	unlock, err := lock.Tx(dir)
	if err != nil {
		return failure.Wrap(failure.EnvSetup, err, "%v", err)
	}
	defer unlock()
	synced := remote.ReadSynced(dir)
	synced.Machine = git.RefHead(dir, remote.Track(remote.MachineRef(rc.Machine)))
	remote.WriteSynced(dir, synced)
	return nil
}
