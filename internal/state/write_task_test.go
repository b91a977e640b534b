package state

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/harness-agent/harness/internal/jsonobj"
	"github.com/harness-agent/harness/internal/jsonobj/filled"
)

// roundTrip writes t with WriteTask and reads it back with ReadTask.
func roundTrip(t *testing.T, task *Task) Task {
	t.Helper()
	w := jsonobj.New(false)
	WriteTask(w, task)
	obj, ok := jsonobj.Read(w.Bytes())
	require.True(t, ok)
	back, err := ReadTask(obj)
	require.NoError(t, err)
	return back
}

func TestWriteTaskRoundTrips(t *testing.T) {
	// Every field set, each to its own value: a field the schema table
	// leaves out of WriteTask (or two it swaps) fails here.
	task := filled.Fill(&Task{})
	task.Status = InProgress
	task.Review = ReviewOff // a switch holds one of its two values
	assert.Equal(t, *task, roundTrip(t, task))

	// What the parser gives for the skim seeds it accepts: nil and empty lists, an
	// unset timeout, no checkpoints.
	for _, seed := range skimSeeds {
		gjson.Get(seed, "tasks").ForEach(func(_, v gjson.Result) bool {
			parsed, err := ReadTask(v)
			if err != nil {
				return true // a seed of what the parser refuses
			}
			assert.Equal(t, parsed, roundTrip(t, &parsed), parsed.ID)
			return true
		})
	}
}

func TestReadTaskChecksLikeTheParser(t *testing.T) {
	for _, doc := range []string{
		`{"id": "a", "status": "done"}`,
		`{"id": "", "status": "pending"}`,
		`{"id": "a", "status": "pending", "attempts": -1}`,
		`{"id": "a", "status": "pending", "attempts": 1, "attempts": 2}`,
		`["a"]`,
	} {
		_, err := ReadTask(gjson.Parse(doc))
		assert.Error(t, err, doc)
	}
}
