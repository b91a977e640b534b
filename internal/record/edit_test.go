package record

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/harness-agent/harness/internal/lock"
)

// A person's pause and the hooks' own notes are written by different
// processes into the one mark at any time: each change is a read and a
// write, and two interleaved lose one of them unless the mark's lock
// orders them. Here writers at once add tasks to verify, record sessions
// and pause the run; every change must be in the mark at the end.
func TestEditsAtOnceLoseNothing(t *testing.T) {
	t.Setenv("HARNESS_RECORD_DIR", t.TempDir())
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, TasksCopy), []byte(`{"tasks":[]}`), 0o644))
	require.NoError(t, Of(root).SaveTasks([]byte(`{"tasks":[]}`), true))

	const writers, each = 4, 40
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				Of(root).AddUnverified(fmt.Sprintf("w%d-%d", w, i))
				if w == 0 && i == each/2 {
					assert.True(t, Of(root).SetPaused("2026-11-28T00:00:00Z"))
				}
				if w == 1 {
					Of(root).Note(Change{Session: fmt.Sprintf("s%d", i)})
				}
			}
		}()
	}
	wg.Wait()

	m, ok := Of(root).Mark()
	require.True(t, ok)
	assert.Len(t, m.Unverified, writers*each, "every task to verify is kept")
	assert.Equal(t, "2026-11-28T00:00:00Z", m.Paused, "the person's pause is kept")
	assert.Len(t, m.Sessions, maxSessions)
	assert.True(t, m.Active)
}

// A lock held past its wait (a holder stopped half-way) does not drop a
// change: it is made without the lock, late, not lost.
func TestEditGoesOnWithoutAStuckLock(t *testing.T) {
	t.Setenv("HARNESS_RECORD_DIR", t.TempDir())
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, TasksCopy), []byte(`{}`), 0o644))
	require.NoError(t, Of(root).SaveTasks([]byte(`{}`), true))
	was := markWait
	markWait = 50 * time.Millisecond
	t.Cleanup(func() { markWait = was })
	unlock, err := lock.File(filepath.Join(Dir(root), markLock), 0)
	require.NoError(t, err)
	defer unlock()

	assert.True(t, Of(root).SetPaused("now"))
	m, _ := Of(root).Mark()
	assert.Equal(t, "now", m.Paused)
}

// A change with nothing to write (the session already noted, nothing to
// verify) takes no lock: the hooks make such calls at every turn. The lock
// file, made by the first locked change, tells.
func TestEditWithNothingToWriteTakesNoLock(t *testing.T) {
	t.Setenv("HARNESS_RECORD_DIR", t.TempDir())
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, TasksCopy), []byte(`{}`), 0o644))
	require.NoError(t, Of(root).SaveTasks([]byte(`{}`), true))
	Of(root).Note(Change{Session: "s1"})
	Of(root).AddUnverified("t1")
	lockFile := filepath.Join(Dir(root), markLock)
	require.FileExists(t, lockFile)
	require.NoError(t, os.Remove(lockFile))
	before, err := os.ReadFile(filepath.Join(Dir(root), markName))
	require.NoError(t, err)

	Of(root).Note(Change{Session: "s1"})
	Of(root).SetActive(true)
	Of(root).AddUnverified("t1")
	Of(root).Verified("t2")
	assert.True(t, Of(root).SetPaused(""))
	fi, err := os.Stat(filepath.Join(root, TasksCopy))
	require.NoError(t, err)
	Of(root).Touch(fi)

	assert.NoFileExists(t, lockFile)
	after, _ := os.ReadFile(filepath.Join(Dir(root), markName))
	assert.Equal(t, string(before), string(after))

	Of(root).Verified("t1")
	assert.FileExists(t, lockFile, "a change with something to write takes the lock")
	m, _ := Of(root).Mark()
	assert.Empty(t, m.Unverified)
}

// What one integrity check learns of the mark (a session saw the marker,
// the hooks are on again, harness-init.sh's new stamp) is one write: Note
// applies every field set, keeps the rest, and writes nothing when the mark
// already says it all.
func TestNoteWritesOnce(t *testing.T) {
	t.Setenv("HARNESS_RECORD_DIR", t.TempDir())
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, TasksCopy), []byte(`{}`), 0o644))
	rec := Of(root)
	require.NoError(t, rec.SaveTasks([]byte(`{}`), false))
	assert.True(t, rec.SetPaused("then"))
	init := Stamp{Size: 3, ModNs: 4, Ino: 5, CtimeNs: 6}
	tasks := Stamp{Size: 2, ModNs: 7, Ino: 8, CtimeNs: 9}
	change := Change{Session: "s1", Active: new(true), Init: &init, Tasks: &tasks}

	before := MarkWrites()
	rec.Note(change)
	assert.Equal(t, before+1, MarkWrites(), "one write for the four changes")
	m, ok := rec.Mark()
	require.True(t, ok)
	assert.Equal(t, []string{"s1"}, m.Sessions)
	assert.True(t, m.Active)
	assert.Equal(t, init, m.InitStamp())
	assert.Equal(t, tasks, m.Tasks())
	assert.Equal(t, "then", m.Paused, "a field the change does not name is kept")

	rec.Note(change)
	rec.Note(Change{})
	assert.Equal(t, before+1, MarkWrites(), "nothing left to write")

	rec.Note(Change{Active: new(false)})
	m, _ = rec.Mark()
	assert.False(t, m.Active)
	assert.Equal(t, []string{"s1"}, m.Sessions)

	none := Of(t.TempDir())
	none.Note(change)
	_, ok = none.Mark()
	assert.False(t, ok, "no record: nothing is made")
}
