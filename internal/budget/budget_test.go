package budget

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/harness-agent/harness/internal/record"
	"github.com/harness-agent/harness/internal/state"
)

func line(id string, in, out int) string {
	return `{"type":"assistant","message":{"id":"` + id + `","role":"assistant","usage":{"input_tokens":` +
		itoa(in) + `,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":` + itoa(out) + `}}}` + "\n"
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestObserveCountsEachMessageOnce(t *testing.T) {
	dir := t.TempDir()
	tr := filepath.Join(dir, "t.jsonl")
	now := time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)
	// Lines before the session started are not its own.
	require.NoError(t, os.WriteFile(tr, []byte(line("old", 1000, 1000)), 0o644))
	Start(record.Of(dir), "s1", 1, tr, now)

	appendTo(t, tr, `{"type":"user","message":{"role":"user","content":"hi"}}`+"\n")
	appendTo(t, tr, line("m1", 100, 5)+line("m1", 100, 20)) // two blocks of one message
	appendTo(t, tr, line("m2", 200, 10))
	appendTo(t, tr, `{"type":"assistant","message":{"id":"m3","usage":{"input_tokens":50`) // still being written

	s := Observe(record.Of(dir), "s1", 1, tr, now.Add(90*time.Second))
	assert.Equal(t, int64(120+210), s.Used())
	assert.Equal(t, 90*time.Second, s.Elapsed())

	appendTo(t, tr, `,"output_tokens":1}}}`+"\n")
	s = Observe(record.Of(dir), "s1", 1, tr, now.Add(3*time.Minute))
	assert.Equal(t, int64(120+210+51), s.Used(), "the finished line counts once it is whole")
	s = Observe(record.Of(dir), "s1", 1, tr, now.Add(4*time.Minute))
	assert.Equal(t, int64(381), s.Used(), "reading again adds nothing")

	Start(record.Of(dir), "s2", 2, "", now)
	other := Observe(record.Of(dir), "s2", 2, "", now.Add(10*time.Minute))
	j := Total(record.Of(dir), other)
	assert.Equal(t, 2, j.Sessions)
	assert.Equal(t, int64(381), j.Tokens)
	assert.Equal(t, 14*time.Minute, j.Elapsed)
}

func TestMeasure(t *testing.T) {
	b := state.Budget{JobTokens: 1000, SessionMinutes: 10}
	s := &Session{StartedAt: time.Unix(0, 0), LastSeen: time.Unix(600, 0), Tokens: 850}
	lines := Measure(b, Job{Tokens: 850, Elapsed: 10 * time.Minute}, s)
	require.Len(t, lines, 2)
	assert.Equal(t, "max_job_tokens=1000: 850 used (85%)", lines[0].String())
	assert.True(t, lines[0].Near())
	assert.Equal(t, "max_session_minutes=10: 10 min used (100%)", lines[1].String())
	assert.Equal(t, []Line{lines[1]}, Over(lines))
	assert.Equal(t, []Line{lines[0]}, Near(lines))
	assert.Empty(t, Measure(state.Budget{}, Job{Tokens: 5}, s))
}

func TestWarnOnce(t *testing.T) {
	dir := t.TempDir()
	s := Start(record.Of(dir), "s", 1, "", time.Now())
	assert.True(t, s.Warn(record.Of(dir), "max_job_tokens"))
	assert.False(t, Read(record.Of(dir), "s").Warn(record.Of(dir), "max_job_tokens"))
}

func appendTo(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0o644)
	require.NoError(t, err)
	_, err = f.WriteString(text)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

func TestReset(t *testing.T) {
	dir := t.TempDir()
	Start(record.Of(dir), "a", 1, "", time.Now())
	Start(record.Of(dir), "b", 2, "", time.Now())
	require.Equal(t, 2, Total(record.Of(dir), nil).Sessions)
	Reset(record.Of(dir))
	assert.Equal(t, 0, Total(record.Of(dir), nil).Sessions)
}

// TestObserveBoundsItsRead: a transcript larger than one hook may read is
// counted over several hooks; a line over maxLine (here a sparse file's
// zeros, with no line end) is passed over, never read twice, and the lines
// after it count.
func TestObserveBoundsItsRead(t *testing.T) {
	dir := t.TempDir()
	tr := filepath.Join(dir, "t.jsonl")
	now := time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)
	require.NoError(t, os.WriteFile(tr, []byte(line("m1", 10, 1)), 0o644))
	f, err := os.OpenFile(tr, os.O_WRONLY, 0)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(2*maxRead+100)) // zeros, no line end
	require.NoError(t, f.Close())
	appendTo(t, tr, "\n"+line("m2", 20, 2)+line("m3", 30, 3))

	s := Observe(record.Of(dir), "s1", 1, tr, now)
	assert.Equal(t, int64(maxRead), s.Offset, "one hook reads at most maxRead")
	assert.Equal(t, int64(11), s.Used())
	for i := 0; i < 3; i++ {
		s = Observe(record.Of(dir), "s1", 1, tr, now)
	}
	fi, err := os.Stat(tr)
	require.NoError(t, err)
	assert.Equal(t, fi.Size(), s.Offset)
	assert.Equal(t, int64(11+22+33), s.Used())
}

// A review's spend is the session's: its tokens count against the session
// and the job, and survive the session's next look at its transcript.
// Reviews run outside a session have an account of their own, whose time
// is what they took.
func TestAddReviewCountsInTheBudgets(t *testing.T) {
	dir := t.TempDir()
	tr := filepath.Join(dir, "t.jsonl")
	now := time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)
	Start(record.Of(dir), "s1", 1, tr, now)
	require.NoError(t, os.WriteFile(tr, []byte(line("m1", 100, 5)+line("m2", 1, 1)), 0o644))
	require.NoError(t, AddReview(record.Of(dir), "s1", 1, 90*time.Second, 4000, 0.0123, now))
	s := Observe(record.Of(dir), "s1", 1, tr, now.Add(5*time.Minute))
	assert.Equal(t, int64(105+2+4000), s.Used())
	assert.Equal(t, 1, s.Reviews)
	assert.Equal(t, int64(12300), s.ReviewCostMicroUSD)
	assert.Equal(t, 5*time.Minute, s.Elapsed(), "the review ran inside the session's wall time")

	require.NoError(t, AddReview(record.Of(dir), "", 0, 3*time.Minute, 500, 0, now))
	job := Total(record.Of(dir), nil)
	assert.Equal(t, int64(4107+500), job.Tokens)
	assert.Equal(t, 8*time.Minute, job.Elapsed)
	lines := Measure(state.Budget{JobTokens: 4000}, job, nil)
	assert.True(t, Over(lines)[0].Over())
}
