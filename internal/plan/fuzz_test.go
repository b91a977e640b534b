package plan

import (
	"testing"
)

// FuzzParse: no input makes a parser panic, an export with nothing to
// change gives the file back, and marking every item of a plan done gives
// a file of the same format in which every item is done.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`[{"category":"c","description":"A","steps":["s"],"passes":false}]`,
		`{"master":{"tasks":[{"id":1,"title":"a","status":"pending","dependencies":[2],"subtasks":[{"id":1,"title":"b","dependencies":[1]}]}]}}`,
		"{\"id\":\"a\",\"title\":\"t\",\"status\":\"open\",\"priority\":2,\"dependencies\":[{\"issue_id\":\"a\",\"depends_on_id\":\"b\",\"type\":\"parent-child\"}]}\r\n",
		`[{"number":1,"title":"t","state":"OPEN","body":"depends on #2\n- [ ] x","labels":[{"name":"P0"}]}]`,
		"- [ ] a\n  - [x] b\n\t* [ ] c\n",
		"", "[", "{}", "- [ ]  \n",
		`{"features":[{"id":"F1","title":"a","status":"todo","dependencies":["F2"]}]}`,
		"\xff\xfe[\x00{\x00\"\x00n\x00u\x00m\x00b\x00e\x00r\x00\"\x00:\x001\x00,\x00\"\x00t\x00i\x00t\x00l\x00e\x00\"\x00:\x00\"\x00t\x00\"\x00}\x00]\x00",
		"```\n- [ ] a\n```\n- [/] **b**\n  - [-] c\n",
		"---\nname: p\ntodos:\n  - id: a\n    content: \"x: y\"\n    status: pending\n    dependencies: [b]\n  - id: b\n    content: z\n---\n# p\n",
		"---\r\ntodos: [{id: a, content: x, status: pending}, {content: |\n  y\n}]\r\n...\r\n",
		"---\nid: BACK-2\ntitle: b\nstatus: To Do\nassignee: @a\ndependencies: [task-1, '3']\nparent_task_id: BACK-1\n---\n## Acceptance Criteria\n- [ ] #1 x\n",
		"{\"number\":1,\"title\":\"t\",\"state\":\"OPEN\",\"body\":\"## Blocked by\\n- https://github.com/o/r/issues/2\",\"url\":\"https://github.com/o/r/issues/1\"}\n{\"number\":2,\"title\":\"u\"}\n",
	} {
		for i := range Formats {
			f.Add(i, s)
		}
	}
	f.Fuzz(func(t *testing.T, format int, text string) {
		if format < 0 || format >= len(Formats) {
			return
		}
		name := Formats[format]
		Detect("f", []byte(text))
		p, err := Parse(name, "f", []byte(text))
		if err != nil {
			return
		}
		same, _, err := Patch(name, "f", []byte(text), func(string) Verdict { return Leave })
		if err != nil || string(same) != text {
			t.Fatalf("an export with nothing to change changed the file (%v)", err)
		}
		out, _, err := Patch(name, "f", []byte(text), func(string) Verdict { return Done })
		if err != nil {
			return // a value jsonedit cannot place (a member written twice)
		}
		q, err := Parse(name, "f", out)
		if err != nil {
			t.Fatalf("the patched file does not parse: %v\n%s", err, out)
		}
		if len(q.Items) != len(p.Items) {
			t.Fatalf("%d items, %d after the patch", len(p.Items), len(q.Items))
		}
		for _, it := range q.Items {
			if !it.Done {
				t.Fatalf("%s not done after the patch:\n%s", it.Source, out)
			}
		}
	})
}
