package budget

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/harness-agent/harness/internal/atomicfile"
	"github.com/harness-agent/harness/internal/jsonobj"
	"github.com/harness-agent/harness/internal/lock"
	"github.com/harness-agent/harness/internal/record"
	"github.com/harness-agent/harness/internal/safefile"
)

// A job hundreds of sessions long keeps hundreds of usage files, and the
// job's total was their sum, read file by file at every turn end of a job
// with a job budget. A session that ends has its usage file moved into
// endedDir, and the sum of that directory's files is kept in endedSum: a
// total reads that one file and the few usage files of the sessions not
// ended. Each move is written into the sum first, naming the move; a move
// the sum names but that did not happen (a crash between the two) is taken
// off again by whoever reads the sum next, so a crash at any point counts
// nothing twice and loses nothing. A sum that is gone or does not read is
// made again from the files.
const (
	endedDir  = "ended"
	endedSum  = "ended-sum.json"
	endedLock = ".ended.lock"
	// endedWait bounds the wait for another session's move: SessionEnd's
	// hooks have 1.5 s together.
	endedWait = 200 * time.Millisecond
)

// ended is the sum of the ended sessions' usage files.
type ended struct {
	job Job
	// The last move, already in job: from and to, names in the sessions'
	// directory; delta what it added (a reopen's takes off).
	from, to string
	delta    Job
}

// End moves the usage files of session sessionID (its own, and its
// account of reviews alone) among the ended sessions' and adds them to
// their sum. A session that starts again with the same id (a resume) has
// them back (reopen). Without a record there is nothing to move.
func End(rec record.Record, sessionID string) {
	sd := rec.SessionsDir()
	if sd == "" {
		return
	}
	var names []string
	for _, id := range []string{sessionID, reviewsPrefix + sessionID} {
		if name := filepath.Base(Path(rec, id)); fileExists(filepath.Join(sd, name)) {
			names = append(names, name)
		}
	}
	endFiles(sd, names)
}

// EndStale ends the accounts in rec's sessions' directory untouched since
// idle before at: sessions killed before their end hook ran (a running
// session writes its account at least every saveEvery). The daily look
// through the sessions' directory calls it.
func EndStale(rec record.Record, at time.Time, idle time.Duration) {
	sd := rec.SessionsDir()
	if sd == "" {
		return
	}
	entries, _ := safefile.ReadDir(sd)
	var names []string
	for _, e := range entries {
		if !e.Type().IsRegular() || !usageFile(e.Name()) {
			continue
		}
		if fi, err := e.Info(); err == nil && at.Sub(fi.ModTime()) > idle {
			names = append(names, e.Name())
		}
	}
	endFiles(sd, names)
}

// endFiles moves the usage files names of the sessions' directory sd among
// the ended sessions', each into their sum.
func endFiles(sd string, names []string) {
	if len(names) == 0 {
		return
	}
	unlock, err := lock.File(filepath.Join(sd, endedLock), endedWait)
	if err != nil {
		return
	}
	defer unlock()
	if os.MkdirAll(filepath.Join(sd, endedDir), 0o700) != nil {
		return
	}
	for _, name := range names {
		to := filepath.Join(endedDir, name)
		if fileExists(filepath.Join(sd, to)) {
			// The same id ended before and its account was not
			// reopened (a Stop without a session start): both count.
			to += fmt.Sprintf(".%d", time.Now().UnixNano())
		}
		var delta Job
		if s := readFile(filepath.Join(sd, name)); s != nil {
			delta.add(s)
		}
		move(sd, name, to, delta)
	}
}

// reopen moves the ended account of session sessionID back among the
// live ones, taking it off the ended sessions' sum, and reports whether
// it did.
func reopen(rec record.Record, sessionID string) bool {
	sd := rec.SessionsDir()
	if sd == "" {
		return false
	}
	name := filepath.Base(Path(rec, sessionID))
	from := filepath.Join(endedDir, name)
	if !fileExists(filepath.Join(sd, from)) {
		return false
	}
	unlock, err := lock.File(filepath.Join(sd, endedLock), endedWait)
	if err != nil {
		return false
	}
	defer unlock()
	var delta Job
	if s := readFile(filepath.Join(sd, from)); s != nil {
		delta.sub(s)
	}
	return move(sd, from, name, delta)
}

// move renames from to to in the sessions' directory sd, the sum
// changed by delta written first (the caller holds endedLock).
func move(sd, from, to string, delta Job) bool {
	sum := endedIn(sd)
	sum.job.plus(delta, 1)
	sum.from, sum.to, sum.delta = from, to, delta
	if sum.save(sd) != nil {
		return false
	}
	// A rename that fails (or never comes: a crash) leaves the sum naming
	// a move that did not happen: its next reader takes it off.
	return rename(filepath.Join(sd, from), filepath.Join(sd, to)) == nil
}

// rename is os.Rename; a test makes it fail, as a crash before it would.
var rename = os.Rename

// endedIn is the ended sessions' sum in the sessions' directory sd, a
// move it names that did not happen taken off; made again from the files
// when there is none that reads.
func endedIn(sd string) ended {
	sum, ok := readEnded(sd)
	if !ok {
		return recount(sd)
	}
	if sum.from != "" && fileExists(filepath.Join(sd, sum.from)) && !fileExists(filepath.Join(sd, sum.to)) {
		sum.job.plus(sum.delta, -1)
		sum.from, sum.to, sum.delta = "", "", Job{}
	}
	return sum
}

// recount is the sum of the ended sessions' files, read one by one.
func recount(sd string) ended {
	var sum ended
	path := filepath.Join(sd, endedDir)
	entries, _ := safefile.ReadDir(path)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), filePrefix) {
			if s := readFile(filepath.Join(path, e.Name())); s != nil {
				sum.job.add(s)
			}
		}
	}
	return sum
}

// sub takes s off the sum (add's inverse).
func (j *Job) sub(s *Session) {
	var one Job
	one.add(s)
	j.plus(one, -1)
}

// plus adds sign times d to j.
func (j *Job) plus(d Job, sign int) {
	j.Sessions += sign * d.Sessions
	j.Elapsed += time.Duration(sign) * d.Elapsed
	j.Tokens += int64(sign) * d.Tokens
	j.Reviews.Count += sign * d.Reviews.Count
	j.Reviews.Elapsed += time.Duration(sign) * d.Reviews.Elapsed
	j.Reviews.Tokens += int64(sign) * d.Reviews.Tokens
	j.Reviews.CostMicroUSD += int64(sign) * d.Reviews.CostMicroUSD
}

func (e ended) save(sd string) error {
	w := jsonobj.New(true)
	writeJob(w, "", e.job)
	if e.from != "" {
		w.Str("from", e.from)
		w.Str("to", e.to)
		writeJob(w, "move_", e.delta)
	}
	return atomicfile.ReplaceSmall(filepath.Join(sd, endedSum), w.Bytes())
}

func writeJob(w *jsonobj.Writer, prefix string, j Job) {
	w.Int(prefix+"sessions", int64(j.Sessions))
	w.Int(prefix+"elapsed_ns", int64(j.Elapsed))
	w.Int(prefix+"tokens", j.Tokens)
	w.Int(prefix+"reviews", int64(j.Reviews.Count))
	w.Int(prefix+"review_ns", int64(j.Reviews.Elapsed))
	w.Int(prefix+"review_tokens", j.Reviews.Tokens)
	w.Int(prefix+"review_cost_micro_usd", j.Reviews.CostMicroUSD)
}

func readJob(obj gjson.Result, prefix string) Job {
	return Job{Sessions: int(obj.Get(prefix + "sessions").Int()), Elapsed: time.Duration(obj.Get(prefix + "elapsed_ns").Int()),
		Tokens: obj.Get(prefix + "tokens").Int(), Reviews: Reviews{Count: int(obj.Get(prefix + "reviews").Int()),
			Elapsed: time.Duration(obj.Get(prefix + "review_ns").Int()), Tokens: obj.Get(prefix + "review_tokens").Int(),
			CostMicroUSD: obj.Get(prefix + "review_cost_micro_usd").Int()}}
}

func readEnded(sd string) (e ended, ok bool) {
	data, err := safefile.ReadFile(filepath.Join(sd, endedSum), safefile.Small)
	if err != nil {
		return e, false
	}
	obj, ok := jsonobj.Read(data)
	if !ok || !obj.Get("sessions").Exists() {
		return e, false
	}
	e.job = readJob(obj, "")
	if e.from = obj.Get("from").Str; e.from != "" {
		e.to, e.delta = obj.Get("to").Str, readJob(obj, "move_")
	}
	return e, true
}

func fileExists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
