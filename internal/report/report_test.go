package report

import (
	"bytes"
	"fmt"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/harness-agent/harness/internal/state"
)

// craftedLog has one line of every entry type the harness writes, and a
// line that is not an entry.
const craftedLog = `[2026-01-01T10:00:00Z] [SESSION-0] INIT Harness initialized for project /p
[2026-01-01T10:00:01Z] [SESSION-0] INIT Task added: A (id=task-001 priority=P0 depends_on=)
[2026-01-01T10:01:00Z] [SESSION-1] LOCK acquired
[2026-01-01T10:01:01Z] [SESSION-1] Starting [task-001] A (base=abc)
[2026-01-01T10:01:30Z] [SESSION-1] CHECKPOINT [task-001] 1/2 half
[2026-01-01T10:02:00Z] [SESSION-1] ERROR [task-001] [TEST_FAIL] exit status 1
[2026-01-01T10:02:00Z] [SESSION-1] ROLLBACK [task-001] git reset --hard abc
[2026-01-01T10:02:05Z] [SESSION-1] TAMPER [task-001] harness-tasks.json restored
[2026-01-01T10:02:06Z] [SESSION-1] WARN [VALVE] progress valve opened
garbage that is not an entry
[2026-01-01T10:03:00Z] [SESSION-2] RECOVERY [task-001] lease expired, back to pending
[2026-01-01T10:03:01Z] [SESSION-2] Starting [task-001] A (base=abc)
[2026-01-01T10:04:01Z] [SESSION-2] Completed [task-001] A
[2026-01-01T10:04:02Z] [SESSION-2] ERROR [ENV_SETUP] something outside a task
[2026-01-01T10:04:03Z] [SESSION-2] WARN [REFLECT] reflection round 1 of 3
[2026-01-01T10:04:04Z] [SESSION-2] Starting [task-002] B (base=def)
[2026-01-01T10:05:00Z] [SESSION-2] STATS tasks_total=2 completed=1
`

func TestParseLine(t *testing.T) {
	for _, tc := range []struct {
		line                string
		typ, task, cat, msg string
		ok                  bool
	}{
		{"[2026-01-01T10:00:00Z] [SESSION-3] ERROR [task-001] [TEST_FAIL] exit 1", "ERROR", "task-001", "TEST_FAIL", "exit 1", true},
		{"[2026-01-01T10:00:00Z] [SESSION-3] ERROR [ENV_SETUP] no git", "ERROR", "", "ENV_SETUP", "no git", true},
		{"[2026-01-01T10:00:00Z] [SESSION-3] Starting [build-api] API", "Starting", "build-api", "", "API", true},
		{"[2026-01-01T10:00:00Z] [SESSION-3] INIT done", "INIT", "", "", "done", true},
		{"[not a time] [SESSION-3] INIT x", "", "", "", "", false},
		{"[2026-01-01T10:00:00Z] [SESS-3] INIT x", "", "", "", "", false},
		{"plain text", "", "", "", "", false},
	} {
		e, ok := ParseLine(tc.line)
		require.Equal(t, tc.ok, ok, tc.line)
		if ok {
			assert.Equal(t, []string{tc.typ, tc.task, tc.cat, tc.msg}, []string{e.Type, e.TaskID, e.Category, e.Message}, tc.line)
		}
	}
}

func TestReadLogEveryEventType(t *testing.T) {
	tl, err := ReadLog(strings.NewReader(craftedLog))
	require.NoError(t, err)
	assert.Equal(t, 17, tl.Lines)
	assert.Equal(t, 1, tl.Skipped)
	require.Len(t, tl.Sessions, 3)
	assert.Equal(t, []int{0, 1, 2}, []int{tl.Sessions[0].N, tl.Sessions[1].N, tl.Sessions[2].N})
	assert.Equal(t, "2026-01-01T10:02:06Z", tl.Sessions[1].End.Format(time.RFC3339))
	require.Len(t, tl.Attempts, 3)
	assert.Equal(t, "failed", tl.Attempts[0].Outcome)
	assert.Equal(t, time.Minute-time.Second, tl.Attempts[0].End.Sub(tl.Attempts[0].Start))
	assert.Equal(t, "completed", tl.Attempts[1].Outcome)
	assert.Equal(t, "", tl.Attempts[2].Outcome, "task-002 is still open")
	var types []string
	for _, m := range tl.Markers {
		types = append(types, m.Type+"/"+m.Category)
	}
	assert.Equal(t, []string{"ERROR/TEST_FAIL", "ROLLBACK/", "TAMPER/", "WARN/VALVE", "RECOVERY/", "ERROR/ENV_SETUP", "WARN/REFLECT"}, types)
	require.Len(t, tl.Done, 1)
	assert.Equal(t, "2026-01-01T10:05:00Z", tl.Last.Format(time.RFC3339))
}

func TestReadLogSkipsOverlongLine(t *testing.T) {
	log := "[2026-01-01T10:00:00Z] [SESSION-1] Starting [a] A\n" + strings.Repeat("x", maxLine+10) + "\n[2026-01-01T10:01:00Z] [SESSION-1] Completed [a] A\n"
	tl, err := ReadLog(strings.NewReader(log))
	require.NoError(t, err)
	assert.GreaterOrEqual(t, tl.Skipped, 1)
	require.Len(t, tl.Attempts, 1)
}

// generated makes n tasks in chains of 10 with cross links: some done, one in
// progress, failures retryable and permanent, and their dependents.
func generated(n int) *state.State {
	s := &state.State{SessionCount: 7, Config: state.Config{MaxSessions: 20}}
	for i := 0; i < n; i++ {
		t := state.Task{ID: fmt.Sprintf("task-%04d", i), Title: fmt.Sprintf("Task number %d", i), Status: state.Pending, Priority: "P1", MaxAttempts: 3, Command: "go test ./..."}
		if i%10 != 0 {
			t.DependsOn = []string{fmt.Sprintf("task-%04d", i-1)}
		}
		if i%10 == 5 && i >= 20 {
			t.DependsOn = append(t.DependsOn, fmt.Sprintf("task-%04d", i-17))
		}
		switch {
		case i < n/3:
			t.Status, t.Attempts = state.Completed, 1
		case i == n/3:
			t.Status, t.Attempts, t.ClaimedBy = state.InProgress, 1, "w1"
		case i == n/3+20:
			t.Status, t.Attempts, t.ErrorLog = state.Failed, 1, []string{"[TEST_FAIL] exit status 1\nmore"}
		case i == n/3+40:
			t.Status, t.Attempts, t.ErrorLog = state.Failed, 3, []string{"[TEST_FAIL] for good"}
		}
		s.Tasks = append(s.Tasks, t)
	}
	return s
}

// generatedLog writes a log of about size bytes for tasks tasks: up to three
// attempts per task, the rest of the bulk checkpoints, warnings and stats,
// the lines a long job really accumulates.
func generatedLog(w io.Writer, tasks, size int) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	written, k := 0, 0
	for written < size {
		id := fmt.Sprintf("task-%04d", k%tasks)
		ts := t0.Add(time.Duration(k) * time.Second).Format(time.RFC3339)
		var l string
		switch {
		case k < 3*tasks && k%2 == 0:
			l = fmt.Sprintf("[%s] [SESSION-%d] Starting [%s] Task (base=abc)\n[%s] [SESSION-%d] Completed [%s] Task\n", ts, k/500, id, ts, k/500, id)
		case k%3 == 0:
			l = fmt.Sprintf("[%s] [SESSION-%d] WARN [%s] %s\n", ts, k/500, id, strings.Repeat("a long warning ", 12))
		default:
			l = fmt.Sprintf("[%s] [SESSION-%d] CHECKPOINT [%s] 1/2 %s\n", ts, k/500, id, strings.Repeat("step ", 30))
		}
		n, _ := io.WriteString(w, l)
		written += n
		k++
	}
}

func TestRender1000Tasks(t *testing.T) {
	s := generated(1000)
	var logBuf bytes.Buffer
	generatedLog(&logBuf, 1000, 2<<20)
	tl, err := ReadLog(&logBuf)
	require.NoError(t, err)
	d := Build(s, tl, time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC))
	assert.Equal(t, 333, d.Headline.Done)
	assert.True(t, d.Layout.Compact)
	assert.NotEmpty(t, d.Graph.Critical)
	var out bytes.Buffer
	require.NoError(t, Write(&out, d, Options{}))
	page := out.String()
	assert.Equal(t, 1000, strings.Count(page, `<g class="node`))
	assert.Equal(t, 1000, strings.Count(page, `<tr class="row"`))
	assert.Equal(t, len(d.Graph.Critical), strings.Count(page, `<g class="node crit"`))
	for _, external := range []string{"http://", "https://", "src=", "<link"} {
		assert.False(t, strings.Contains(page, external), "no external assets: %s", external)
	}
	for i := range d.Graph.Nodes {
		assert.True(t, d.Layout.X[i] > 0 && d.Layout.X[i] < d.Layout.Width && d.Layout.Y[i] > 0 && d.Layout.Y[i] < d.Layout.Height)
	}
}

func TestLayoutLayers(t *testing.T) {
	s := generated(10)
	d := Build(s, &Timeline{}, time.Now())
	assert.False(t, d.Layout.Compact)
	// Every dependency sits in a column left of its dependent.
	idx := map[string]int{}
	for i, n := range d.Graph.Nodes {
		idx[n.ID] = i
	}
	for _, e := range d.Graph.Edges {
		assert.Less(t, d.Layout.X[idx[e.From]], d.Layout.X[idx[e.To]], e.From+"→"+e.To)
	}
}

func TestHeadline(t *testing.T) {
	tl, err := ReadLog(strings.NewReader(craftedLog))
	require.NoError(t, err)
	s := &state.State{SessionCount: 2, Config: state.Config{MaxSessions: 5}, Tasks: []state.Task{
		{ID: "task-001", Status: state.Completed, Attempts: 2, MaxAttempts: 3},
		{ID: "task-002", Status: state.InProgress, Attempts: 1, MaxAttempts: 3, DependsOn: []string{"task-001"}},
	}}
	d := Build(s, tl, time.Date(2026, 1, 1, 10, 6, 0, 0, time.UTC))
	h := d.Headline
	assert.Equal(t, 1, h.Done)
	assert.Equal(t, 2, h.Total)
	// task-001: two failed attempts, then the one that passed; task-002's
	// second attempt is under way and has not ended.
	assert.Equal(t, 4, h.AttemptsTotal)
	assert.InDelta(t, 1.0/4, h.SuccessPerAttempt, 1e-9)
	assert.Equal(t, time.Minute, h.MeanTask)
	assert.Equal(t, 1, h.Timed)
	assert.Equal(t, time.Minute, h.SinceProgress)
	assert.Equal(t, []string{"task-002"}, d.Graph.Critical)
	var out bytes.Buffer
	require.NoError(t, Write(&out, d, Options{RefreshSeconds: 3}))
	assert.Contains(t, out.String(), `http-equiv="refresh" content="3"`)
	assert.Contains(t, out.String(), "<b>1/2</b> done")
	assert.Contains(t, out.String(), "m-tamper")
	assert.Contains(t, out.String(), `<td data-v="3">3/3</td>`, "task-001: done at its third attempt")
	assert.Contains(t, out.String(), `<td data-v="2">2/3</td>`, "task-002: at its second attempt")
}

// The table counts attempts as `harness status` words them: the tasks
// file counts failed attempts only. Bug: a task done at the first attempt
// showed 0/3.
func TestAttemptsMade(t *testing.T) {
	for _, tc := range []struct {
		status         string
		failed         int
		made, finished int
	}{
		{state.Pending, 0, 0, 0},
		{state.Pending, 1, 1, 1},
		{state.InProgress, 0, 1, 0},
		{state.InProgress, 2, 3, 2},
		{state.Completed, 0, 1, 1},
		{state.Completed, 2, 3, 3},
		{state.Failed, 3, 3, 3},
	} {
		task := &state.Task{Status: tc.status, Attempts: tc.failed, MaxAttempts: 3}
		assert.Equal(t, tc.made, attemptsMade(task), "%s after %d failures", tc.status, tc.failed)
		assert.Equal(t, tc.finished, attemptsFinished(task), "%s after %d failures", tc.status, tc.failed)
	}
}

// A diamond's tooltip has the line's words, without brackets it has not.
// Bug: a rollback read `ROLLBACK task-002 [] git reset …`.
func TestEventTitle(t *testing.T) {
	for line, want := range map[string]string{
		"[2026-01-01T10:00:00Z] [SESSION-1] ROLLBACK [task-002] git reset --hard abc1234": "ROLLBACK task-002 git reset --hard abc1234",
		"[2026-01-01T10:00:00Z] [SESSION-1] ERROR [task-001] [TEST_FAIL] exit 1":          "ERROR task-001 [TEST_FAIL] exit 1",
		"[2026-01-01T10:00:00Z] [SESSION-1] WARN [VALVE] stop allowed":                    "WARN [VALVE] stop allowed",
		"[2026-01-01T10:00:00Z] [SESSION-1] TAMPER put back harness-tasks.json":           "TAMPER put back harness-tasks.json",
	} {
		e, ok := ParseLine(line)
		require.True(t, ok, line)
		assert.Equal(t, want, e.Title(), line)
	}
}

// BenchmarkReport is the whole `harness report` work for 1,000 tasks and a
// 50 MB progress log: stream the log, build, render.
func BenchmarkReport(b *testing.B) {
	s := generated(1000)
	var logBuf bytes.Buffer
	generatedLog(&logBuf, 1000, 50<<20)
	raw := logBuf.Bytes()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tl, err := ReadLog(bytes.NewReader(raw))
		if err != nil {
			b.Fatal(err)
		}
		if err := Write(io.Discard, Build(s, tl, time.Now()), Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// The time axis labels each tick once: a span of a few seconds gets as
// many ticks as it has distinct seconds, a long one seven.
func TestAxisTicks(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		span time.Duration
		want []string
	}{
		{0, []string{"10:00:00"}},
		{400 * time.Millisecond, []string{"10:00:00"}},
		{3 * time.Second, []string{"10:00:00", "10:00:01", "10:00:02", "10:00:03"}},
		{time.Hour, []string{"10:00:00", "10:10:00", "10:20:00", "10:30:00", "10:40:00", "10:50:00", "11:00:00"}},
		{3 * 24 * time.Hour, []string{"01-01 10:00", "01-01 22:00", "01-02 10:00", "01-02 22:00", "01-03 10:00", "01-03 22:00", "01-04 10:00"}},
	} {
		var b strings.Builder
		writeAxis(&b, t0, t0.Add(tc.span), 0, 600, 100)
		var got []string
		for _, m := range regexp.MustCompile(`<text class="tick"[^>]*>([^<]*)</text>`).FindAllStringSubmatch(b.String(), -1) {
			got = append(got, m[1])
		}
		assert.Equal(t, tc.want, got, "span %v", tc.span)
	}
}

// A session band is named where its name fits in it; a narrow one (a long
// run's many short sessions, the last one at the right edge) is named on
// hover alone, its rect's title.
func TestSessionLabels(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	tl := &Timeline{
		Sessions: []Session{
			{N: 1, Start: t0, End: t0.Add(10 * time.Hour)},
			{N: 2, Start: t0.Add(10 * time.Hour), End: t0.Add(10*time.Hour + time.Minute)},
			{N: 100751, Start: t0.Add(10*time.Hour + time.Minute), End: t0.Add(10*time.Hour + 2*time.Minute)},
		},
		Last: t0.Add(10*time.Hour + 2*time.Minute),
	}
	var b strings.Builder
	writeTimeline(&b, &Data{State: &state.State{}, Timeline: tl})
	page := b.String()
	assert.Contains(t, page, `y="12">S1</text>`)
	assert.NotContains(t, page, `>S2</text>`)
	assert.NotContains(t, page, `>S100751</text>`)
	assert.Contains(t, page, "<title>session 2: ")
	assert.Contains(t, page, "<title>session 100751: ")
}
