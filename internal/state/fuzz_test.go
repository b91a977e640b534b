package state

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/harness-agent/harness/internal/failure"
)

// FuzzStateParse feeds arbitrary bytes to the tasks file parser. The seed
// corpus runs with every `go test`; explore with
// `go test -fuzz=FuzzStateParse ./internal/state`.
//
// Properties: Parse never panics and fails only with *Corrupt (not JSON) or a
// CONFIG error naming the field; a parsed state's accessors never panic; and
// an edit of a parsed state (what every harness write does) gives a document
// that parses back, with the edit in it and nothing else changed.
func FuzzStateParse(f *testing.F) {
	for _, seed := range []string{
		`{"version": 2, "tasks": [], "session_count": 0, "last_session": null}`,
		"{\n  \"version\": 2,\n  \"session_config\": {\"concurrency_mode\": \"concurrent\", \"max_sessions\": 3},\n  \"tasks\": [\n    {\"id\": \"task-001\", \"title\": \"A\", \"status\": \"pending\", \"depends_on\": [], \"attempts\": 0,\n     \"validation\": {\"command\": \"go test ./...\", \"timeout_seconds\": 60}, \"error_log\": [], \"checkpoints\": []}\n  ],\n  \"session_count\": 1,\n  \"last_session\": null\n}\n",
		`{"tasks": [{"id": "a", "status": "in_progress", "checkpoints": [{"step": 1, "total": 2, "description": "x", "timestamp": "t"}], "mine": [1, {"k": null}]}], "session_count": 0, "last_session": "x"}`,
		`{"tasks": [{"id": "a", "status": "failed", "attempts": 3, "max_attempts": 3, "error_log": ["[DEPENDENCY] x"], "lease_expires_at": "2001-01-01T00:00:00Z"}], "session_count": 1, "last_session": null}`,
		`{"tasks": [{"id": "a", "status": "done"}]}`,
		`{"tasks": [{"id": "a"}, {"id": "a", "status": "pending"}]}`,
		`{"tasks": {"id": "a"}}`,
		`{"tasks": [{"id": "a", "status": "pending", "attempts": -1}]}`,
		`{"tasks": [{"id": "a", "status": "pending", "validation": "npm test"}]}`,
		`{"session_config": [], "tasks": []}`,
		`[]`, `null`, `{`, ``, "\xff\xfe", `{"tasks": [` + strings.Repeat(`{"id": "x", "status": "pending"},`, 3) + `]}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		s, err := Parse(raw, "harness-tasks.json")
		if err != nil {
			var corrupt *Corrupt
			var fe *failure.Error
			switch {
			case errors.As(err, &corrupt):
			case errors.As(err, &fe) && fe.Category == failure.Config && strings.HasPrefix(fe.Message, "harness-tasks.json"):
			default:
				t.Fatalf("unexpected error %T: %v", err, err)
			}
			return
		}
		now := time.Now()
		for i := range s.Tasks {
			tk := &s.Tasks[i]
			tk.Timeout()
			tk.LeaseExpired(now)
			tk.PermanentlyFailed()
		}

		// Edit it as the harness does, and read it back.
		s.snapshot()
		s.SessionCount++
		s.LastSession = "2025-07-01T10:00:00Z"
		if len(s.Tasks) > 0 {
			tk := &s.Tasks[0]
			tk.Attempts++
			tk.ErrorLog = append(tk.ErrorLog, "[TEST_FAIL] fuzz")
			tk.Checkpoints = append(tk.Checkpoints, Checkpoint{Step: 1, Total: 1, Description: "fuzz \"quoted\" <&>", Timestamp: "t"})
		}
		edited, touched, err := s.apply()
		if err != nil {
			return // an edit the harness refuses: nothing is written
		}
		back, err := Parse(edited, "harness-tasks.json")
		if err != nil {
			t.Fatalf("an edit made the file unreadable: %v\nbefore: %q\nafter:  %q", err, raw, edited)
		}
		// save's cheaper check must accept what a full parse accepts.
		if err := s.readBack(edited, touched); err != nil {
			t.Fatalf("readBack refused an edit that parses: %v\nbefore: %q\nafter:  %q", err, raw, edited)
		}
		if back.SessionCount != s.SessionCount || back.LastSession != s.LastSession || len(back.Tasks) != len(s.Tasks) {
			t.Fatalf("edit lost: session_count %d/%d last_session %q/%q tasks %d/%d",
				back.SessionCount, s.SessionCount, back.LastSession, s.LastSession, len(back.Tasks), len(s.Tasks))
		}
		if len(s.Tasks) > 0 {
			want, got := s.Tasks[0], back.Tasks[0]
			if got.Attempts != want.Attempts || len(got.ErrorLog) != len(want.ErrorLog) || len(got.Checkpoints) != len(want.Checkpoints) {
				t.Fatalf("task edit lost: %+v vs %+v", got, want)
			}
		}
	})
}

// FuzzTopValue checks the in-place edit's member finder against gjson: on
// any document that parses, the span topValue finds for session_count and
// last_session is exactly the value gjson reads at the top level (so the
// edit changes that member and no other), and it finds none where the
// document has no such top-level member.
func FuzzTopValue(f *testing.F) {
	for _, seed := range []string{
		`{"tasks": [], "session_count": 7, "last_session": null}`,
		`{"session_count": 1, "tasks": [{"id": "a", "session_count": 5}]}`,
		`{"tasks": [{"title": "\"session_count\": 5"}], "last_session": "x\"y"}`,
		`{"a": {"session_count": 1}, "tasks": []}`,
		"{\r\n \"last_session\" : \"2026-01-01T00:00:00Z\" ,\r\n \"tasks\": []}",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if _, err := Parse(raw, "harness-tasks.json"); err != nil {
			return // not a tasks file: the edit is never made on one
		}
		for _, name := range []string{"session_count", "last_session"} {
			want := gjson.GetBytes(raw, name)
			for _, valid := range []bool{true, false} {
				i, j, ok := topValue(raw, name, valid)
				if !ok {
					continue // the caller takes the full path
				}
				if !want.Exists() || string(raw[i:j]) != want.Raw {
					t.Fatalf("%s: topValue found %q, gjson reads %q", name, raw[i:j], want.Raw)
				}
			}
		}
	})
}
