package graph

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/harness-agent/harness/internal/state"
)

func task(id, status string, deps ...string) state.Task {
	return state.Task{ID: id, Title: "T " + id, Status: status, MaxAttempts: 3, DependsOn: deps}
}

func TestBuild(t *testing.T) {
	done := task("a", state.Completed)
	running := task("b", state.InProgress, "a")
	running.ClaimedBy = "w1"
	retry := task("c", state.Failed)
	retry.Attempts, retry.ErrorLog = 1, []string{"[TEST_FAIL] boom\nmore"}
	dead := task("d", state.Failed)
	dead.Attempts = 3
	blockedFailed := task("e", state.Failed, "d")
	blockedFailed.ErrorLog = []string{"[DEPENDENCY] Blocked by failed d"}
	tasks := []state.Task{done, running, retry, dead, blockedFailed,
		task("f", state.Pending, "b"), task("g", state.Pending, "f"), task("h", state.Pending, "a"),
		task("i", state.Pending, "d"), task("j", state.Pending, "missing")}
	g := Build(tasks)
	classes := map[string]string{}
	for _, n := range g.Nodes {
		classes[n.ID] = n.Class
	}
	assert.Equal(t, map[string]string{"a": Completed, "b": InProgress, "c": Retryable, "d": Failed, "e": Blocked,
		"f": Waiting, "g": Waiting, "h": Eligible, "i": Blocked, "j": Eligible}, classes)
	assert.Equal(t, "w1", g.Nodes[1].Worker)
	assert.Equal(t, "[TEST_FAIL] boom", g.Nodes[2].Error)
	// The longest chain of unfinished work: b -> f -> g (a is done).
	assert.Equal(t, []string{"b", "f", "g"}, g.Critical)
	var critical []Edge
	for _, e := range g.Edges {
		if e.Critical {
			critical = append(critical, e)
		}
	}
	assert.Equal(t, []Edge{{"b", "f", true}, {"f", "g", true}}, critical)
	assert.Len(t, g.Edges, 6, "the dependency on a missing id is left out")
}

func TestCycleHasNoCriticalPathThroughIt(t *testing.T) {
	g := Build([]state.Task{task("a", state.Pending, "b"), task("b", state.Pending, "a"), task("c", state.Pending)})
	assert.Equal(t, []string{"c"}, g.Critical)
}

func TestRenderings(t *testing.T) {
	tasks := []state.Task{task("task-001", state.Completed), task("task-002", state.Pending, "task-001"), task("task-003", state.Pending, "task-002")}
	tasks[1].Title = `Say "hi" <now>`
	g := Build(tasks)
	m := g.Mermaid()
	assert.Contains(t, m, "flowchart LR\n")
	assert.Contains(t, m, `t1["task-002: Say #quot;hi#quot; #lt;now#gt;"]:::eligible`)
	assert.Contains(t, m, "t1 --> t2")
	assert.Contains(t, m, "linkStyle 1 stroke:#d00000")
	d := g.DOT()
	assert.Contains(t, d, `"task-002" [label="task-002: Say \"hi\" <now>"`)
	assert.Contains(t, d, `"task-002" -> "task-003" [color="#d00000", penwidth=3];`)
	assert.Contains(t, g.JSON(), `"critical_path": [`)
}
