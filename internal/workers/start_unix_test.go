//go:build !windows

package workers

import (
	"io"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/harness-agent/harness/internal/state"
	"github.com/harness-agent/harness/internal/taskcycle"
)

// While the remote refused every push, a worker of a machine whose peers'
// claims had lapsed started a session at every poll: the lapse let it skip
// its back-off each time, each session's claim was refused at once, and
// after three such sessions in each of its workers the supervisor gave up
// with work left. A lapse lets a backing-off worker start at once only
// when it ran out after that worker's last session started: one try per
// lapse, then the back-off holds.
func TestALapsedLeaseSkipsTheBackOffOncePerLapse(t *testing.T) {
	claude, err := exec.LookPath("true")
	if err != nil {
		t.Skip("no true(1)")
	}
	t.Setenv("HARNESS_WORKTREES", t.TempDir())
	now := time.Now()
	lapsedAt := now.Add(-5 * time.Second).Truncate(time.Second)
	s := &state.State{Tasks: []state.Task{
		{ID: "a", Status: state.InProgress, ClaimedBy: "m9-w1", Generation: 1, LeaseExpiresAt: lapsedAt.UTC().Format(time.RFC3339)},
	}}
	tests := []struct {
		name  string
		slot  slot
		start bool
	}{
		{"backing off, last session before the lapse", slot{started: lapsedAt.Add(-10 * time.Second), quick: 1, notAfter: now.Add(5 * time.Second)}, true},
		{"backing off, last session after the lapse", slot{started: lapsedAt.Add(2 * time.Second), quick: 2, notAfter: now.Add(5 * time.Second)}, false},
		{"sitting out its own killed session's lease", slot{started: lapsedAt.Add(-10 * time.Second), sittingOut: true, notAfter: now.Add(5 * time.Second)}, false},
		{"back-off over", slot{started: lapsedAt.Add(2 * time.Second), quick: 2, notAfter: now.Add(-time.Second)}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sl := tt.slot
			sl.id, sl.tree = "m1-w1", t.TempDir()
			root := t.TempDir()
			require.NoError(t, os.MkdirAll(taskcycle.WorkersDir(root), 0o755))
			sv := &Supervisor{o: Options{Root: root, Claude: claude, Out: io.Discard, Now: func() time.Time { return now }},
				slots: []*slot{&sl}, exits: make(chan exited, 1)}
			sv.startWhereWork(s)
			assert.Equal(t, tt.start, sl.cmd != nil)
			if sl.cmd != nil {
				require.NotNil(t, <-sv.exits)
			}
		})
	}
}
