package plan

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// backlogTask is a task file as Backlog.md writes one.
func backlogTask(front, body string) []byte {
	return []byte("---\n" + front + "---\n\n" + body)
}

func TestParseBacklog(t *testing.T) {
	config := []byte("project_name: \"x\"\ndefault_status: \"Backlog\"\nstatuses: [\"Backlog\", \"Doing\", \"Shipped\"]\ntask_prefix: \"app\"\n")
	files := []File{
		{Name: "tasks/app-1 - Parser.md", Data: backlogTask("id: APP-1\ntitle: Parser\nstatus: Shipped\nassignee:\n  - '@ana'\npriority: high\n",
			"## Description\n\n<!-- SECTION:DESCRIPTION:BEGIN -->\nRead the files.\n<!-- SECTION:DESCRIPTION:END -->\n\n## Acceptance Criteria\n<!-- AC:BEGIN -->\n- [x] #1 reads a file\n- [ ] #2 refuses a bad one\n<!-- AC:END -->\n\n## Definition of Done\n<!-- DOD:BEGIN -->\n- [ ] #1 tests pass\n<!-- DOD:END -->\n")},
		{Name: "tasks/app-2 - Writer.md", Data: backlogTask("id: APP-2\ntitle: Writer\nstatus: Doing\nassignee: @bo\ndependencies:\n  - app-1\n  - task-3\n  - '9'\n", "")},
		{Name: "tasks/app-2.1 - Writer tests.md", Data: backlogTask("id: APP-2.1\ntitle: Writer tests\nstatus: Backlog\nparent_task_id: APP-2\ndependencies: [APP-001]\npriority: low\n", "")},
		{Name: "completed/app-3 - Old.md", Data: backlogTask("id: APP-3\ntitle: Old\nstatus: Backlog\n", "")},
		{Name: "tasks/app-4 - Odd.md", Data: backlogTask("id: APP-4\ntitle: Odd\nstatus: Blocked\n", "")},
		{Name: "tasks/readme.md", Data: []byte("# Tasks\n")},
	}
	p, err := ParseBacklog("backlog", config, files)
	require.NoError(t, err)
	require.Len(t, p.Items, 5)
	byID := map[string]Item{}
	for _, it := range p.Items {
		byID[it.Source] = it
	}
	first := byID["backlog:APP-1"]
	assert.True(t, first.Done, "Shipped, the last status, is done")
	assert.Equal(t, "P0", first.Priority)
	assert.Equal(t, "Read the files.", first.Description)
	assert.Equal(t, []string{"reads a file", "refuses a bad one", "tests pass"}, first.Acceptance)
	writer := byID["backlog:APP-2"]
	assert.False(t, writer.Done)
	assert.Equal(t, []string{"backlog:APP-1", "backlog:APP-3", "backlog:9", "backlog:APP-2.1"}, writer.DependsOn,
		"app-1 as APP-1, task-3 as the one task numbered 3, 9 as no task, and its subtask")
	sub := byID["backlog:APP-2.1"]
	assert.Equal(t, []string{"backlog:APP-1"}, sub.DependsOn, "APP-001 is APP-1")
	assert.Equal(t, "P2", sub.Priority)
	assert.True(t, byID["backlog:APP-3"].Done, "a file under completed/ is done")
	assert.False(t, byID["backlog:APP-4"].Done)
	notes := strings.Join(p.Notes, "\n")
	assert.Contains(t, notes, "backlog/tasks/readme.md: no front matter")
	assert.Contains(t, notes, "task-3 as APP-3")
	assert.Contains(t, notes, "backlog:APP-4 (Blocked)")
}

func TestPatchBacklog(t *testing.T) {
	files := []File{
		{Name: "tasks/task-1 - a.md", Data: backlogTask("id: task-1\ntitle: a\nstatus: To Do\n", "")},
		{Name: "tasks/task-2 - b.md", Data: []byte("---\r\nid: task-2\r\ntitle: b\r\nstatus: Done # shipped\r\n---\r\n")},
		{Name: "tasks/task-3 - c.md", Data: backlogTask("id: task-3\ntitle: c\nstatus: \"Done\"\n", "")},
		{Name: "tasks/task-4 - d.md", Data: backlogTask("id: task-4\ntitle: d\nstatus: To Do\n", "")},
	}
	verdicts := map[string]Verdict{"backlog:task-1": Done, "backlog:task-2": Pending, "backlog:task-3": InProgress, "backlog:task-4": Leave}
	changed, changes, notes, err := PatchBacklog("backlog", nil, files, func(s string) Verdict { return verdicts[s] })
	require.NoError(t, err)
	assert.Empty(t, notes)
	assert.Equal(t, []Change{{Source: "backlog:task-1", Done: true}, {Source: "backlog:task-2"}, {Source: "backlog:task-3"}}, changes)
	require.Len(t, changed, 3)
	assert.Equal(t, "---\nid: task-1\ntitle: a\nstatus: Done\n---\n\n", string(changed[0].Data))
	assert.Equal(t, "---\r\nid: task-2\r\ntitle: b\r\nstatus: To Do # shipped\r\n---\r\n", string(changed[1].Data))
	assert.Equal(t, "---\nid: task-3\ntitle: c\nstatus: In Progress\n---\n\n", string(changed[2].Data))

	// A task Backlog.md keeps done under completed/ is not moved back by a
	// word: the export says how, and writes the rest.
	files = []File{
		{Name: "completed/task-5 - e.md", Data: backlogTask("id: task-5\ntitle: e\nstatus: Done\n", "")},
		{Name: "tasks/task-6 - f.md", Data: backlogTask("id: task-6\ntitle: f\nstatus: To Do\n", "")},
	}
	changed, changes, notes, err = PatchBacklog("backlog", nil, files, func(s string) Verdict {
		return map[string]Verdict{"backlog:task-5": Pending, "backlog:task-6": Done}[s]
	})
	require.NoError(t, err)
	assert.Equal(t, []Change{{Source: "backlog:task-6", Done: true}}, changes)
	require.Len(t, changed, 1)
	require.Len(t, notes, 1)
	assert.Contains(t, notes[0], "backlog:task-5 is not moved back to not done: Backlog.md keeps it done under completed/")
}

func TestBacklogKey(t *testing.T) {
	for _, tc := range []struct{ id, prefix, want string }{
		{"BACK-200", "back", "back-200"},
		{"back-007.01", "back", "back-7.1"},
		{"12", "task", "task-12"},
		{"12.3", "app", "app-12.3"},
		{"draft-x", "task", "draft-x"},
	} {
		assert.Equal(t, tc.want, backlogKey(tc.id, tc.prefix), tc.id)
	}
	assert.Equal(t, "7.1", backlogNumber("BACK-007.1"))
	assert.Equal(t, "", backlogNumber("draft-x"))
}

func TestQuoteHandles(t *testing.T) {
	front := "id: a\nassignee: @ana\n  reporter: @bo # lead\r\nassignee: []\n"
	got := quoteHandles(front)
	assert.Equal(t, "id: a\nassignee: \"\"\n  reporter: \"\"\r\nassignee: []\n", got)
	assert.Equal(t, strings.Count(front, "\n"), strings.Count(got, "\n"))
}
