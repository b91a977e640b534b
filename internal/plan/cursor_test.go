package plan

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/harness-agent/harness/internal/state"
)

func TestSetCursorStatus(t *testing.T) {
	for _, tc := range []struct {
		line, want string
		col        int
		flow       bool
	}{
		{"    status: pending", "    status: completed", 12, false},
		{"    status: pending # not yet", "    status: completed # not yet", 12, false},
		{`    status: "pending"`, "    status: completed", 12, false},
		{"    status: 'in_progress'  ", "    status: completed  ", 12, false},
		{"  - status: pending", "  - status: completed", 12, false},
		{"todos: [{id: a, status: pending}, {id: b, status: pending}]", "todos: [{id: a, status: completed}, {id: b, status: pending}]", 24, true},
		{"status: 00,", "status: completed", 8, false},
	} {
		got, err := setStatusValue(tc.line, tc.col, "completed", tc.flow)
		require.NoError(t, err, tc.line)
		assert.Equal(t, tc.want, got)
	}
	_, err := setStatusValue(`    status: "pending`, 12, "completed", false)
	assert.Error(t, err)
	for _, empty := range []struct {
		line string
		col  int
	}{{"    status:", 11}, {"    status: ", 11}, {"    status:   # later", 12}} {
		got, err := setStatusValue(empty.line, empty.col, "completed", false)
		require.NoError(t, err)
		assert.Regexp(t, `^    status: completed( # later)?$`, got, "a status without a value: %q", empty.line)
	}
	_, err = setStatusValue("    status", 12, "completed", false)
	assert.Error(t, err)
}

func TestCursorPatchOnOneLine(t *testing.T) {
	data := []byte("---\ntodos: [{id: a, content: one, status: pending}, {id: b, content: two, status: pending}]\n---\n")
	p, err := Parse(Cursor, "x.plan.md", data)
	require.NoError(t, err)
	require.Len(t, p.Items, 2)
	out, changes, err := Patch(Cursor, "x.plan.md", data, func(string) Verdict { return Done })
	require.NoError(t, err)
	assert.Len(t, changes, 2)
	assert.Equal(t, "---\ntodos: [{id: a, content: one, status: completed}, {id: b, content: two, status: completed}]\n---\n", string(out))
}

func TestCursorMalformed(t *testing.T) {
	for _, tc := range []struct{ name, data, want string }{
		{"no front matter", "# Plan\n\n- [ ] a\n", "no front matter"},
		{"front matter not closed", "---\ntodos:\n  - id: a\n", "no front matter"},
		{"not YAML", "---\ntodos: [\n---\n", "front matter: not valid YAML"},
		{"no todos", "---\nname: x\n---\n", "no `todos:` list"},
		{"todos not a list", "---\ntodos: soon\n---\n", "no `todos:` list"},
		{"todos empty", "---\ntodos: []\n---\n", "front matter: `todos:` is empty: the plan has no to-dos to import yet"},
		{"a to-do not a mapping", "---\ntodos:\n  - write it\n---\n", `todos[0]: a to-do must be a mapping`},
	} {
		_, err := Parse(Cursor, "x.plan.md", []byte(tc.data))
		require.Error(t, err, tc.name)
		assert.Contains(t, err.Error(), tc.want, tc.name)
	}
}

func TestCursorToDosOfOtherShapes(t *testing.T) {
	data := []byte("---\ntodos:\n  - id: t1-runtime-binding\n    status: complete\n  - status: todo\n" +
		"  - id: t3\n    content: Ship\n    status: blocked\n    depends_on: ['t1-runtime-binding']\n---\n- [ ] a body's check\n")
	format, err := Detect("x.plan.md", data)
	require.NoError(t, err)
	assert.Equal(t, Cursor, format, "a to-do known by its id alone")
	p, err := Parse(Cursor, "x.plan.md", data)
	require.NoError(t, err)
	require.Len(t, p.Items, 2)
	assert.Equal(t, "t1-runtime-binding", p.Items[0].Title)
	assert.True(t, p.Items[0].Done, "complete")
	assert.Equal(t, []string{"cursor:t1-runtime-binding"}, p.Items[1].DependsOn, "depends_on")
	dup, err := Parse(Cursor, "x.plan.md", []byte("---\ntodos:\n  - {id: a, content: one}\n  - {id: a, content: two}\n---\n"))
	require.NoError(t, err)
	assert.Equal(t, []string{"cursor:a", "cursor:a~2"}, []string{dup.Items[0].Source, dup.Items[1].Source})
	notes := strings.Join(p.Notes, "\n")
	assert.Contains(t, notes, "todos[1] has neither `content:` nor `id:`: left out")
	assert.Contains(t, notes, "cursor:t3 (blocked)")
	assert.NotContains(t, notes, "(todo)")
}

func TestCursorReadsWhatItKnows(t *testing.T) {
	data := []byte("---\r\nname: Ship\r\ntodos:\r\n" +
		"  - id: a\r\n    content: |\r\n      Write the parser\r\n      and its tests\r\n    status: done\r\n" +
		"  - id: b\r\n    content: >-\r\n      Wire it\r\n      in\r\n    status: blocked\r\n    dependencies: a\r\n" +
		"  - content: Document it\r\n    dependencies: [a, b, b-not-here]\r\n---\r\nbody\r\n")
	p, err := Parse(Cursor, "ship.plan.md", data)
	require.NoError(t, err)
	require.Len(t, p.Items, 3)
	assert.Equal(t, "Write the parser and its tests", p.Items[0].Title)
	assert.True(t, p.Items[0].Done)
	assert.Equal(t, "Wire it in", p.Items[1].Title)
	assert.Equal(t, []string{"cursor:a"}, p.Items[1].DependsOn)
	assert.Equal(t, "cursor:"+shortHash("Document it"), p.Items[2].Source, "a to-do without an id is known by its text")
	assert.Equal(t, []string{"cursor:a", "cursor:b", "cursor:b-not-here"}, p.Items[2].DependsOn)
	assert.Contains(t, p.Notes[0], "cursor:b (blocked)")
	out, _, err := Patch(Cursor, "ship.plan.md", data, func(string) Verdict { return Done })
	require.NoError(t, err)
	assert.Contains(t, string(out), "      in\r\n    status: completed\r\n    dependencies: a\r\n", "b's status in place")
	assert.Contains(t, string(out), "  - content: Document it\r\n    status: completed\r\n    dependencies:", "c's status put in after its first line")
	q, err := Parse(Cursor, "ship.plan.md", out)
	require.NoError(t, err)
	for _, it := range q.Items {
		assert.True(t, it.Done, it.Source)
	}
	// A to-do whose first key's value is a block cannot be given a status.
	block := []byte("---\ntodos:\n  - content: |\n      Write it\n---\n")
	_, _, err = Patch(Cursor, "x.plan.md", block, func(string) Verdict { return Done })
	assert.ErrorContains(t, err, "has no `status:` to change")
}

func TestCursorWriteReadsBack(t *testing.T) {
	tasks := []state.Task{
		{ID: "task-001", Title: "Write the parser: and its tests", Status: state.Completed},
		{ID: "task-002", Title: "Wire it in", Status: state.InProgress, DependsOn: []string{"task-001"}},
		{ID: "task-003", Title: `Say "done"`, Status: state.Pending, DependsOn: []string{"task-001", "task-002"}},
	}
	data, err := Write(Cursor, tasks)
	require.NoError(t, err)
	format, err := Detect("harness.plan.md", data)
	require.NoError(t, err)
	assert.Equal(t, Cursor, format)
	p, err := Parse(Cursor, "harness.plan.md", data)
	require.NoError(t, err, "%s", data)
	require.Len(t, p.Items, 3)
	for i, it := range p.Items {
		assert.Equal(t, "cursor:"+tasks[i].ID, it.Source)
		assert.Equal(t, tasks[i].Title, it.Title)
		assert.Equal(t, tasks[i].Status == state.Completed, it.Done)
	}
	assert.Equal(t, []string{"cursor:task-001", "cursor:task-002"}, p.Items[2].DependsOn)
}

func TestDetectCursor(t *testing.T) {
	for _, tc := range []struct{ name, data, want string }{
		{"x.plan.md", "---\nname: a\ntodos:\n  - id: a\n    content: b\n---\n", Cursor},
		{"x.md", "---\ntitle: notes\n---\n- [ ] a\n", Markdown},
		{"x.md", "---\ntodos: []\n---\n- [ ] a\n", Markdown},
		{"x.plan.md", "---\nname: a\ntodos: []\n---\n1. step\n", Cursor},
		{"plan.txt", "---\ntodos:\n  - content: b\n---\n", Cursor},
	} {
		got, err := Detect(tc.name, []byte(tc.data))
		require.NoError(t, err, tc.data)
		assert.Equal(t, tc.want, got, tc.data)
	}
}

func TestStatusOverTwoLinesIsSaid(t *testing.T) {
	data := []byte("---\ntodos:\n  - id: a\n    content: x\n    status: in\n      progress\n---\n")
	_, _, err := Patch(Cursor, "x.plan.md", data, func(string) Verdict { return Done })
	assert.ErrorContains(t, err, "cannot change cursor:a in place: its status does not read as written")
	files := []File{{Name: "tasks/t-1.md", Data: []byte("---\nid: t-1\ntitle: x\nstatus: To\n  Do\n---\n")}}
	_, _, _, err = PatchBacklog("backlog", nil, files, func(string) Verdict { return Done })
	assert.ErrorContains(t, err, "cannot change backlog:t-1 in place")
}
