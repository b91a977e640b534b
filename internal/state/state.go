// Package state reads and writes harness-tasks.json, the structured state of a
// long job.
//
// Reads are tolerant and precise: a field of the wrong type or a missing
// required field is a CONFIG error naming the file and the field, never a
// panic and never a guess. Writes change only what changed: fields the harness
// does not know (a user's own keys, a future schema) survive byte for byte,
// and so does the layout. Every write is atomic (temporary file, fsync,
// rename), made under the transaction lock, after the previous good file has
// been copied to harness-tasks.json.bak, so a reader never sees a partial file
// and a corrupt file can always be restored from the backup.
package state

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/harness-agent/harness/internal/atomicfile"
	"github.com/harness-agent/harness/internal/failure"
	"github.com/harness-agent/harness/internal/jsondepth"
	"github.com/harness-agent/harness/internal/lock"
	"github.com/harness-agent/harness/internal/progress"
	"github.com/harness-agent/harness/internal/record"
	"github.com/harness-agent/harness/internal/remote"
	"github.com/harness-agent/harness/internal/root"
	"github.com/harness-agent/harness/internal/safefile"
)

// File names inside the state root.
const (
	FileName   = root.TasksFile
	BackupName = FileName + ".bak"
)

// Task statuses.
const (
	Pending    = "pending"
	InProgress = "in_progress"
	Completed  = "completed"
	Failed     = "failed"
)

// Concurrency modes.
const (
	Exclusive  = "exclusive"
	Concurrent = "concurrent"
)

// Defaults applied when a field is absent.
const (
	DefaultMaxAttempts    = 3
	DefaultTimeoutSeconds = 300
	DefaultReflect        = 3
)

// Checkpoint is one recorded step of a task.
type Checkpoint struct {
	Step        int    `json:"step"`
	Total       int    `json:"total"`
	Description string `json:"description"`
	Timestamp   string `json:"timestamp"`
}

// Task is one entry of tasks[]. Empty strings stand for JSON null.
type Task struct {
	ID              string
	Title           string
	Status          string
	Priority        string
	DependsOn       []string
	Attempts        int
	MaxAttempts     int
	StartedAtCommit string
	Command         string // validation.command
	TimeoutSeconds  int    // validation.timeout_seconds
	Cleanup         string // on_failure.cleanup
	ErrorLog        []string
	Checkpoints     []Checkpoint
	CompletedAt     string
	FailedAt        string // when the task last failed: orders retries
	ClaimedBy       string
	ClaimedAt       string
	LeaseExpiresAt  string
	AllowedPaths    []string // scope lock globs, relative to the root
	Worktree        string   // the git work tree the claim works in
	// ClaimedClone is, on a job shared through a remote, the id of the
	// clone whose worker holds the claim (remote.CloneID): a supervisor
	// releases a claim only when it is its clone's, whatever the names.
	ClaimedClone string
	Source       string   // the plan item it was imported from ("beads:bd-a1b2")
	Description  string   // what the task is about, beyond its title
	Acceptance   []string // what a person checks besides the validation
	// Generation counts the claims of the task: each claim takes the next
	// one, so a write by a worker whose claim was taken over (its lease
	// expired and another worker claimed the task) is told apart and
	// refused, even when the same worker id claimed it again.
	Generation int
	// ValidatedCommit is, with workers (session_config.integration_branch),
	// the commit of a task whose validation passed in its worker's tree: the
	// task stays in_progress, queued for the merge queue, until it is
	// integrated (IntegratedCommit, completed) or fails [MERGE].
	ValidatedCommit  string
	ValidatedAt      string
	IntegratedCommit string
	// Review is the task's own choice of the reviewer gate: ReviewOn,
	// ReviewOff, or "" to follow session_config.review.
	Review string
}

// The values of Task.Review (written as true and false).
const (
	ReviewOn  = "on"
	ReviewOff = "off"
)

// Reviewed reports whether t's passing validation is judged by the
// reviewer too: its own review member, else session_config's.
func (t *Task) Reviewed(c Config) bool {
	switch t.Review {
	case ReviewOn:
		return true
	case ReviewOff:
		return false
	}
	return c.Review.Enabled
}

// ClearClaim ends t's claim: nobody holds it, no lease, no worker's tree,
// nothing waiting in the merge queue. The generation stays: the next claim
// takes the one after it.
func (t *Task) ClearClaim() {
	t.ClaimedBy, t.ClaimedAt, t.LeaseExpiresAt, t.Worktree, t.ClaimedClone = "", "", "", "", ""
	t.ValidatedCommit, t.ValidatedAt = "", ""
}

// Validated reports whether t passed its validation in a worker's tree and
// waits in the merge queue.
func (t *Task) Validated() bool { return t.Status == InProgress && t.ValidatedCommit != "" }

// Config is session_config.
type Config struct {
	ConcurrencyMode      string
	MaxTasksPerSession   int // 0: no limit
	MaxSessions          int // 0: no limit
	VerifyOnStop         bool
	MaxReflectIterations int
	AllowedCommands      []string // nil: no command policy
	Budget               Budget
	// StuckTurns is how many turns in a row without progress (no commit,
	// checkpoint or validation change) make the Stop hook call the session
	// stuck; 0 means the default (DefaultStuckTurns).
	StuckTurns int
	// IntegrationBranch, set by `harness workers`, is the branch the merge
	// queue integrates validated tasks into; "" without workers.
	IntegrationBranch string
	// IntegrationCheck is the project's check (for example the whole test
	// suite), which every completion passes besides its task's validation:
	// on the merged tree before the integration branch moves with
	// workers, in the work tree otherwise (State.ProjectCheck); "" for none.
	IntegrationCheck string
	// IntegrationTimeoutSeconds bounds IntegrationCheck; 0: the default.
	IntegrationTimeoutSeconds int
	Review                    ReviewConfig
}

// ReviewConfig is session_config.review: the reviewer gate for every task
// (a task's own review member overrides Enabled), how long one review may
// take (0: DefaultReviewTimeoutSeconds) and the model it asks ("": Claude
// Code's default).
type ReviewConfig struct {
	Enabled        bool
	TimeoutSeconds int
	Model          string
}

// DefaultReviewTimeoutSeconds bounds one review when session_config.review
// sets no timeout_seconds.
const DefaultReviewTimeoutSeconds = 300

// Timeout is how long one review may take.
func (r ReviewConfig) Timeout() time.Duration {
	if r.TimeoutSeconds <= 0 {
		return DefaultReviewTimeoutSeconds * time.Second
	}
	return time.Duration(r.TimeoutSeconds) * time.Second
}

// DefaultIntegrationTimeout bounds session_config.integration_check when
// integration_timeout_seconds is unset.
const DefaultIntegrationTimeout = 1800

// Workers reports whether the job runs with workers and a merge queue.
func (s *State) Workers() bool { return s.Concurrent() && s.Config.IntegrationBranch != "" }

// IntegrationTimeout bounds IntegrationCheck.
func (c Config) IntegrationTimeout() time.Duration {
	if c.IntegrationTimeoutSeconds <= 0 {
		return DefaultIntegrationTimeout * time.Second
	}
	return time.Duration(c.IntegrationTimeoutSeconds) * time.Second
}

// ProjectCheck is the command a completion must pass after its task's own
// validation where no merge queue runs it: IntegrationCheck, "" when none
// is set or the job has workers (their queue runs it on the merged tree).
func (s *State) ProjectCheck() string {
	if s.Workers() {
		return ""
	}
	return strings.TrimSpace(s.Config.IntegrationCheck)
}

// DefaultStuckTurns is session_config.stuck_turns when it is unset.
const DefaultStuckTurns = 12

// Budget is the limits a person sets once on what a job may spend: wall-clock
// minutes and API tokens, for the whole job and for each session. 0 means no
// limit. See internal/budget for how use is measured.
type Budget struct {
	JobMinutes     int
	SessionMinutes int
	JobTokens      int
	SessionTokens  int
}

// BudgetLimits names the budget's members of session_config, in the order
// they are shown, with a pointer to each limit in b.
func (b *Budget) Limits() []BudgetLimit {
	return []BudgetLimit{
		{"max_job_minutes", &b.JobMinutes},
		{"max_session_minutes", &b.SessionMinutes},
		{"max_job_tokens", &b.JobTokens},
		{"max_session_tokens", &b.SessionTokens},
	}
}

// BudgetLimit is one limit of a Budget: its session_config member and value.
type BudgetLimit struct {
	Name  string
	Value *int
}

// Any reports whether any limit is set.
func (b Budget) Any() bool {
	return b.JobMinutes+b.SessionMinutes+b.JobTokens+b.SessionTokens > 0
}

// PastMaxSessions reports whether session n is past max_sessions: it must
// not work. The SessionStart hook, `harness session start` and the Stop hook
// all ask it.
func (c Config) PastMaxSessions(n int) bool { return c.MaxSessions > 0 && n > c.MaxSessions }

// State is a parsed harness-tasks.json together with its text.
type State struct {
	Dir          string // the state root
	Version      int
	Created      string
	Config       Config
	Tasks        []Task
	SessionCount int
	LastSession  string
	// FromBackup is set when the file does not read (not JSON, or a field
	// the harness cannot read) and this state was read from the last one
	// the harness wrote instead: harness-tasks.json.bak, else the record's
	// copy (read-only loads only). Broken says why the file does not
	// read; Source names what was read.
	FromBackup     bool
	Broken, Source string
	// Restored is set by Update when the file was corrupt and has just been
	// restored from harness-tasks.json.bak (a RECOVERY line is logged).
	Restored bool

	raw       []byte
	skimmed   []string // Skim's: the text of each task, which Whole parses
	origTasks []Task
	removed   []int // indexes in origTasks of the tasks RemoveTasks took out
	configSet []configEdit
	origCount int
	origLast  string
	snapped   bool            // origTasks holds what was read: only states being updated need it
	publish   []remote.Update // refs to move with the state on a shared job's remote (PublishRef)
}

// Path returns the tasks file path in dir.
func Path(dir string) string { return filepath.Join(dir, FileName) }

// BackupPath returns the backup path in dir.
func BackupPath(dir string) string { return filepath.Join(dir, BackupName) }

// Raw returns the JSON text the state was parsed from, with any saved edits.
func (s *State) Raw() []byte { return s.raw }

// Index returns the position of the task with this id, or -1.
func (s *State) Index(id string) int {
	for i := range s.Tasks {
		if s.Tasks[i].ID == id {
			return i
		}
	}
	return -1
}

// Task returns the task with this id, or nil.
func (s *State) Task(id string) *Task {
	if i := s.Index(id); i >= 0 {
		return &s.Tasks[i]
	}
	return nil
}

// Concurrent reports whether the state is in concurrent mode.
func (s *State) Concurrent() bool { return s.Config.ConcurrencyMode == Concurrent }

// Corrupt is the error for a tasks file that is not valid JSON.
type Corrupt struct {
	Path   string
	Reason string // what is wrong, when more is known than "not valid JSON"
}

func (c *Corrupt) Error() string {
	if c.Reason != "" {
		return c.Path + " " + c.Reason
	}
	return c.Path + " is not valid JSON"
}

// ErrNotFound is returned when dir holds no tasks file. (A literal: every
// hook's process makes it before main, where fmt's first use costs.)
var ErrNotFound = &failure.Error{Category: failure.Config, Message: "no " + FileName + " here",
	Hint: "run `harness init` in the project root"}

// Parse parses the text of a tasks file. path is used in error messages.
//
// The state keeps raw as the base of its edits, and its strings share
// raw's memory (a copy of a 7 MB file costs a fresh process as much as
// reading it, in page faults): the caller hands raw over and never
// changes it.
func Parse(raw []byte, path string) (*State, error) {
	if jsondepth.Exceeds(raw, jsondepth.Max) {
		return nil, &Corrupt{Path: path, Reason: fmt.Sprintf("nests deeper than %d levels", jsondepth.Max)}
	}
	if !gjson.ValidBytes(raw) {
		return nil, &Corrupt{Path: path}
	}
	doc := gjson.Parse(shared(raw))
	if !doc.IsObject() {
		return nil, configErr(path, "", "the document must be a JSON object")
	}
	p := parser{path: path}
	s := &State{raw: raw}
	// One pass over the top level finds every member the harness reads and
	// refuses one written twice; a Get per member would scan past the
	// (large) task list once for each member after it.
	var version, created, config, tasks, count, last gjson.Result
	p.members(doc, "", "at the top level", []member{
		{"version", &version}, {"created", &created}, {"session_config", &config},
		{"tasks", &tasks}, {"session_count", &count}, {"last_session", &last}})
	if p.err != nil {
		return nil, p.err
	}
	s.Version = p.intAt(version, "version", 0)
	s.Created = p.strAt(created, "created")
	s.SessionCount = p.intAt(count, "session_count", 0)
	s.LastSession = p.strAt(last, "last_session")
	s.Config = p.config(config)
	switch {
	case !tasks.Exists():
		p.fail("tasks", "is missing (it must be a list, [] when empty)")
	case !tasks.IsArray():
		p.fail("tasks", "must be a list, got %s", kind(tasks))
	default:
		seen := map[string]int{}
		i := 0
		s.Tasks = make([]Task, 0, estimateTasks(tasks.Raw))
		tasks.ForEach(func(_, v gjson.Result) bool {
			t := p.task(v, i)
			if prev, dup := seen[t.ID]; dup && t.ID != "" {
				p.fail(fmt.Sprintf("tasks[%d].id", i), "duplicates tasks[%d].id %q", prev, t.ID)
			}
			seen[t.ID] = i
			s.Tasks = append(s.Tasks, t)
			i++
			return p.err == nil
		})
	}
	if p.err != nil {
		return nil, p.err
	}
	return s, nil
}

// estimateTasks is how many tasks a task list's text holds, counted by
// their "id" members, so the list is allocated once: growing it by
// doubling copies a 10,000-task state several times over.
func estimateTasks(list string) int {
	return strings.Count(list, `"id"`)
}

func (s *State) snapshot() {
	s.origTasks = make([]Task, len(s.Tasks))
	for i, t := range s.Tasks {
		s.origTasks[i] = t.clone()
	}
	s.origCount, s.origLast = s.SessionCount, s.LastSession
	s.removed, s.configSet = nil, nil
	s.snapped = true
}

func configErr(path, field, format string, args ...any) *failure.Error {
	where := path
	if field != "" {
		where += ": " + field
	}
	if field == "" {
		where += ":"
	}
	return failure.New(failure.Config, "%s %s", where, fmt.Sprintf(format, args...)).
		WithHint("fix the field by hand in %s (the harness does not guess task metadata), then re-run", filepath.Base(path))
}

// parser collects the first schema error while reading.
type parser struct {
	path  string
	err   *failure.Error
	field string // the field the error names, qualified later by task()
	task0 bool   // the error was raised inside a task and still needs its prefix
}

func (p *parser) fail(field, format string, args ...any) {
	if p.err == nil {
		p.err = configErr(p.path, field, format, args...)
		p.field = field
		p.task0 = field != "" && !strings.HasPrefix(field, "tasks[") && !strings.HasPrefix(field, "session_config")
	}
}

// twice fails for a member written twice in one object. gjson reads and
// edits the first occurrence, other JSON readers often take the last: the
// harness would run one validation command while the user's tools show the
// other, so it refuses to guess which is meant.
func (p *parser) twice(field, where string) {
	p.fail(field, "appears twice %s: keep one (JSON readers disagree on which one counts)", where)
}

func kind(r gjson.Result) string {
	switch r.Type {
	case gjson.String:
		return "string " + strconv.Quote(truncate(r.Str, 40))
	case gjson.Number:
		return "number " + r.Raw
	case gjson.True, gjson.False:
		return "boolean " + r.Raw
	case gjson.Null:
		return "null"
	}
	if r.IsArray() {
		return "a list"
	}
	return "an object"
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func (p *parser) str(obj gjson.Result, field string) string {
	return p.strAt(obj.Get(field), field)
}

func (p *parser) strAt(v gjson.Result, field string) string {
	switch v.Type {
	case gjson.String:
		return v.Str
	case gjson.Null:
		return ""
	}
	if v.Exists() {
		p.fail(field, "must be a string, got %s", kind(v))
	}
	return ""
}

func (p *parser) int(obj gjson.Result, field string, def int) int {
	return p.intAt(obj.Get(field), field, def)
}

// wholeNumber returns v as a valid count, the common case, without naming
// anything.
func wholeNumber(v gjson.Result) (int, bool) {
	if v.Type == gjson.Number && v.Num >= 0 && v.Num <= 1e9 && v.Num == float64(int64(v.Num)) {
		return int(v.Num), true
	}
	return 0, false
}

func (p *parser) intAt(v gjson.Result, field string, def int) int {
	if !v.Exists() || v.Type == gjson.Null {
		return def
	}
	if v.Type != gjson.Number || v.Num != float64(int64(v.Num)) || v.Num < 0 || v.Num > 1e9 {
		p.fail(field, "must be a whole number ≥ 0, got %s", kind(v))
		return def
	}
	return int(v.Num)
}

func (p *parser) strings(v gjson.Result, field string) []string {
	if !v.Exists() || v.Type == gjson.Null {
		return nil
	}
	if !v.IsArray() {
		p.fail(field, "must be a list of strings, got %s", kind(v))
		return nil
	}
	out := []string{}
	v.ForEach(func(_, e gjson.Result) bool {
		if e.Type != gjson.String {
			p.fail(fmt.Sprintf("%s[%d]", field, len(out)), "must be a string, got %s", kind(e))
			return false
		}
		out = append(out, e.Str)
		return true
	})
	if p.err != nil {
		return nil
	}
	return out
}

func (p *parser) config(c gjson.Result) Config {
	cfg := Config{ConcurrencyMode: Exclusive, VerifyOnStop: true, MaxReflectIterations: DefaultReflect}
	if !c.Exists() || c.Type == gjson.Null {
		return cfg
	}
	if !c.IsObject() {
		p.fail("session_config", "must be an object, got %s", kind(c))
		return cfg
	}
	f := func(name string) string { return "session_config." + name }
	var mode, maxTasks, maxSessions, reflect, verify, allowed, stuck, review, branch, check, checkTimeout gjson.Result
	var limits [4]gjson.Result
	members := []member{
		{"concurrency_mode", &mode}, {"max_tasks_per_session", &maxTasks}, {"max_sessions", &maxSessions},
		{"max_reflect_iterations", &reflect}, {"verify_on_stop", &verify}, {"allowed_commands", &allowed},
		{"stuck_turns", &stuck}, {"review", &review}, {"integration_branch", &branch}, {"integration_check", &check},
		{"integration_timeout_seconds", &checkTimeout}}
	budget := cfg.Budget.Limits()
	for i, l := range budget {
		members = append(members, member{l.Name, &limits[i]})
	}
	p.members(c, "session_config.", "in session_config", members)
	if p.err != nil {
		return cfg
	}
	if m := p.strAt(mode, f("concurrency_mode")); m != "" {
		if m != Exclusive && m != Concurrent {
			p.fail(f("concurrency_mode"), "must be %q or %q, got %q", Exclusive, Concurrent, m)
		}
		cfg.ConcurrencyMode = m
	}
	cfg.MaxTasksPerSession = p.intAt(maxTasks, f("max_tasks_per_session"), 0)
	cfg.MaxSessions = p.intAt(maxSessions, f("max_sessions"), 0)
	cfg.MaxReflectIterations = p.intAt(reflect, f("max_reflect_iterations"), DefaultReflect)
	if v := verify; v.Exists() && v.Type != gjson.Null {
		if v.Type != gjson.True && v.Type != gjson.False {
			p.fail(f("verify_on_stop"), "must be true or false, got %s", kind(v))
		}
		cfg.VerifyOnStop = v.Type == gjson.True
	}
	cfg.AllowedCommands = p.strings(allowed, f("allowed_commands"))
	cfg.StuckTurns = p.intAt(stuck, f("stuck_turns"), 0)
	cfg.IntegrationBranch = p.strAt(branch, f("integration_branch"))
	cfg.IntegrationCheck = p.strAt(check, f("integration_check"))
	cfg.IntegrationTimeoutSeconds = p.intAt(checkTimeout, f("integration_timeout_seconds"), 0)
	cfg.Review = p.review(review)
	for i, l := range budget {
		*l.Value = p.intAt(limits[i], f(l.Name), 0)
	}
	return cfg
}

// review reads session_config.review.
func (p *parser) review(v gjson.Result) ReviewConfig {
	var r ReviewConfig
	if !v.Exists() || v.Type == gjson.Null {
		return r
	}
	const at = "session_config.review"
	if !v.IsObject() {
		p.fail(at, "must be an object {\"enabled\": true, \"timeout_seconds\": …, \"model\": …}, got %s", kind(v))
		return r
	}
	var enabled, timeout, model gjson.Result
	p.members(v, at+".", "in "+at, []member{{"enabled", &enabled}, {"timeout_seconds", &timeout}, {"model", &model}})
	if p.err != nil {
		return r
	}
	r.Enabled = p.switchAt(enabled, at+".enabled") == ReviewOn
	r.TimeoutSeconds = p.intAt(timeout, at+".timeout_seconds", 0)
	r.Model = p.strAt(model, at+".model")
	return r
}

// switchAt reads a JSON boolean as ReviewOn or ReviewOff, null or absent
// as "".
func (p *parser) switchAt(v gjson.Result, field string) string {
	switch v.Type {
	case gjson.True:
		return ReviewOn
	case gjson.False:
		return ReviewOff
	case gjson.Null:
		return ""
	}
	if v.Exists() {
		p.fail(field, "must be true or false, got %s", kind(v))
	}
	return ""
}

func (p *parser) task(v gjson.Result, i int) Task {
	var t Task
	if !v.IsObject() {
		p.fail(fmt.Sprintf("tasks[%d]", i), "must be an object, got %s", kind(v))
		return t
	}
	// One pass over the task's members: a Get per field would rescan the
	// object twenty times, which matters at 10,000 tasks.
	var status, validation, onFailure, checkpoints gjson.Result
	t.MaxAttempts = DefaultMaxAttempts
	p.field, p.task0 = "", false
	// Only the members the harness reads are checked for duplicates, with a
	// bit each: a user's own member is neither read nor edited.
	var seen uint64
	v.ForEach(func(k, val gjson.Result) bool {
		var bit uint64
		switch key := k.Str; key {
		case "status":
			status, bit = val, 1<<63
		case "validation":
			validation, bit = val, 1<<62
		case "on_failure":
			onFailure, bit = val, 1<<61
		case "checkpoints":
			checkpoints, bit = val, 1<<60
		default:
			i, ok := plainField(key)
			if !ok {
				return true
			}
			taskSchema[i].read(p, &t, val)
			bit = 1 << i
		}
		if seen&bit != 0 {
			p.err = nil // a type error in the second copy: the duplicate is the news
			p.twice(k.Str, "in the same task")
			return false
		}
		seen |= bit
		return p.err == nil
	})
	if p.err != nil && p.field == "id" {
		p.err.Message = strings.Replace(p.err.Message, ": id ", fmt.Sprintf(": tasks[%d].id ", i), 1)
		return t
	}
	if t.ID == "" && p.err == nil {
		p.fail(fmt.Sprintf("tasks[%d].id", i), "is missing or empty (every task needs a unique id)")
	}
	name := func(field string) string { return fmt.Sprintf("tasks[%d].%s (%s)", i, field, t.ID) }
	if p.err != nil {
		if p.task0 {
			p.err.Message = strings.Replace(p.err.Message, ": "+p.field+" ", ": "+name(p.field)+" ", 1)
		}
		return t
	}
	t.Status = p.strAt(status, "status")
	switch t.Status {
	case Pending, InProgress, Completed, Failed:
	case "":
		p.fail(name("status"), "is missing (one of pending, in_progress, completed, failed)")
	default:
		p.fail(name("status"), "must be one of pending, in_progress, completed, failed; got %q", t.Status)
	}
	t.Command, t.TimeoutSeconds = p.validation(validation)
	t.Cleanup = p.onFailure(onFailure)
	t.Checkpoints = p.checkpoints(checkpoints)
	if p.err != nil && p.task0 {
		p.err.Message = strings.Replace(p.err.Message, ": "+p.field+" ", ": "+name(p.field)+" ", 1)
	}
	return t
}

// validation reads a task's validation object: its command and timeout.
func (p *parser) validation(v gjson.Result) (command string, timeoutSeconds int) {
	if !v.Exists() || v.Type == gjson.Null {
		return "", 0
	}
	if !v.IsObject() {
		p.fail("validation", "must be an object {\"command\": …, \"timeout_seconds\": …}, got %s", kind(v))
		return "", 0
	}
	var cmd, timeout gjson.Result
	p.members(v, "validation.", "in validation", []member{{"command", &cmd}, {"timeout_seconds", &timeout}})
	if p.err != nil {
		return "", 0
	}
	return p.strAt(cmd, "validation.command"), p.intAt(timeout, "validation.timeout_seconds", 0)
}

// onFailure reads a task's on_failure object: its cleanup command.
func (p *parser) onFailure(v gjson.Result) string {
	if !v.Exists() || v.Type == gjson.Null {
		return ""
	}
	if !v.IsObject() {
		p.fail("on_failure", "must be an object {\"cleanup\": …}, got %s", kind(v))
		return ""
	}
	var cleanup gjson.Result
	p.members(v, "on_failure.", "in on_failure", []member{{"cleanup", &cleanup}})
	if p.err != nil {
		return ""
	}
	return p.strAt(cleanup, "on_failure.cleanup")
}

// checkpoints reads a task's checkpoint list.
func (p *parser) checkpoints(v gjson.Result) []Checkpoint {
	if !v.Exists() || v.Type == gjson.Null {
		return nil
	}
	if !v.IsArray() {
		p.fail("checkpoints", "must be a list, got %s", kind(v))
		return nil
	}
	var list []Checkpoint
	j := 0
	v.ForEach(func(_, c gjson.Result) bool {
		if !c.IsObject() {
			p.fail(fmt.Sprintf("checkpoints[%d]", j), "must be an object, got %s", kind(c))
			return false
		}
		list = append(list, p.checkpoint(c, j))
		j++
		return p.err == nil
	})
	return list
}

// checkpoint reads checkpoint j, refusing a member written twice.
func (p *parser) checkpoint(c gjson.Result, j int) Checkpoint {
	var cp Checkpoint
	var seen uint8
	c.ForEach(func(k, v gjson.Result) bool {
		var bit uint8
		switch k.Str {
		case "step":
			bit = 1 << 0
		case "total":
			bit = 1 << 1
		case "description":
			bit = 1 << 2
		case "timestamp":
			bit = 1 << 3
		}
		if seen&bit != 0 {
			p.twice(fmt.Sprintf("checkpoints[%d].%s", j, k.Str), "in the same checkpoint")
			return false
		}
		seen |= bit
		switch k.Str {
		case "step", "total":
			n, ok := wholeNumber(v)
			if !ok {
				n = p.intAt(v, fmt.Sprintf("checkpoints[%d].%s", j, k.Str), 0)
			}
			if k.Str == "step" {
				cp.Step = n
			} else {
				cp.Total = n
			}
		case "description", "timestamp":
			str := v.Str
			if v.Type != gjson.String {
				str = p.strAt(v, fmt.Sprintf("checkpoints[%d].%s", j, k.Str))
			}
			if k.Str == "description" {
				cp.Description = str
			} else {
				cp.Timestamp = str
			}
		}
		return p.err == nil
	})
	return cp
}

// member is one member of an object the harness reads, and where its value
// goes.
type member struct {
	name string
	v    *gjson.Result
}

// members reads the listed members of the object obj in one pass (a Get
// each would rescan the object, past a large task list at the top level),
// and refuses one written twice: field prefix and where name it in the
// error. Members not listed are a user's own: neither read nor checked.
func (p *parser) members(obj gjson.Result, prefix, where string, want []member) {
	var seen uint32
	obj.ForEach(func(k, v gjson.Result) bool {
		for i, m := range want {
			if m.name != k.Str {
				continue
			}
			if seen&(1<<i) != 0 {
				p.twice(prefix+k.Str, where)
				return false
			}
			seen |= 1 << i
			*m.v = v
			break
		}
		return true
	})
}

// Timeout returns the validation timeout of t, with the default applied.
func (t *Task) Timeout() time.Duration {
	if t.TimeoutSeconds <= 0 {
		return DefaultTimeoutSeconds * time.Second
	}
	return time.Duration(t.TimeoutSeconds) * time.Second
}

// LeaseExpired reports whether t has a lease that ended before now.
func (t *Task) LeaseExpired(now time.Time) bool {
	if t.LeaseExpiresAt == "" {
		return false
	}
	exp, err := time.Parse(time.RFC3339, t.LeaseExpiresAt)
	return err == nil && now.After(exp)
}

// PermanentlyFailed reports whether t is failed and will never be retried.
func (t *Task) PermanentlyFailed() bool {
	if t.Status != Failed {
		return false
	}
	return t.Attempts >= t.MaxAttempts || t.HasDependencyError()
}

// HasDependencyError reports whether t's last error_log entry is a
// [DEPENDENCY] one. Nothing is appended after such an entry while the task
// stays failed; a task reopened by `harness retry` keeps its old entries,
// and a [DEPENDENCY] among them no longer says why it fails now.
func (t *Task) HasDependencyError() bool {
	n := len(t.ErrorLog)
	return n > 0 && strings.HasPrefix(t.ErrorLog[n-1], "["+failure.Dependency+"]")
}

// MaxFileSize bounds a tasks file the harness reads whole (10,000 tasks
// take about 7 MB): a larger file, like anything but a regular file in its
// place (a FIFO, a directory), is reported unreadable instead of being read.
const MaxFileSize = 128 << 20

// Load reads and parses the tasks file in dir without taking any lock. A
// file that does not read (not JSON, or a field the harness cannot read:
// the same to every reader, hooks, views and verbs alike) is answered with
// the last state the harness wrote, its backup or else the record's copy,
// with FromBackup set; restoring the file is a write, left to Update. With
// neither, a file that is not JSON is Unrecoverable, and one with a bad
// field is its CONFIG error.
func Load(dir string) (*State, error) {
	raw, err := safefile.ReadFile(Path(dir), MaxFileSize)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, failure.Wrap(failure.EnvSetup, err, "cannot read %s: %v", Path(dir), err)
	}
	s, err := Parse(raw, Path(dir))
	if err != nil {
		b, ok := lastWritten(dir)
		if !ok {
			if corrupt := (*Corrupt)(nil); errors.As(err, &corrupt) {
				return nil, Unrecoverable(dir)
			}
			return nil, err
		}
		b.FromBackup, b.Broken = true, brokenWhy(err, dir)
		return b, nil
	}
	s.Dir = dir
	return s, nil
}

// brokenWhy says why the tasks file does not read, without its path.
func brokenWhy(err error, dir string) string {
	msg := err.Error()
	var fe *failure.Error
	if errors.As(err, &fe) {
		msg = fe.Message
	}
	msg = strings.TrimPrefix(msg, Path(dir))
	msg = strings.TrimPrefix(msg, ":")
	msg = strings.TrimSpace(msg)
	if msg == "is not valid JSON" {
		return "not valid JSON"
	}
	return msg
}

// ErrUnrecoverable is the cause of every Unrecoverable error, compared by
// identity (errors.Is); its text is the protocol's own wording, grep-able in
// the log.
var ErrUnrecoverable = errors.New("harness-tasks.json corrupted and unrecoverable")

// Unrecoverable is the error for a corrupt tasks file without a valid
// backup or record copy.
func Unrecoverable(dir string) *failure.Error {
	return failure.Wrap(failure.EnvSetup, ErrUnrecoverable, "%s", ErrUnrecoverable).
		WithHint("%s is not valid JSON, and neither %s nor the record's copy of the last one the harness wrote reads; %s", Path(dir), BackupName, restoreHint(dir))
}

// restoreHint says how to get the tasks file back when no copy the
// harness kept reads: git rarely has it (harness init keeps it out).
func restoreHint(dir string) string {
	live := Path(dir)
	aside := failure.ShellArg(live + ".corrupt")
	return fmt.Sprintf("if you committed it, restore it from git; otherwise move it aside (mv %s %s), run `harness init` and add the tasks again with `harness add` (their metadata cannot be rebuilt from the log)",
		failure.ShellArg(live), aside)
}

// IsUnrecoverable reports whether err is Unrecoverable's.
func IsUnrecoverable(err error) bool { return errors.Is(err, ErrUnrecoverable) }

// lastWritten reads the last state the harness wrote in dir: its backup,
// else the record's copy (kept outside the project).
func lastWritten(dir string) (*State, bool) {
	if raw, err := safefile.ReadFile(BackupPath(dir), MaxFileSize); err == nil {
		if s, err := Parse(raw, BackupPath(dir)); err == nil {
			s.Dir, s.Source = dir, BackupName
			return s, true
		}
	}
	if raw, ok := record.Of(dir).TasksText(); ok {
		if s, err := Parse(raw, record.TasksCopy); err == nil {
			s.Dir, s.Source = dir, "the record's copy"
			return s, true
		}
	}
	return nil, false
}

// Update runs fn on the current state under the transaction lock and saves
// what fn changed. A corrupt file is first restored from a valid backup (the
// corrupt copy is kept beside it and a RECOVERY line is logged). When fn
// returns an error nothing is saved. The lines fn appends to the log are
// written after the file: a reader who sees a line ("task-002 released")
// finds the state that says so. (They are written whatever happened: a
// capture takes this process's lines for the state root, another
// goroutine's among them.)
func Update(dir string, fn func(*State) error) (*State, error) {
	return UpdateThen(dir, fn, nil)
}

// buildsOnRecord refuses to let a verb the agent runs build on a change of
// the tasks file that the record does not hold and the protocol's verbs
// could not have made (JudgeTransition), nor a completion where the verbs
// write the record: its save would otherwise make that change the
// harness's own. It is judged here, under the transaction lock, on the very
// text the verb read, so no writer can slip in between the check and the
// read. A legal change (an earlier verb of the same command whose record
// write the sandbox refused) is built on, and the hook after the call
// judges it all. Hooks (trusted)
// have checked before, and a person's verbs build on the file as they left
// it.
func buildsOnRecord(s *State) error {
	if record.Trusted() || os.Getenv("CLAUDE_CODE_SESSION_ID") == "" {
		return nil
	}
	// The file carries the stamp the harness left (the integrity check's
	// own test): it is the text the harness wrote, and the record's copy
	// need not be read.
	rec := record.Of(s.Dir)
	if m, ok := rec.Mark(); ok {
		if fi, err := os.Stat(Path(s.Dir)); err == nil && record.StampOf(fi) == m.Tasks() {
			return nil
		}
	}
	recorded, ok := rec.TasksText()
	if !ok || string(recorded) == string(s.raw) {
		return nil
	}
	before, err := Parse(recorded, Path(s.Dir))
	if err != nil {
		return nil
	}
	tr := JudgeTransition(before, s)
	if tr.Broken != "" {
		return failure.New(failure.Tamper, "%s holds a change the harness did not make (%s): the harness does not build on it", FileName, tr.Broken).
			WithHint("change the state only with the harness verbs; the check after this tool call puts the file back")
	}
	if len(tr.Completed) > 0 && rec.Writable() {
		return failure.New(failure.Tamper, "%s holds a completion of %s the harness did not make: the harness does not build on it", FileName, tr.Completed[0]).
			WithHint("a task completes only by `harness validate %s`; the check after this tool call puts the file back", tr.Completed[0])
	}
	return nil
}

// UpdateThen is Update, and when it wrote the file, calls written with the
// state as written while the transaction lock is still held: what written
// derives from the file (the hooks' cache, keyed by the file's identity)
// cannot be overtaken by another writer. statecache.Update passes its cache
// refresh.
func UpdateThen(dir string, fn func(*State) error, written func(*State)) (*State, error) {
	unlock, err := lock.Tx(dir)
	if err != nil {
		return nil, failure.Wrap(failure.EnvSetup, err, "%v", err)
	}
	defer unlock()
	removeStaleTemps(dir)
	if rc, ok := remote.Load(dir); ok {
		return updateShared(dir, rc, fn, written)
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
	wrote, err := s.save()
	progress.AppendBytes(dir, lines)
	if err == nil && wrote && written != nil {
		written(s)
	}
	return s, err
}

// loadForChange reads the state a change is made on, under the
// transaction lock: restored from its backup when corrupt, refused when
// it holds a change the harness would not build on, snapshotted so that
// save writes only what the change did.
func loadForChange(dir string) (*State, error) {
	s, err := loadLocked(dir)
	if err != nil {
		return nil, err
	}
	if err := buildsOnRecord(s); err != nil {
		return s, err
	}
	s.snapshot()
	return s, nil
}

func loadLocked(dir string) (*State, error) {
	s, err := Load(dir)
	if err != nil || !s.FromBackup {
		return s, err
	}
	corrupt, _ := safefile.ReadFile(Path(dir), MaxFileSize)
	keep := fmt.Sprintf("%s.corrupt-%s", Path(dir), time.Now().UTC().Format("20060102T150405Z"))
	if err := atomicfile.WriteFile(keep, corrupt, 0o644); err != nil {
		return nil, failure.Wrap(failure.EnvSetup, err, "cannot keep the corrupt file as %s: %v", keep, err)
	}
	if err := atomicfile.WriteFile(Path(dir), s.raw, fileMode(BackupPath(dir))); err != nil {
		return nil, failure.Wrap(failure.EnvSetup, err, "cannot restore %s from backup: %v", Path(dir), err)
	}
	record.Of(dir).SaveTasks(s.raw, root.Active(dir))
	s.FromBackup, s.Restored = false, true
	fmt.Fprintf(os.Stderr, "WARN [%s] %s did not read (%s): restored from %s, the last state the harness wrote; the broken copy is kept as %s\n",
		failure.EnvSetup, FileName, s.Broken, s.Source, filepath.Base(keep))
	progress.Append(dir, progress.Entry{Session: s.SessionCount, Type: progress.Recovery,
		Message: fmt.Sprintf(`action="restored %s from %s" reason="%s; broken copy kept as %s"`, FileName, s.Source, strings.ReplaceAll(s.Broken, `"`, `'`), filepath.Base(keep))})
	return s, nil
}

func fileMode(path string) os.FileMode {
	if fi, err := os.Stat(path); err == nil {
		return fi.Mode().Perm()
	}
	return 0o644
}

// Create writes a new tasks file with no tasks and the default session config.
// It fails if one exists already.
func Create(dir string, now time.Time) error {
	doc := fmt.Sprintf(`{
  "version": 2,
  "created": %q,
  "session_config": {
    "concurrency_mode": "exclusive",
    "max_tasks_per_session": 20,
    "max_sessions": 50
  },
  "tasks": [],
  "session_count": 0,
  "last_session": null
}
`, now.UTC().Format(time.RFC3339))
	f, err := os.OpenFile(Path(dir), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(doc); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	// Every write leaves its backup, the first one too: the check after
	// each tool call holds the backup to the record.
	if err := backup(dir, []byte(doc), fileMode(Path(dir))); err != nil {
		return err
	}
	record.Of(dir).SaveTasks([]byte(doc), root.Active(dir))
	return nil
}
