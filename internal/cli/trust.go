package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/harness-agent/harness/internal/progress"
	"github.com/harness-agent/harness/internal/record"
	"github.com/harness-agent/harness/internal/root"
	"github.com/harness-agent/harness/internal/safefile"
)

// trustTail is how many recent log lines status reads for the changes
// the hooks put back.
const trustTail = 2000

// trustNotes are the lines status shows a person about the harness's own
// files: the changes put back lately (TAMPER lines), the completions the
// verification gate has still to run, and a record that is missing where
// the log says the harness has worked. They are what a circumvention the
// harness could not simply undo leaves for a person to see.
func trustNotes(dir string) []string {
	var notes []string
	lines, _ := progress.Tail(dir, trustTail)
	var tampers []string
	for _, l := range lines {
		switch {
		case strings.Contains(l, "] "+progress.Tamper+" "):
			tampers = append(tampers, l)
		case strings.Contains(l, "] "+progress.Init+" Adopted "):
			// A person looked at the files and kept them as they are:
			// what was put back before is behind them.
			tampers = nil
		}
	}
	if n := len(tampers); n > 0 {
		latest := tampers[n-1]
		if _, rest, ok := strings.Cut(latest, "] "+progress.Tamper+" "); ok {
			latest = rest
		}
		notes = append(notes, fmt.Sprintf("tamper: %d change(s) of the harness's files put back in the last %d log lines; latest: %s", n, trustTail, clipLine(latest, 200)))
	}
	m, ok := record.Of(dir).Mark()
	switch {
	case !ok && len(lines) > 0 && root.Active(dir):
		if from := initializedIn(dir); from != "" && from != dir {
			// A copy or a move: the record is kept by the directory's path.
			notes = append(notes, "record: none for this directory (the harness's account of its own files, kept under "+record.Base()+" by path): the job was set up in "+from+" and copied or moved here; `harness adopt` in your terminal makes the files here the harness's own")
			break
		}
		notes = append(notes, "record: missing (the harness's account of its own files, kept under "+record.Base()+"): changes made before the next write cannot be checked; `harness adopt` in your terminal records the files as they are; if you did not remove it, the agent may have")
	case ok && len(m.Unverified) > 0:
		notes = append(notes, "unverified: "+strings.Join(m.Unverified, ", ")+" completed by a validation run inside a Claude Code session, in a process the agent started, which the hooks did not see; the verification gate (the Stop hook) runs the check again at the session's next turn end. Nothing to do: a completion stays unverified only until then")
	}
	return notes
}

// clipLine shortens s to n bytes with an ellipsis.
func clipLine(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}

// initializedIn is the directory the log's first line says the job was set
// up in ("INIT Harness initialized for project DIR"), "" when it says none.
func initializedIn(dir string) string {
	f, err := safefile.Open(progress.Path(dir))
	if err != nil {
		return ""
	}
	defer f.Close()
	buf := make([]byte, 4096)
	n, _ := io.ReadFull(f, buf)
	first, _, _ := strings.Cut(string(buf[:n]), "\n")
	_, from, ok := strings.Cut(first, "] "+progress.Init+" Harness initialized for project ")
	if !ok {
		return ""
	}
	return from
}
