// Package plantest writes plan files of any size for tests and benchmarks
// of the import: the shape a real tool writes, generated instead of kept.
package plantest

import (
	"encoding/json"
	"fmt"
)

// Tag is a Taskmaster tag and how many tasks it holds.
type Tag struct {
	Name  string
	Tasks int
}

// Taskmaster is a .taskmaster/tasks/tasks.json with the tags given, in
// their order. Task i of a tag waits on task i-1, except the first of
// every ten, so ten chains start at once in every hundred; every
// fiftieth is high priority (the first of a tag among them), a third
// low; every task has a testStrategy, prose that is no command.
func Taskmaster(tags ...Tag) []byte {
	type task struct {
		ID           int    `json:"id"`
		Title        string `json:"title"`
		Description  string `json:"description"`
		Status       string `json:"status"`
		Dependencies []int  `json:"dependencies"`
		Priority     string `json:"priority"`
		Details      string `json:"details"`
		TestStrategy string `json:"testStrategy"`
		Subtasks     []any  `json:"subtasks"`
	}
	type tagged struct {
		Tasks    []task         `json:"tasks"`
		Metadata map[string]any `json:"metadata"`
	}
	// An object's members in the tags' order: json.Marshal sorts a map's.
	out := []byte("{")
	for k, tg := range tags {
		tt := tagged{Tasks: make([]task, 0, tg.Tasks), Metadata: map[string]any{"created": "2026-11-27T00:00:00.000Z"}}
		for i := 1; i <= tg.Tasks; i++ {
			t := task{ID: i, Title: fmt.Sprintf("%s feature %d", tg.Name, i), Status: "pending", Dependencies: []int{},
				Priority:     "medium",
				Description:  fmt.Sprintf("Build part %d of the %s work.", i, tg.Name),
				Details:      "Keep the handlers small; reuse the store.",
				TestStrategy: fmt.Sprintf("Unit tests cover part %d; the integration suite passes.", i),
				Subtasks:     []any{}}
			if i%10 != 1 {
				t.Dependencies = []int{i - 1}
			}
			switch {
			case i%50 == 1:
				t.Priority = "high"
			case i%3 == 0:
				t.Priority = "low"
			}
			tt.Tasks = append(tt.Tasks, t)
		}
		body, err := json.MarshalIndent(tt, "  ", "  ")
		if err != nil {
			panic(err) // plain values: never
		}
		if k > 0 {
			out = append(out, ',')
		}
		out = fmt.Appendf(out, "\n  %q: %s", tg.Name, body)
	}
	return append(out, "\n}\n"...)
}
