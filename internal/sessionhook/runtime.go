package sessionhook

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/harness-agent/harness/internal/atomicfile"
	"github.com/harness-agent/harness/internal/budget"
	"github.com/harness-agent/harness/internal/jsonobj"
	"github.com/harness-agent/harness/internal/record"
	"github.com/harness-agent/harness/internal/safefile"
	"github.com/harness-agent/harness/internal/statecache"
)

// Runtime is a session's own bookkeeping, kept beside the state in
// <root>/.harness-runtime/session-<id>.json: what the hooks must remember between
// invocations that is not task state (the valves' counters, the reflection
// rounds, where in the log the session began). It is a harness file (inside
// a .harness- directory): never committed, never reverted, and losing it
// costs nothing worse than a fresh count.
type Runtime struct {
	SessionID string `json:"session_id"`
	Session   int    `json:"session"` // N of the session's [SESSION-N] log lines
	Source    string `json:"source,omitempty"`
	Worker    string `json:"worker,omitempty"`
	StartedAt string `json:"started_at,omitempty"`
	// LogOffset is the size of harness-progress.txt when the session began
	// its work: what follows is this session's story.
	LogOffset int64 `json:"log_offset"`
	// Story sums up the session's lines of the log read so far (see
	// readSessionLog).
	Story *Story `json:"story,omitempty"`
	// Excluded is set when the session started while another live session
	// held the session lock. It was told to stay out of the harness for its
	// whole life, so its hooks stay silent even after that session ends
	// (see stayOut).
	Excluded bool `json:"excluded,omitempty"`
	// Unusable is set when the session start could not take the lock or
	// write the state, and told the model to do no harness work in this
	// session (the error it was told, one line): the session's other hooks
	// then leave it alone too (see stayOut). A new session tries again.
	Unusable string `json:"unusable,omitempty"`
	// Held lists the tasks this worker had in progress when the session
	// began (concurrent mode): their outcomes in the log are this session's
	// although their Starting lines are older (see readSessionLog).
	Held []string `json:"held,omitempty"`
	// Stop counts consecutive Stop blocks without progress.
	Stop Valve `json:"stop_valve"`
	// Stuck counts the turn ends without progress (see Stuck).
	Stuck Stuck `json:"stuck,omitempty"`
	// Idle counts TeammateIdle refusals without progress, per teammate.
	Idle map[string]*Valve `json:"idle_valves,omitempty"`
	// Verified is the progress fingerprint at the last verification gate
	// that passed: the gate does not run twice on the same state.
	Verified string `json:"verified,omitempty"`
	// Finished is set when this session found the work done and removed
	// .harness-active; it arms the self-reflection rounds.
	Finished bool `json:"finished,omitempty"`
	// Ending says how the run ended ("every harness task is completed", or
	// what failed), for the reflection prompt.
	Ending string `json:"ending,omitempty"`
	// ReflectLimit is the number of reflection rounds, fixed when the run
	// finished; ReflectRounds counts the rounds asked for so far.
	ReflectLimit  int  `json:"reflect_limit,omitempty"`
	ReflectRounds int  `json:"reflect_rounds,omitempty"`
	ReflectDone   bool `json:"reflect_done,omitempty"`

	// text is the file as it was read or last written: save writes a
	// small change over it in place.
	text []byte
}

// toldToStayOut reports whether the session was told at its start to
// leave the harness alone: locked out (Excluded) or the harness unable to
// run (Unusable). A session without a runtime file was told nothing.
func (rt *Runtime) toldToStayOut() bool { return rt != nil && (rt.Excluded || rt.Unusable != "") }

// Valve counts consecutive blocks without progress.
type Valve struct {
	Blocks      int    `json:"blocks"`
	Fingerprint string `json:"fingerprint,omitempty"`
}

// Block records one more block at progress fingerprint fp. It reports true
// when the valve opens instead: limit blocks without progress have been made
// already. Progress (a new fingerprint) starts the count again; an opened
// valve starts from zero.
func (v *Valve) Block(fp string, limit int) (open bool) {
	if fp != v.Fingerprint {
		v.Blocks, v.Fingerprint = 0, fp
	}
	if v.Blocks >= limit {
		v.Blocks = 0
		return true
	}
	v.Blocks++
	return false
}

// runtimePrefix starts every runtime file name in statecache.RuntimeDir;
// turnPrefix starts the file that records the prompt of a session's turn
// (see UserPromptSubmit).
const (
	runtimePrefix = "session-"
	turnPrefix    = "turn-"
)

// runtimeTTL is how long a runtime file left by a session that never ended
// (a crash, a kill) is kept.
const runtimeTTL = 7 * 24 * time.Hour

// RuntimePath returns the runtime file of session sessionID, beside the
// project's record rec (see Record.SessionFile).
func RuntimePath(rec record.Record, sessionID string) string {
	return rec.SessionFile(runtimePrefix, sessionID)
}

// ReadRuntime returns the runtime of session sessionID, or nil when it has
// none (or an unreadable one).
func ReadRuntime(rec record.Record, sessionID string) *Runtime {
	data, err := safefile.ReadFile(RuntimePath(rec, sessionID), safefile.Small)
	if err != nil {
		return nil
	}
	rt, ok := decodeRuntime(data)
	if !ok || rt.Session < 0 {
		return nil
	}
	rt.text = data
	return rt
}

// save writes rt atomically. Stop saves it at every turn end, usually
// with its counts moved by one: such a change (jsonobj.InPlace: same
// length, one sector, no JSON structure in the changed bytes) is written
// over the file as save last left it or ReadRuntime found it, which costs
// a few microseconds where a new file renamed over the old costs about a
// hundred on ext4; any other change replaces the file whole (temporary
// file, rename).
func (rt *Runtime) save(rec record.Record) error {
	path := RuntimePath(rec, rt.SessionID)
	text := append(rt.encode(), '\n')
	// Patch checks that the file still holds all of rt.text (another
	// writer's file of the same size is replaced, not merged with) and
	// writes the whole text: the bytes outside the span are the ones
	// already there.
	if jsonobj.InPlace(rt.text, text) && atomicfile.Patch(path, int64(len(rt.text)), 0, rt.text, text) {
		rt.text = text
		return nil
	}
	if err := atomicfile.ReplaceSmall(path, text[:len(text)-1]); err != nil {
		return err
	}
	rt.text = text
	return nil
}

// The runtime file is written and read by hand (internal/jsonobj), in the
// layout json.MarshalIndent gives the struct and its tags, without
// encoding/json's cost at the start of every Stop.

// encode is the runtime file's text.
func (rt *Runtime) encode() []byte {
	w := jsonobj.New(true)
	w.Str("session_id", rt.SessionID)
	w.Int("session", int64(rt.Session))
	strOmit(w, "source", rt.Source)
	strOmit(w, "worker", rt.Worker)
	strOmit(w, "started_at", rt.StartedAt)
	w.Int("log_offset", rt.LogOffset)
	if st := rt.Story; st != nil {
		w.Open("story")
		w.Int("read", st.Read)
		if len(st.Completed) > 0 {
			w.Strs("completed", st.Completed)
		}
		if st.Outcomes != 0 {
			w.Int("outcomes", int64(st.Outcomes))
		}
		if len(st.Claimed) > 0 {
			w.Strs("claimed", st.Claimed)
		}
		if len(st.Others) > 0 {
			w.Strs("others", st.Others)
		}
		w.Close()
	}
	boolOmit(w, "excluded", rt.Excluded)
	strOmit(w, "unusable", rt.Unusable)
	if len(rt.Held) > 0 {
		w.Strs("held", rt.Held)
	}
	w.Open("stop_valve")
	rt.Stop.write(w)
	w.Close()
	w.Open("stuck")
	w.Int("turns", int64(rt.Stuck.Turns))
	strOmit(w, "mark", rt.Stuck.Mark)
	strOmit(w, "since", rt.Stuck.Since)
	boolOmit(w, "warned", rt.Stuck.Warned)
	w.Close()
	if len(rt.Idle) > 0 {
		w.Open("idle_valves")
		for _, name := range slices.Sorted(maps.Keys(rt.Idle)) {
			if v := rt.Idle[name]; v == nil {
				w.Raw(name, []byte("null"))
			} else {
				w.Open(name)
				v.write(w)
				w.Close()
			}
		}
		w.Close()
	}
	strOmit(w, "verified", rt.Verified)
	boolOmit(w, "finished", rt.Finished)
	strOmit(w, "ending", rt.Ending)
	if rt.ReflectLimit != 0 {
		w.Int("reflect_limit", int64(rt.ReflectLimit))
	}
	if rt.ReflectRounds != 0 {
		w.Int("reflect_rounds", int64(rt.ReflectRounds))
	}
	boolOmit(w, "reflect_done", rt.ReflectDone)
	return w.Bytes()
}

func (v *Valve) write(w *jsonobj.Writer) {
	w.Int("blocks", int64(v.Blocks))
	strOmit(w, "fingerprint", v.Fingerprint)
}

func readValve(v gjson.Result) Valve {
	return Valve{Blocks: int(v.Get("blocks").Int()), Fingerprint: v.Get("fingerprint").Str}
}

// decodeRuntime reads a runtime file; ok is false when data is not one.
func decodeRuntime(data []byte) (rt *Runtime, ok bool) {
	obj, ok := jsonobj.Read(data)
	if !ok {
		return nil, false
	}
	rt = &Runtime{}
	obj.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "session_id":
			rt.SessionID = v.Str
		case "session":
			rt.Session = int(v.Int())
		case "source":
			rt.Source = v.Str
		case "worker":
			rt.Worker = v.Str
		case "started_at":
			rt.StartedAt = v.Str
		case "log_offset":
			rt.LogOffset = v.Int()
		case "story":
			if v.IsObject() {
				rt.Story = &Story{Read: v.Get("read").Int(), Completed: jsonobj.Strs(v.Get("completed")),
					Outcomes: int(v.Get("outcomes").Int()), Claimed: jsonobj.Strs(v.Get("claimed")), Others: jsonobj.Strs(v.Get("others"))}
			}
		case "excluded":
			rt.Excluded = v.Bool()
		case "unusable":
			rt.Unusable = v.Str
		case "held":
			rt.Held = jsonobj.Strs(v)
		case "stop_valve":
			rt.Stop = readValve(v)
		case "stuck":
			rt.Stuck = Stuck{Turns: int(v.Get("turns").Int()), Mark: v.Get("mark").Str, Since: v.Get("since").Str, Warned: v.Get("warned").Bool()}
		case "idle_valves":
			v.ForEach(func(name, iv gjson.Result) bool {
				if rt.Idle == nil {
					rt.Idle = map[string]*Valve{}
				}
				if iv.Type == gjson.Null {
					rt.Idle[name.Str] = nil
				} else {
					valve := readValve(iv)
					rt.Idle[name.Str] = &valve
				}
				return true
			})
		case "verified":
			rt.Verified = v.Str
		case "finished":
			rt.Finished = v.Bool()
		case "ending":
			rt.Ending = v.Str
		case "reflect_limit":
			rt.ReflectLimit = int(v.Int())
		case "reflect_rounds":
			rt.ReflectRounds = int(v.Int())
		case "reflect_done":
			rt.ReflectDone = v.Bool()
		}
		return true
	})
	return rt, true
}

// strOmit and boolOmit write a member unless it is empty (a tag's
// omitempty).
func strOmit(w *jsonobj.Writer, k, v string) {
	if v != "" {
		w.Str(k, v)
	}
}

func boolOmit(w *jsonobj.Writer, k string, v bool) {
	if v {
		w.Bool(k, v)
	}
}

// removeRuntime deletes the runtime files of session sessionID.
func removeRuntime(rec record.Record, sessionID string) {
	os.Remove(RuntimePath(rec, sessionID))
	os.Remove(rec.SessionFile(turnPrefix, sessionID))
}

// pruneRuntimes removes runtime files untouched for runtimeTTL, at most
// once every pruneEvery: the sessions directory also keeps every
// session's usage file for the job's budget, and a look through it stats
// each, at every session start of a job hundreds of sessions long.
func pruneRuntimes(rec record.Record, at time.Time) {
	dir := rec.SessionsDir()
	if dir == "" {
		dir = filepath.Join(rec.Root, statecache.RuntimeDir)
	}
	stamp := filepath.Join(dir, prunedName)
	if fi, err := os.Lstat(stamp); err == nil && fi.Mode().IsRegular() && at.Sub(fi.ModTime()) < pruneEvery {
		return
	}
	// The project's runtime directory held them before they moved beside
	// the record: those left there go the same way.
	for _, rd := range []string{rec.SessionsDir(), filepath.Join(rec.Root, statecache.RuntimeDir)} {
		if rd != "" {
			pruneIn(rd, at)
		}
	}
	// The accounts of the budget of sessions that never ended join the
	// ended ones' sum, as an end would have made them.
	budget.EndStale(rec, at, runtimeTTL)
	safefile.Touch(stamp, at)
}

// prunedName, in the sessions directory, is touched when pruneRuntimes
// last looked through it (a dot file: the record's checks leave it out).
const (
	prunedName = ".pruned"
	pruneEvery = 24 * time.Hour
)

func pruneIn(rd string, at time.Time) {
	entries, err := safefile.ReadDir(rd)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), runtimePrefix) && !strings.HasPrefix(e.Name(), turnPrefix) {
			continue
		}
		if fi, err := e.Info(); err == nil && at.Sub(fi.ModTime()) > runtimeTTL {
			os.Remove(filepath.Join(rd, e.Name()))
		}
	}
}
