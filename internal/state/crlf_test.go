package state

import (
	"errors"
	"io/fs"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCRLFWrittenBackAsFound: a tasks file with Windows line endings (an
// editor's, or git's autocrlf) keeps them through every kind of write: a
// task edited, a task added, the session fields and a configuration member.
func TestCRLFWrittenBackAsFound(t *testing.T) {
	dir := writeState(t, strings.ReplaceAll(sample, "\n", "\r\n"))
	_, err := Update(dir, func(s *State) error {
		tk := s.Task("task-001")
		tk.Status = InProgress
		tk.Checkpoints = append(tk.Checkpoints, Checkpoint{Step: 1, Total: 2, Description: "half", Timestamp: "2025-07-01T10:05:00Z"})
		s.SessionCount = 7
		s.LastSession = "2025-07-01T11:00:00Z"
		s.AddTask(Task{ID: "task-009", Title: "Added", Status: Pending, Priority: "P1", MaxAttempts: 3})
		s.Config.Budget.JobTokens = 1000
		s.SetConfig("max_job_tokens", 1000)
		return nil
	})
	require.NoError(t, err)
	out, err := os.ReadFile(Path(dir))
	require.NoError(t, err)
	text := string(out)
	assert.Equal(t, strings.Count(text, "\n"), strings.Count(text, "\r\n"), "every line ends in CRLF:\n%q", text)
	s, err := Load(dir)
	require.NoError(t, err)
	assert.Equal(t, 7, s.SessionCount)
	assert.Equal(t, 1000, s.Config.Budget.JobTokens)
	assert.Equal(t, "task-009", s.Tasks[len(s.Tasks)-1].ID)
}

// TestErrorsKeepTheirCause: an error of the state layer says what failed in
// the harness's words and keeps the operating system's error as its cause,
// for errors.Is.
func TestErrorsKeepTheirCause(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.Mkdir(Path(dir), 0o755)) // a directory where the file should be
	_, err := Load(dir)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "cannot read "+Path(dir))
	var pathErr *fs.PathError
	assert.True(t, errors.As(err, &pathErr), "the cause is kept: %#v", err)
}
