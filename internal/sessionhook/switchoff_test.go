package sessionhook

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/harness-agent/harness/internal/integrity"
	"github.com/harness-agent/harness/internal/project"
	"github.com/harness-agent/harness/internal/record"
	"github.com/harness-agent/harness/internal/root"
)

// The run's end switches the hooks off (the record, then the marker) while
// other hooks may be checking (another session's, a worker's): a check
// between the two writes found the marker gone while the record said on,
// and put the marker back for the session that had seen it, the finished
// run on again. Under the transaction lock it finds both or neither.
func TestSwitchOffWhileAHookChecks(t *testing.T) {
	doc := tasksJSON(1, "", task("task-001", "completed"))
	dir := testProject(t, doc)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "harness-tasks.json.bak"), []byte(doc), 0o644))
	require.NoError(t, record.Of(dir).SaveTasks([]byte(doc), true))
	marker := filepath.Join(dir, root.ActiveMarker)
	for i := range 30 {
		require.NoError(t, os.WriteFile(marker, nil, 0o644))
		record.Of(dir).SetActive(true)
		record.Of(dir).Note(record.Change{Session: sessionID})
		started, stop, done := make(chan struct{}), make(chan struct{}), make(chan []string)
		go func() {
			var repairs []string
			for n := 0; ; n++ {
				if n == 1 {
					close(started)
				}
				select {
				case <-stop:
					done <- repairs
					return
				default:
				}
				for _, r := range integrity.Check(project.Open(dir), "another session's tool call", nil).Repairs {
					repairs = append(repairs, r.File+" "+r.What)
				}
			}
		}()
		<-started
		switchOff(project.Open(dir))
		close(stop)
		assert.Empty(t, <-done, "run %d", i)
		assert.NoFileExists(t, marker, "run %d", i)
		m, _ := record.Of(dir).Mark()
		assert.False(t, m.Active, "run %d", i)
	}
}
