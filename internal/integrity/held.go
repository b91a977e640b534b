package integrity

import (
	"bytes"
	"os"
	"slices"
	"strings"

	"github.com/harness-agent/harness/internal/project"
	"github.com/harness-agent/harness/internal/record"
	"github.com/harness-agent/harness/internal/safefile"
	"github.com/harness-agent/harness/internal/state"
)

// RecordFile names the record in Repairs and TAMPER lines.
const RecordFile = "the harness's record"

// FenceHeld is Fence for a command that ran while held was the record as
// the harness had it. A record changed meanwhile is judged (RecordWhy):
// what a harness write of another process could have made (a legal change
// recorded with the live tasks file) is kept, every completion in it left
// unverified, so the verification gate runs its check, confined, at the
// next turn end; anything else is put back from held first and named, so a
// rewrite of the record together with the tasks file (the one change the
// standard level's checks could not see) is undone and the command's
// verdict does not count. Then the harness files are checked against the
// record.
func FenceHeld(p *project.Project, by string, markerBefore bool, held *record.Held) Result {
	rp, put := HeldRecord(p, by, held)
	if !put {
		return Fence(p, by, markerBefore)
	}
	res := check(p, by, laterVerified(p), how{fenced: markerBefore})
	res.Repairs = append([]Repair{rp}, res.Repairs...)
	return res
}

// HeldRecord judges what happened to the record since held was taken
// (RecordWhy): a legal change is kept, every completion in it left
// unverified; anything else is put back as held and logged as a TAMPER
// naming by, and put is true with the repair. It does not check the
// harness files: FenceHeld does, and the guard's completion judge, which
// runs inside a check already, does not need it.
func HeldRecord(p *project.Project, by string, held *record.Held) (rp Repair, put bool) {
	p.Reread() // a command ran since: the record may be another process's now
	moved := held.Moved()
	if slices.Contains(moved, record.Judged) {
		// A judgement kept while the command ran may be the command's own
		// (or a hook's of a subagent's tool call): it is dropped, and the
		// next check after a tool call judges afresh.
		os.Remove(p.Record().Path(record.Judged))
	}
	why, completed := RecordWhy(p, held, moved)
	if why == "" {
		p.Record().AddUnverified(completed...)
		return Repair{}, false
	}
	rp = Repair{File: RecordFile, What: "was changed (" + why + ")"}
	if lost := held.Restore(moved); len(lost) > 0 {
		rp.What += "; could not put back " + strings.Join(lost, ", ")
	}
	Result{Repairs: []Repair{rp}}.logRepairs(p.Root, by)
	return rp, true
}

// laterVerified adopts a change the protocol's verbs could have made, a
// completion among them only as unverified (see FenceHeld).
func laterVerified(p *project.Project) Adopt {
	return func(before, after []byte) string {
		tr, _, _, why := Judge(p, before, after)
		if why != "" {
			return why
		}
		p.Record().AddUnverified(tr.Completed...)
		return ""
	}
}

// RecordWhy judges what happened to the record while a command ran: ""
// when nothing, or only what a harness write of another process (a verb
// or hook of another session, the supervisor) could have made: a legal
// change of the tasks file recorded with the live file as it is, the log's
// mirror grown by appends, the mark following them. completed lists the
// tasks such a change completed, and those taken off the tasks to verify
// meanwhile (to be verified by the trusted side). Any other change is
// named. It is a judge over the files as they are, with no repair.
func RecordWhy(p *project.Project, held *record.Held, moved []string) (why string, completed []string) {
	if len(moved) == 0 {
		return "", nil
	}
	var odd []string
	for _, name := range moved {
		if strings.HasPrefix(name, record.WiringVerdict) || name == record.Judged {
			continue // a cache of the wiring check, which checks its files again; a judgement, dropped (HeldRecord)
		}
		switch name {
		case record.TasksCopy:
			why, done := copyWhy(p, held)
			if why != "" {
				odd = append(odd, record.TasksCopy+": "+why)
			}
			completed = append(completed, done...)
		case record.LogMirror:
			if !mirrorGrew(p, held) {
				odd = append(odd, record.LogMirror+": lines the harness wrote were rewritten")
			}
		case "mark.json":
			why, dropped := markWhy(p, held)
			if why != "" {
				odd = append(odd, "mark.json: "+why)
			}
			completed = append(completed, dropped...)
		case "summary.json", "remote-synced.json", "sandbox-probed.txt", "clone-id", record.LogStampName, record.WiringSeen, record.WiringVerified:
			// Caches and notes the hooks rebuild or check again; the
			// clone's id, made once by whichever process needs it first.
		default:
			odd = append(odd, name+" was written")
		}
	}
	if len(odd) > 0 {
		return strings.Join(odd, "; "), nil
	}
	return "", completed
}

// copyWhy judges a change of the record's copy of the tasks file.
func copyWhy(p *project.Project, held *record.Held) (why string, completed []string) {
	before, ok := held.Tasks()
	if !ok {
		return "it appeared", nil
	}
	after, err := safefile.ReadFile(p.Record().Path(record.TasksCopy), state.MaxFileSize)
	if err != nil {
		return "it was removed", nil
	}
	if live, err := safefile.ReadFile(state.Path(p.Root), state.MaxFileSize); err != nil || !bytes.Equal(live, after) {
		return "it is not the tasks file as it is", nil
	}
	tr, _, _, why := Judge(p, before, after)
	if why != "" {
		return why, nil
	}
	return "", tr.Completed
}

// mirrorGrew reports whether the log's mirror still holds the text held
// where it was (appends only): the whole text when it was held whole, its
// last bytes otherwise.
func mirrorGrew(p *project.Project, held *record.Held) bool {
	hf, ok := held.File(record.LogMirror)
	if !ok {
		return false
	}
	f, err := safefile.Open(p.Record().Path(record.LogMirror))
	if err != nil {
		return false
	}
	defer f.Close()
	got := make([]byte, len(hf.Data))
	if _, err := f.ReadAt(got, hf.Size-int64(len(hf.Data))); err != nil && len(hf.Data) > 0 {
		return false
	}
	return bytes.Equal(got, hf.Data)
}

// markWhy judges a change of the mark: only what follows a legal save (the
// tasks file's stamp) or tightens the hooks (a pause, a session seen with
// the marker, a task to verify) may change. A task taken off the tasks to
// verify is no reason (another session's verification gate verifies
// tasks while a command runs here, and nothing tells its write from the
// command's): it is dropped, to be put back on the list, so the gate runs
// its check again rather than a command skipping it.
func markWhy(p *project.Project, held *record.Held) (why string, dropped []string) {
	was, ok := held.Mark()
	if !ok {
		return "it appeared", nil
	}
	now, ok := p.Mark()
	if !ok {
		return "it was removed or broken", nil
	}
	switch {
	case now.Root != was.Root:
		return "its project changed", nil
	case now.Active != was.Active:
		return "the harness was recorded as switched " + map[bool]string{true: "on", false: "off"}[now.Active], nil
	case was.Paused != "" && now.Paused != was.Paused:
		return "a person's pause was removed", nil
	case was.Cancelled != "" && now.Cancelled != was.Cancelled:
		return "a person's cancel was removed", nil
	case now.Init != was.Init || now.InitStamp() != was.InitStamp():
		return "harness-init.sh's record changed", nil
	}
	for _, id := range was.Unverified {
		if !slices.Contains(now.Unverified, id) {
			dropped = append(dropped, id)
		}
	}
	if now.Tasks() != was.Tasks() {
		if fi, err := os.Stat(state.Path(p.Root)); err != nil || record.StampOf(fi) != now.Tasks() {
			return "its stamp is not the tasks file's", dropped
		}
	}
	return "", dropped
}
