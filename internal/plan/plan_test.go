package plan

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/harness-agent/harness/internal/failure"
	"github.com/harness-agent/harness/internal/state"
)

// brief is what a test checks of an item.
type brief struct {
	Source, Title, Priority string
	Done                    bool
	DependsOn, Acceptance   []string
}

func briefs(p *Plan) []brief {
	var out []brief
	for _, it := range p.Items {
		b := brief{it.Source, it.Title, it.Priority, it.Done, it.DependsOn, it.Acceptance}
		if len(b.DependsOn) == 0 {
			b.DependsOn = nil
		}
		out = append(out, b)
	}
	return out
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name, format, file, text string
		want                     []brief
		skipped                  []string
	}{
		{name: "feature list", format: FeatureList, file: "feature_list.json",
			text: `[{"category":"functional","description":"New chat","steps":["Click New","See it"],"passes":true},
			        {"category":"ui","description":"  Dark\n mode ","steps":[],"passes":false}]`,
			want: []brief{
				{Source: "feature-list:" + shortHash("New chat"), Title: "New chat", Priority: "P1", Done: true, Acceptance: []string{"Click New", "See it"}},
				{Source: "feature-list:" + shortHash("Dark\n mode"), Title: "Dark mode", Priority: "P1"},
			}},
		{name: "feature list, the same feature twice", format: FeatureList, file: "f.json",
			text: `[{"description":"A"},{"description":"A"}]`,
			want: []brief{
				{Source: "feature-list:" + shortHash("A"), Title: "A", Priority: "P1"},
				{Source: "feature-list:" + shortHash("A") + "~2", Title: "A", Priority: "P1"},
			}},
		{name: "taskmaster tagged", format: Taskmaster, file: "tasks.json",
			text: `{"master":{"tasks":[
				{"id":1,"title":"Server","status":"done","priority":"high","dependencies":[],"testStrategy":"GET /health is 200"},
				{"id":2,"title":"Auth","status":"in-progress","priority":"low","dependencies":[1,"3"],"subtasks":[
					{"id":1,"title":"Hash","status":"pending","dependencies":[]},
					{"id":2,"title":"Login","status":"done","dependencies":[1]}]},
				{"id":3,"title":"Old","status":"cancelled","dependencies":[]}],
				"metadata":{"created":"x"}},
			 "feature-x":{"tasks":[{"id":1,"title":"Other tag","status":"pending","priority":"medium"}]}}`,
			want: []brief{
				{Source: "taskmaster:master/1", Title: "Server", Priority: "P0", Done: true, Acceptance: []string{"GET /health is 200"}},
				{Source: "taskmaster:master/2", Title: "Auth", Priority: "P2",
					DependsOn: []string{"taskmaster:master/1", "taskmaster:master/3", "taskmaster:master/2.1", "taskmaster:master/2.2"}},
				{Source: "taskmaster:master/2.1", Title: "Hash", Priority: "P2"},
				{Source: "taskmaster:master/2.2", Title: "Login", Priority: "P2", Done: true, DependsOn: []string{"taskmaster:master/2.1"}},
				{Source: "taskmaster:feature-x/1", Title: "Other tag", Priority: "P1"},
			},
			skipped: []string{"taskmaster:master/3"}},
		{name: "taskmaster legacy", format: Taskmaster, file: "tasks.json",
			text: `{"tasks":[{"id":"7","title":"Only","status":"pending"}]}`,
			want: []brief{{Source: "taskmaster:master/7", Title: "Only", Priority: "P1"}}},
		{name: "beads", format: Beads, file: "issues.jsonl",
			text: `{"id":"bd-1","title":"Schema","status":"closed","priority":0,"acceptance_criteria":"- [ ] runs\n\n* keys"}` + "\r\n" +
				`{"id":"bd-2","title":"API","status":"open","priority":2,"dependencies":[{"issue_id":"bd-2","depends_on_id":"bd-1","type":"blocks"},{"issue_id":"bd-2","depends_on_id":"bd-9","type":"related"}]}` + "\n" +
				"\n" +
				`{"id":"bd-3","title":"Epic","status":"open","priority":4}` + "\n" +
				`{"id":"bd-4","title":"Child","status":"in_progress","priority":3,"dependencies":[{"issue_id":"bd-4","depends_on_id":"bd-3","type":"parent-child"},{"issue_id":"bd-4","depends_on_id":"bd-1","type":"discovered-from"}]}` + "\n" +
				`{"id":"bd-5","title":"Gone","status":"tombstone"}` + "\n",
			want: []brief{
				{Source: "beads:bd-1", Title: "Schema", Priority: "P0", Done: true, Acceptance: []string{"runs", "keys"}},
				{Source: "beads:bd-2", Title: "API", Priority: "P1", DependsOn: []string{"beads:bd-1"}},
				{Source: "beads:bd-3", Title: "Epic", Priority: "P2", DependsOn: []string{"beads:bd-4"}},
				{Source: "beads:bd-4", Title: "Child", Priority: "P2"},
			},
			skipped: []string{"beads:bd-5"}},
		{name: "github", format: GitHub, file: "issues.json",
			text: `[{"number":12,"title":"Config","state":"OPEN","body":"- [ ] reads ~/.toolrc\n- [x] errors name the key","labels":[{"name":"priority: high"}]},
			        {"number":14,"title":"Env","state":"OPEN","body":"Depends on #12.\nblocked by #9, #10 and #11","labels":[{"name":"P3"}]},
			        {"number":9,"title":"Flags","state":"CLOSED","body":"","labels":[]}]`,
			want: []brief{ // oldest first, whatever the file's order
				{Source: "github:#9", Title: "Flags", Priority: "P1", Done: true},
				{Source: "github:#12", Title: "Config", Priority: "P0", Acceptance: []string{"reads ~/.toolrc", "errors name the key"}},
				{Source: "github:#14", Title: "Env", Priority: "P2", DependsOn: []string{"github:#12", "github:#9", "github:#10", "github:#11"}},
			}},
		{name: "github, issues of one repository with their url keep the number alone", format: GitHub, file: "issues.json",
			text: `[{"number":3,"title":"A","state":"OPEN","url":"https://github.com/o/r/issues/3","body":"Depends on https://github.com/O/R/issues/4"},
			        {"number":4,"title":"B","state":"OPEN","url":"https://github.com/o/r/issues/4"}]`,
			want: []brief{
				{Source: "github:#3", Title: "A", Priority: "P1", DependsOn: []string{"github:#4"}},
				{Source: "github:#4", Title: "B", Priority: "P1"},
			}},
		{name: "github, several repositories told by the REST API's urls and a repo member", format: GitHub, file: "issues.json",
			text: `[{"number":5,"title":"A","state":"open","html_url":"https://github.com/o/a/issues/5","url":"https://api.github.com/repos/o/a/issues/5","body":"depends on #6"},
			        {"number":5,"title":"B","state":"open","repository_url":"https://api.github.com/repos/o/b"},
			        {"number":6,"title":"C","repo":"https://github.com/o/a"},
			        {"number":6,"title":"D","repo":"O/B","body":"blocked by https://github.com/o/a/issues/5"},
			        {"number":9,"title":"E"}]`,
			want: []brief{
				{Source: "github:o/a#5", Title: "A", Priority: "P1", DependsOn: []string{"github:o/a#6"}},
				{Source: "github:o/b#5", Title: "B", Priority: "P1"},
				{Source: "github:o/a#6", Title: "C", Priority: "P1"},
				{Source: "github:o/b#6", Title: "D", Priority: "P1", DependsOn: []string{"github:o/a#5"}},
				{Source: "github:#9", Title: "E", Priority: "P1"},
			}},
		{name: "github, one number twice with no repository", format: GitHub, file: "issues.json",
			text: `[{"number":53,"title":"A"},{"number":53,"title":"B"},{"number":53,"title":"A"},{"number":53,"title":"C","isPullRequest":true}]`,
			want: []brief{
				{Source: "github:#53~2", Title: "B", Priority: "P1"},
				{Source: "github:#53", Title: "A", Priority: "P1"},
			},
			skipped: []string{"github:#53~3"}},
		{name: "markdown", format: Markdown, file: "TODO.md",
			text: "# Plan\n\n- [x] README\n- [ ] Installer\n  - [ ] Linux\n    * [X] deb\n  - [ ] Mac\n1. [ ] Announce\n\nProse.\n  - [ ] not nested under Announce\n",
			want: []brief{
				{Source: "markdown:" + shortHash("README"), Title: "README", Priority: "P1", Done: true},
				{Source: "markdown:" + shortHash("Installer"), Title: "Installer", Priority: "P1",
					DependsOn: []string{"markdown:" + shortHash("Linux"), "markdown:" + shortHash("Mac")}},
				{Source: "markdown:" + shortHash("Linux"), Title: "Linux", Priority: "P1", DependsOn: []string{"markdown:" + shortHash("deb")}},
				{Source: "markdown:" + shortHash("deb"), Title: "deb", Priority: "P1", Done: true},
				{Source: "markdown:" + shortHash("Mac"), Title: "Mac", Priority: "P1"},
				{Source: "markdown:" + shortHash("Announce"), Title: "Announce", Priority: "P1"},
				{Source: "markdown:" + shortHash("not nested under Announce"), Title: "not nested under Announce", Priority: "P1"},
			}},
		{name: "markdown, numbered as Kiro numbers them", format: Markdown, file: "tasks.md",
			text: "- [ ] 1. Models\n- [ ] 1.1 Album\n- [x]* 1.2 Album tests\n  - _Depends: 1.1_\n- [ ] 2 Wire\n  - **Depends on**: 1\n  - Depends on: the API\n- [ ] 2.5 inch screen\n",
			want: []brief{
				{Source: "markdown:" + shortHash("1. Models"), Title: "1. Models", Priority: "P1", DependsOn: []string{"markdown:" + shortHash("1.1 Album")}},
				{Source: "markdown:" + shortHash("1.1 Album"), Title: "1.1 Album", Priority: "P1"},
				{Source: "markdown:" + shortHash("1.2 Album tests"), Title: "1.2 Album tests", Priority: "P2", Done: true,
					DependsOn: []string{"markdown:" + shortHash("1.1 Album")}},
				// "2 Wire" is no major task ("2." is): "2.5 inch screen" is not its part.
				{Source: "markdown:" + shortHash("2 Wire"), Title: "2 Wire", Priority: "P1", DependsOn: []string{"markdown:" + shortHash("1. Models")},
					Acceptance: []string{"Depends on: the API"}},
				{Source: "markdown:" + shortHash("2.5 inch screen"), Title: "2.5 inch screen", Priority: "P1"},
			}},
		{name: "markdown, an item's text wrapped onto the lines under it", format: Markdown, file: "tasks.md",
			text: "- [ ] T001 Base\n- [ ] T002 Build the\n      parser (depends on\n      T001)\n  - keeps a wrapped\n    criterion whole\n  _Depends: T001_\n\n  described, not the title\n- wrapped prose\n  not an item's\n* []\n  no item: its first line has no text\n",
			want: []brief{
				{Source: "markdown:" + shortHash("T001 Base"), Title: "T001 Base", Priority: "P1"},
				// Known by its first line, as it was before wrapped lines
				// were read: a re-import finds the task it made then.
				{Source: "markdown:" + shortHash("T002 Build the"), Title: "T002 Build the parser (depends on T001)", Priority: "P1",
					DependsOn: []string{"markdown:" + shortHash("T001 Base")}, Acceptance: []string{"keeps a wrapped criterion whole"}},
			}},
		{name: "markdown, any one mark in the box", format: Markdown, file: "TODO.md",
			text: "- [✅] a\n  - [🔄] b\n  - [] c\n- [✓] d\n- [✔️] e\n- [\u00a0] f\n- [  ] g\n- [?] h\n- [WIP] not a box\n- [link] nor this\n- [P] nor spec-kit's legend\n- [1] nor a reference\n",
			want: []brief{
				// Done in the file, but not its parts: it waits on them.
				{Source: "markdown:" + shortHash("a"), Title: "a", Priority: "P1",
					DependsOn: []string{"markdown:" + shortHash("b"), "markdown:" + shortHash("c")}},
				{Source: "markdown:" + shortHash("b"), Title: "b", Priority: "P1"},
				{Source: "markdown:" + shortHash("c"), Title: "c", Priority: "P1"},
				{Source: "markdown:" + shortHash("d"), Title: "d", Priority: "P1", Done: true},
				{Source: "markdown:" + shortHash("e"), Title: "e", Priority: "P1", Done: true},
				{Source: "markdown:" + shortHash("f"), Title: "f", Priority: "P1"},
				{Source: "markdown:" + shortHash("g"), Title: "g", Priority: "P1"},
				{Source: "markdown:" + shortHash("h"), Title: "h", Priority: "P1"},
			}},
		{name: "markdown, dependencies with notes", format: Markdown, file: "tasks.md",
			text: "- [ ] T001 Models\n- [ ] T002 Types (depends on T001: the base)\n- [ ] T003 API (depends on T001, same file)\n- [ ] 2.1 Pill\n  - _Depends: T002 (file already exists), T001 (scaffold)_\n",
			want: []brief{
				{Source: "markdown:" + shortHash("T001 Models"), Title: "T001 Models", Priority: "P1"},
				{Source: "markdown:" + shortHash("T002 Types (depends on T001: the base)"), Title: "T002 Types (depends on T001: the base)", Priority: "P1",
					DependsOn: []string{"markdown:" + shortHash("T001 Models")}},
				{Source: "markdown:" + shortHash("T003 API (depends on T001, same file)"), Title: "T003 API (depends on T001, same file)", Priority: "P1"},
				{Source: "markdown:" + shortHash("2.1 Pill"), Title: "2.1 Pill", Priority: "P1",
					DependsOn: []string{"markdown:" + shortHash("T002 Types (depends on T001: the base)"), "markdown:" + shortHash("T001 Models")}},
			}},
		{name: "markdown, numbered again under each heading", format: Markdown, file: "ROADMAP.md",
			text: "## Now\n- [ ] 1. Parser\n- [ ] 1.1 Lexer\n## Later\n- [ ] 1. Printer\n- [ ] 2. Docs\n  - _Depends: 1_\n",
			want: []brief{
				{Source: "markdown:" + shortHash("1. Parser"), Title: "1. Parser", Priority: "P1"},
				{Source: "markdown:" + shortHash("1.1 Lexer"), Title: "1.1 Lexer", Priority: "P1"},
				{Source: "markdown:" + shortHash("1. Printer"), Title: "1. Printer", Priority: "P1"},
				{Source: "markdown:" + shortHash("2. Docs"), Title: "2. Docs", Priority: "P1"},
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse(tc.format, tc.file, []byte(tc.text))
			require.NoError(t, err)
			assert.Equal(t, tc.want, briefs(p))
			var skipped []string
			for _, s := range p.Skipped {
				skipped = append(skipped, s.Source)
			}
			assert.Equal(t, tc.skipped, skipped)
			got, err := Detect(tc.file, []byte(tc.text))
			require.NoError(t, err)
			assert.Equal(t, tc.format, got, "detected")
		})
	}
}

// A list of dependencies is read by the ids that lead its parts,
// whatever note follows each; a list in words is not, and says so.
func TestItemNumbers(t *testing.T) {
	for _, tc := range []struct {
		in    string
		refs  []string
		prose bool
	}{
		{"1.1, 2.3", []string{"1.1", "2.3"}, false},
		{"T012 and T013", []string{"T012", "T013"}, false},
		{"T012 T013", []string{"T012", "T013"}, false},
		{"2.1 (file already exists)", []string{"2.1"}, false},
		{"1.1 (asset, registered), 2.1 (file scaffold)", []string{"1.1", "2.1"}, false},
		{"T007 models", []string{"T007"}, false},
		{"T042: auth fix", []string{"T042"}, false},
		{"T003, T006; contracts/api.md", []string{"T003", "T006"}, false},
		{"T002-T004", []string{"T002-T004"}, false},
		{"T001, T006–T007", []string{"T001", "T006-T007"}, false},
		{"T001 – T008", []string{"T001-T008"}, false},
		{"T005/T006", []string{"T005", "T006"}, false},
		{"T004, T004a", []string{"T004", "T004a"}, false},
		{"2.1-2.3 (the models)", []string{"2.1-2.3"}, false},
		{"T003 - 2 files", []string{"T003"}, false},
		{"2.1-3.2", nil, true},
		{"T009-T003", nil, true},
		{"1, 2.", []string{"1", "2"}, false},
		{"T003, same file", nil, true},
		{"the API", nil, true},
		{"none (independent of 1.1)", nil, false},
		{"", nil, false},
	} {
		refs, prose := itemNumbers(tc.in)
		assert.Equal(t, tc.refs, refs, tc.in)
		assert.Equal(t, tc.prose, prose, tc.in)
	}
}

// A range of item numbers names the items numbered within it: its ends
// of one kind, the first not after the last.
func TestNumberRange(t *testing.T) {
	for _, tc := range []struct {
		ref string
		in  []string
		out []string
	}{
		{"T002-T004", []string{"T002", "T003", "T004", "T003a"}, []string{"T001", "T005", "2", "T0035", "T001a"}},
		{"2.1-2.3", []string{"2.1", "2.2", "2.3"}, []string{"2.4", "3.1", "2", "2.1.1"}},
		{"1-3", []string{"1", "2", "3"}, []string{"1.1", "4", "T002"}},
	} {
		lo, hi, ok := numberRange(tc.ref)
		require.True(t, ok, tc.ref)
		for _, n := range tc.in {
			assert.True(t, inRange(lo, hi, n), "%s in %s", n, tc.ref)
		}
		for _, n := range tc.out {
			assert.False(t, inRange(lo, hi, n), "%s in %s", n, tc.ref)
		}
	}
	for _, ref := range []string{"T004-T002", "2.1-3.2", "T001-2", "2024-01-01", "T001", "a-b", "T004a-T004c"} {
		_, _, ok := numberRange(ref)
		assert.False(t, ok, ref)
	}
}

// A title loses Markdown's bold outside its code spans, and keeps what
// is in them.
func TestPlainText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"**Auth**: login", "Auth: login"},
		{"**COMPLETED**: Fix `foo.ts` timeouts", "COMPLETED: Fix `foo.ts` timeouts"},
		{"Fix `a` and **bold** here", "Fix `a` and bold here"},
		{"__Docs__ for `__init__`", "Docs for `__init__`"},
		{"Rename `__init__` to `__new__`", "Rename `__init__` to `__new__`"},
		{"``a ` **b**`` and **c**", "``a ` **b**`` and c"},
		{"an open ` then **bold**", "an open ` then bold"},
		{"_Requirements: 2.1_", "Requirements: 2.1"},
		{"2 ** 3 is eight", "2 ** 3 is eight"},
	} {
		assert.Equal(t, tc.want, plainText(tc.in), tc.in)
	}
}

// A file that is not what its format says is refused with the file and
// the place named, a CONFIG error wrapping ErrFormat.
func TestParseMalformed(t *testing.T) {
	for _, tc := range []struct {
		name, format, text, want string
	}{
		{"not JSON", FeatureList, "[\n{\"description\": \"a\",}\n]", "f: line 2: not valid JSON: invalid character '}'"},
		{"feature list not a list", FeatureList, `{"description":"a"}`, "f: a feature list is a JSON list of features (or an object with one as \"features\", or Ralph's prd.json with its \"userStories\"), got an object"},
		{"feature not an object", FeatureList, `["a"]`, "f: [0]: a feature must be an object, got a string"},
		{"feature without description", FeatureList, `[{"steps":[]}]`, "f: [0].description: is missing or empty"},
		{"passes not a boolean", FeatureList, `[{"description":"a","passes":"yes"}]`, `f: [0].passes: must be true or false, got "yes"`},
		{"taskmaster not an object", Taskmaster, `[]`, "f: a Taskmaster file is a JSON object, got a list"},
		{"taskmaster tag without tasks", Taskmaster, `{"master":{"metadata":{}}}`, "f: master.tasks: must be a list of tasks, got nothing"},
		{"taskmaster id missing", Taskmaster, `{"tasks":[{"title":"a"}]}`, "f: tasks.0.id: must be a task id (a number or a string), got nothing"},
		{"taskmaster bad dependency", Taskmaster, `{"tasks":[{"id":1,"title":"a","dependencies":[true]}]}`, "f: tasks.0.dependencies[0]: must be a task id"},
		{"taskmaster subtask title", Taskmaster, `{"tasks":[{"id":1,"title":"a","subtasks":[{"id":1}]}]}`, "f: tasks.0.subtasks.0.title: is missing or empty"},
		{"beads bad line", Beads, "{\"id\":\"a\",\"title\":\"t\"}\n{oops}\n", "f: line 2: not valid JSON"},
		{"beads no id", Beads, `{"title":"t"}`, "f: line 1: id: is missing or empty"},
		{"beads priority", Beads, `{"id":"a","title":"t","priority":1.5}`, "f: line 1: priority: must be a whole number from 0 to 4, got 1.5"},
		{"beads dependency of another issue", Beads, `{"id":"a","title":"t","dependencies":[{"issue_id":"b","depends_on_id":"c","type":"blocks"}]}`, `f: line 1: dependencies[0].issue_id: is "b", not this issue's id "a"`},
		{"beads dependency without target", Beads, `{"id":"a","title":"t","dependencies":[{"type":"blocks"}]}`, "f: line 1: dependencies[0].depends_on_id: is missing or empty"},
		{"github not a list", GitHub, `{}`, "f: `gh issue list --json …` writes a JSON list of issues, got an object"},
		{"github number", GitHub, `[{"title":"t"}]`, "f: [0].number: must be the issue's number, got nothing"},
		{"github title", GitHub, `[{"number":1,"title":""}]`, "f: [0].title: is missing or empty"},
		{"github labels", GitHub, `[{"number":1,"title":"t","labels":"bug"}]`, "f: [0].labels: must be a list, got a string"},
		{"markdown without items", Markdown, "# Title\n\nprose\n", "f: no checklist items"},
		// Read as UTF-8 (its odd length), it would read as UTF-16 once an
		// export ticked its box (found by FuzzParse).
		{"a NUL byte", Markdown, "\x000\x000\n* [] 0", "f: holds a NUL byte (at byte 0): not a text file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.format, "f", []byte(tc.text))
			require.Error(t, err)
			assert.True(t, errors.Is(err, ErrFormat))
			assert.True(t, failure.Is(err, failure.Config))
			var fe *failure.Error
			require.ErrorAs(t, err, &fe)
			assert.Contains(t, fe.Message, tc.want)
		})
	}
}

func TestDetect(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		{".beads/issues.jsonl", `{"id":"a"}`, Beads},
		{"export.jsonl", ``, Beads},
		{"plan.md", ``, Markdown},
		{"plan.txt", "- [ ] a\n", Markdown},
		{"TODO", "# Next\n\n* [x] a\n", Markdown},
		{"notes.txt", "just prose\n", ""},
		{"x.json", `[{"number":1}]`, GitHub},
		{"x.json", `[{"description":"a","passes":false}]`, FeatureList},
		{"x.json", `{"tasks":[]}`, Taskmaster},
		{"x.json", `{"master":{"tasks":[]}}`, Taskmaster},
		{"issues", "{\"id\":\"a\"}\n{\"id\":\"b\"}\n", Beads},
		{"issues.json", `[{"id":"bd-1","title":"t","status":"open","issue_type":"task","description":""}]`, Beads},
		{"x.json", `[{"id":"F1","description":"a","status":"done"}]`, FeatureList},
		{"feature_list.json", `{"project":"p","features":[{"description":"a"}]}`, FeatureList},
		{"tasks.json", `{"tasks":[{"id":"F1","description":"a","passes":false}]}`, FeatureList},
		{"tasks.json", `{"tasks":[{"id":1,"title":"a","status":"pending"}]}`, Taskmaster},
		{"prd.json", `{"version":"main","stories":[{"id":"US-001","title":"a","passes":true}]}`, FeatureList},
		{"x.json", `{"stories":[{"title":"a"}]}`, ""},
		{"issue.json", `{"number":7,"title":"t","state":"OPEN","body":""}`, GitHub},
		{"issues.jsonl", "{\"number\":7,\"title\":\"t\"}\n{\"number\":8,\"title\":\"u\"}\n", GitHub},
		{"issues", "{\"number\":7,\"title\":\"t\"}\n{\"number\":8,\"title\":\"u\"}\n", GitHub},
		{"x.json", `[]`, ""},
		{"x.json", `{"a":1}`, ""},
		{"x.json", ``, ""},
	} {
		got, err := Detect(tc.name, []byte(tc.text))
		if tc.want == "" {
			assert.Error(t, err, "%s %q", tc.name, tc.text)
			continue
		}
		require.NoError(t, err, "%s %q", tc.name, tc.text)
		assert.Equal(t, tc.want, got, "%s %q", tc.name, tc.text)
	}
}

// Patch marks done only what done names and the file does not have done,
// and nothing else: a file with nothing to mark comes back byte for byte.
func TestPatch(t *testing.T) {
	for _, tc := range []struct {
		name, format, text string
		done               []string
		want               string
	}{
		{"feature list", FeatureList, "[\n  {\"description\": \"A\", \"passes\": false},\n  {\"description\": \"B\", \"passes\": false}\n]\n",
			[]string{"feature-list:" + shortHash("B")}, "[\n  {\"description\": \"A\", \"passes\": false},\n  {\"description\": \"B\", \"passes\": true}\n]\n"},
		{"feature list without passes", FeatureList, `[{"description":"A"}]`, []string{"feature-list:" + shortHash("A")}, `[{"description":"A","passes":true}]`},
		{"feature list, nothing done", FeatureList, "[ {\"description\" : \"A\",\"passes\":false} ]\r\n", nil, "[ {\"description\" : \"A\",\"passes\":false} ]\r\n"},
		{"taskmaster subtask", Taskmaster, `{"my.tag":{"tasks":[{"id":1,"title":"a","status":"pending","subtasks":[{"id":1,"title":"b","status":"pending"}]}]}}`,
			[]string{"taskmaster:my.tag/1.1"}, `{"my.tag":{"tasks":[{"id":1,"title":"a","status":"pending","subtasks":[{"id":1,"title":"b","status":"done"}]}]}}`},
		{"beads keeps CRLF and other lines", Beads, "{\"id\":\"a\",\"title\":\"t\",\"status\":\"open\"}\r\n{\"id\":\"b\",\"title\":\"u\",\"status\":\"open\"}\r\n",
			[]string{"beads:b"}, "{\"id\":\"a\",\"title\":\"t\",\"status\":\"open\"}\r\n{\"id\":\"b\",\"title\":\"u\",\"status\":\"closed\"}\r\n"},
		{"github", GitHub, `[{"number":3,"title":"t","state":"OPEN"}]`, []string{"github:#3"}, `[{"number":3,"title":"t","state":"CLOSED"}]`},
		{"markdown", Markdown, "- [ ] a\n  * [ ] b [ ] c\n", []string{"markdown:" + shortHash("b [ ] c")}, "- [ ] a\n  * [x] b [ ] c\n"},
		{"already done", Markdown, "- [x] a\n", []string{"markdown:" + shortHash("a")}, "- [x] a\n"},
		{"markdown, an empty box", Markdown, "- [] a\n- [\u00a0] b\n", []string{"markdown:" + shortHash("a"), "markdown:" + shortHash("b")}, "- [x] a\n- [x] b\n"},
		{"markdown, a check is done", Markdown, "- [✔️] a\n", []string{"markdown:" + shortHash("a")}, "- [✔️] a\n"},
		{"taskmaster subtask open under a done task", Taskmaster, `{"tasks":[{"id":1,"title":"a","status":"done","subtasks":[{"id":1,"title":"b","status":"pending"}]}]}`,
			[]string{"taskmaster:master/1.1"}, `{"tasks":[{"id":1,"title":"a","status":"done","subtasks":[{"id":1,"title":"b","status":"done"}]}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, changes, err := Patch(tc.format, "f", []byte(tc.text), func(s string) Verdict {
				for _, d := range tc.done {
					if d == s {
						return Done
					}
				}
				return Leave
			})
			require.NoError(t, err)
			assert.Equal(t, tc.want, string(got))
			var marked []string
			for _, c := range changes {
				assert.True(t, c.Done)
				marked = append(marked, c.Source)
			}
			if tc.want == tc.text {
				assert.Empty(t, marked)
			} else {
				assert.Equal(t, tc.done, marked)
			}
		})
	}
}

// tricky is a description whose lines, written as they are under a
// checklist's item, would read as a task, a criterion, a dependency, a
// fence or a comment; its blank line and inner indentation are its own.
const tricky = "Write the docs.\n- [ ] not a task\n- not a criterion\n1. not a step\n_Depends: 1_\nDepends on: 2\n```\n<!-- kept -->\n\n> a quote\n    indented code"

// Write renders the harness's tasks in each format; the result reads back
// as the same items, done where the task is completed.
func TestWriteReadsBack(t *testing.T) {
	tasks := []state.Task{
		{ID: "task-001", Title: "Server", Status: state.Completed, Priority: "P0", Acceptance: []string{"GET / is 200"}},
		{ID: "task-002", Title: "Auth <JWT>", Status: state.InProgress, Priority: "P2", DependsOn: []string{"task-001"}, Description: "email & password"},
		{ID: "task-003", Title: "Docs", Status: state.Pending, Priority: "P1", Description: tricky},
	}
	for _, format := range []string{FeatureList, Taskmaster, Beads, Markdown} {
		t.Run(format, func(t *testing.T) {
			text, err := Write(format, tasks)
			require.NoError(t, err)
			assert.NotContains(t, string(text), `\u003c`, "titles are not HTML-escaped")
			p, err := Parse(format, "out", text)
			require.NoError(t, err, "%s", text)
			require.Len(t, p.Items, 3)
			for i, it := range p.Items {
				assert.Equal(t, tasks[i].Title, it.Title)
				assert.Equal(t, tasks[i].Status == state.Completed, it.Done, it.Title)
			}
			if format != FeatureList && format != Markdown {
				assert.Equal(t, "P2", p.Items[1].Priority)
				assert.Len(t, p.Items[1].DependsOn, 1)
			}
			if format == Markdown {
				assert.True(t, strings.HasPrefix(string(text), "- [x] Server\n  - GET / is 200\n"))
				for i, it := range p.Items {
					assert.Equal(t, tasks[i].Description, it.Description, "%s", text)
					assert.Equal(t, tasks[i].Acceptance, it.Acceptance, "%s", text)
					assert.Len(t, it.DependsOn, 0, "%s", text)
				}
			}
		})
	}
	_, err := Write(GitHub, tasks)
	assert.True(t, failure.Is(err, failure.Usage))
}

// --tag keeps one tag's items and skips; a tag the file lacks is refused
// with the tags it has.
func TestOnlyTag(t *testing.T) {
	data, err := os.ReadFile("testdata/taskmaster/own_tagged.json")
	require.NoError(t, err)
	p, err := Parse(Taskmaster, "tasks.json", data)
	require.NoError(t, err)
	assert.Equal(t, []string{"master", "test-tag"}, p.Tags)
	require.NoError(t, p.OnlyTag("test-tag"))
	assert.Equal(t, []brief{{Source: "taskmaster:test-tag/1", Title: "Try the tagged task lists", Priority: "P1"}}, briefs(p))
	assert.Empty(t, p.Skipped)

	p, _ = Parse(Taskmaster, "tasks.json", data)
	err = p.OnlyTag("feature-x")
	var fe *failure.Error
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, `the file has no tag "feature-x"`, fe.Message)
	assert.Equal(t, "its tags: master, test-tag", fe.Hint)

	p, _ = Parse(Markdown, "TODO.md", []byte("- [ ] a\n"))
	assert.True(t, failure.Is(p.OnlyTag("master"), failure.Usage))
}

// An export without --from then an import keeps what the import read:
// dependencies (in a checklist, the nesting that holds them) and a
// feature's category and long description.
func TestWriteRoundTrip(t *testing.T) {
	tasks := []state.Task{
		{ID: "task-001", Title: "Installer", Status: state.Pending, Priority: "P1", DependsOn: []string{"task-002", "task-004"}},
		{ID: "task-002", Title: "Linux", Status: state.Pending, Priority: "P1", DependsOn: []string{"task-003"}},
		{ID: "task-003", Title: "deb", Status: state.Completed, Priority: "P1", DependsOn: []string{}},
		{ID: "task-004", Title: "Mac", Status: state.Pending, Priority: "P1", DependsOn: []string{}, Acceptance: []string{"a .pkg installs"}},
		{ID: "task-005", Title: "Announce", Status: state.Pending, Priority: "P1", DependsOn: []string{"task-001"}},
	}
	deps := func(p *Plan) map[string][]string {
		title := map[string]string{}
		for _, it := range p.Items {
			title[it.Source] = it.Title
		}
		out := map[string][]string{}
		for _, it := range p.Items {
			for _, d := range it.DependsOn {
				out[it.Title] = append(out[it.Title], title[d])
			}
		}
		return out
	}
	for _, format := range []string{Taskmaster, Beads, Markdown} {
		text, err := Write(format, tasks)
		require.NoError(t, err)
		p, err := Parse(format, "out", text)
		require.NoError(t, err, "%s", text)
		want := map[string][]string{"Installer": {"Linux", "Mac"}, "Linux": {"deb"}, "Announce": {"Installer"}}
		if format == Markdown {
			delete(want, "Announce") // a checklist holds nesting only
		}
		assert.Equal(t, want, deps(p), "%s:\n%s", format, text)
		assert.Equal(t, []string{"a .pkg installs"}, p.Items[3].Acceptance, format)
	}

	features := []state.Task{
		{ID: "task-001", Title: "New chat", Description: "category: functional", Status: state.Completed, Priority: "P1"},
		{ID: "task-002", Title: "Bubbles follow the design system", Description: "Bubbles follow\nthe design system\n\ncategory: style", Priority: "P1"},
		{ID: "task-003", Title: "Added by hand", Priority: "P1"},
	}
	text, err := Write(FeatureList, features)
	require.NoError(t, err)
	p, err := Parse(FeatureList, "out", text)
	require.NoError(t, err)
	for i, it := range p.Items {
		assert.Equal(t, features[i].Title, it.Title)
		if i < 2 {
			assert.Equal(t, features[i].Description, it.Description)
		}
	}
	assert.Equal(t, "feature-list:"+shortHash("Bubbles follow\nthe design system"), p.Items[1].Source, "the same feature, not a new one")
	assert.Contains(t, string(text), `"category": "harness"`)
}

// Issue 32 item 12: the messages say what is wrong. A file cut short
// names the place JSON ends; a file of another format read as one
// says which it is.
func TestMessages(t *testing.T) {
	_, err := Detect("tasks.json", []byte("{\n  \"master\": {\n    \"tasks\": [\n      {\"id\": 1, \"title\": \"a\""))
	var fe *failure.Error
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, "tasks.json: line 4: not valid JSON: unexpected end of JSON input; so which plan format it is cannot be told", fe.Message)
	assert.Contains(t, fe.Hint, "cut short?")

	beads := `{"id":"bd-1","title":"t","status":"open","priority":2,"issue_type":"task"}` + "\n"
	_, err = Parse(Taskmaster, "issues.jsonl", []byte(beads))
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, "issues.jsonl: \"id\" is not a Taskmaster tag (an object with \"tasks\"), got a string; it reads as a beads file", fe.Message)
	assert.Equal(t, "--format beads", fe.Hint)
}

// An item the file has done goes back to not done when its task is
// pending or in progress in the harness, in each format's own words.
func TestPatchMovesBack(t *testing.T) {
	for _, tc := range []struct {
		format, text string
		verdict      Verdict
		want         string
	}{
		{FeatureList, `[{"description":"A","passes":true}]`, Pending, `[{"description":"A","passes":false}]`},
		{FeatureList, `{"features":[{"id":1,"title":"A","status":"done"}]}`, InProgress, `{"features":[{"id":1,"title":"A","status":"in_progress"}]}`},
		{FeatureList, `{"features":[{"id":1,"title":"A","state":"passing"}]}`, Pending, `{"features":[{"id":1,"title":"A","state":"pending"}]}`},
		{Taskmaster, `{"tasks":[{"id":1,"title":"a","status":"done"}]}`, Pending, `{"tasks":[{"id":1,"title":"a","status":"pending"}]}`},
		{Taskmaster, `{"tasks":[{"id":1,"title":"a","status":"done"}]}`, InProgress, `{"tasks":[{"id":1,"title":"a","status":"in-progress"}]}`},
		{Beads, "{\"id\":\"a\",\"title\":\"t\",\"status\":\"closed\"}\r\n", Pending, "{\"id\":\"a\",\"title\":\"t\",\"status\":\"open\"}\r\n"},
		{GitHub, `[{"number":3,"title":"t","state":"CLOSED"}]`, InProgress, `[{"number":3,"title":"t","state":"OPEN"}]`},
		{GitHub, `[{"number":3,"title":"t","state":"closed"}]`, Pending, `[{"number":3,"title":"t","state":"open"}]`},
		{GitHub, `{"number":3,"title":"t","state":"CLOSED"}`, Pending, `{"number":3,"title":"t","state":"OPEN"}`},
		{GitHub, "{\"number\":3,\"title\":\"t\",\"state\":\"OPEN\"}\r\n{\"number\":4,\"title\":\"u\",\"state\":\"CLOSED\"}\r\n", Pending, "{\"number\":3,\"title\":\"t\",\"state\":\"OPEN\"}\r\n{\"number\":4,\"title\":\"u\",\"state\":\"OPEN\"}\r\n"},
		{Beads, "{\n  \"id\": \"a\",\n  \"title\": \"t\",\n  \"status\": \"closed\"\n}\n", InProgress, "{\n  \"id\": \"a\",\n  \"title\": \"t\",\n  \"status\": \"in_progress\"\n}\n"},
		{Markdown, "  * [X] a [x]\n", Pending, "  * [ ] a [x]\n"},
		{Markdown, "- [x] a\n", Leave, "- [x] a\n"},
		{Markdown, "- [✅] a\n", Pending, "- [ ] a\n"},
		{Markdown, "- [x] a\n  - [ ] b\n", Pending, "- [ ] a\n  - [ ] b\n"},
	} {
		got, changes, err := Patch(tc.format, "f", []byte(tc.text), func(string) Verdict { return tc.verdict })
		require.NoError(t, err)
		assert.Equal(t, tc.want, string(got), tc.format)
		if tc.verdict != Leave {
			require.Len(t, changes, 1)
			assert.False(t, changes[0].Done)
		}
	}
}

// What a reader takes leniently it says: a Taskmaster priority of its own
// words, a Beads issue written twice (the later line wins, as bd import
// upserts).
func TestLenient(t *testing.T) {
	p, err := Parse(Taskmaster, "f", []byte(`{"tasks":[{"id":1,"title":"a","priority":"urgent"},{"id":2,"title":"b","priority":"someday","status":"completed"}]}`))
	require.NoError(t, err)
	assert.Equal(t, []brief{{Source: "taskmaster:master/1", Title: "a", Priority: "P0"}, {Source: "taskmaster:master/2", Title: "b", Priority: "P1", Done: true}}, briefs(p))
	assert.Equal(t, []string{`taskmaster:master/2: priority "someday" is not Taskmaster's (high, medium, low): it takes P1`}, p.Notes)

	p, err = Parse(Taskmaster, "f", []byte(`{"master":{"tasks":[{"id":1,"title":"a"}]},"version":"0.20","_meta":{"x":1}}`))
	require.NoError(t, err)
	assert.Equal(t, []string{"master"}, p.Tags)
	assert.Equal(t, []string{`f: "version" holds no "tasks": not a tag, passed over`, `f: "_meta" holds no "tasks": not a tag, passed over`}, p.Notes)

	p, err = Parse(Taskmaster, "f", []byte(`{"tasks":[{"id":1,"title":"a","subtasks":[{"title":"b"}]}]}`))
	require.NoError(t, err)
	assert.Equal(t, "taskmaster:master/1.1", p.Items[1].Source)
	assert.Equal(t, []string{"taskmaster:master/1: a subtask has no id: it is 1.1, by its place"}, p.Notes)

	p, err = Parse(FeatureList, "f", []byte(`[{"feature":"Login","passes":"true"}]`))
	require.NoError(t, err)
	assert.Equal(t, []brief{{Source: "feature-list:" + shortHash("Login"), Title: "Login", Priority: "P1", Done: true}}, briefs(p))

	p, err = Parse(FeatureList, "f", []byte(`[{"description":"a","steps":"open it\nclick"},{"description":"b","steps":[{"step":1,"action":"run"},"see"]}]`))
	require.NoError(t, err)
	assert.Equal(t, []string{"open it", "click"}, p.Items[0].Acceptance)
	assert.Equal(t, []string{`{"step":1,"action":"run"}`, "see"}, p.Items[1].Acceptance)

	p, err = Parse(Beads, "f", []byte("{\"id\":\"a\",\"title\":\"t\"}\n{\"id\":\"a\",\"title\":\"u\",\"status\":\"closed\"}\n"))
	require.NoError(t, err)
	assert.Equal(t, []brief{{Source: "beads:a", Title: "u", Priority: "P1", Done: true}}, briefs(p))
	assert.Equal(t, []string{"beads:a is on lines 1 and 2: the later line is read, as bd import does"}, p.Notes)
}

// A feature's "feature" is its title when it is its own, the group it is
// in when several features share it and each has a description (a test
// plan's "F1: Authentication" over its cases).
func TestFeatureTitle(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		want       []string // each item's title, then its description
	}{
		{"its own", `[{"feature":"Login","description":"Email and password"},{"feature":"Logout","description":"Ends the session"}]`,
			[]string{"Login", "Email and password", "Logout", "Ends the session"}},
		{"a group", `[{"feature":"F1: Auth","description":"Registers","category":"Sign-up"},{"feature":"F1: Auth","description":"Logs in"}]`,
			[]string{"Registers", "feature: F1: Auth\n\ncategory: Sign-up", "Logs in", "feature: F1: Auth"}},
		{"shared, no description", `[{"id":1,"feature":"Login"},{"id":2,"feature":"Login"}]`,
			[]string{"Login", "", "Login", ""}},
		{"a title beside the group", `[{"title":"Upload UI","feature":"F1","description":"d"},{"title":"Progress bar","feature":"F1","description":"e"}]`,
			[]string{"Upload UI", "d", "Progress bar", "e"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse(FeatureList, "f", []byte(tc.file))
			require.NoError(t, err)
			var got []string
			for _, it := range p.Items {
				got = append(got, it.Title, it.Description)
			}
			assert.Equal(t, tc.want, got)
		})
	}
}

// An issue closed as not planned or as a duplicate is skipped, in gh's
// words (stateReason) and the REST API's (state_reason); one closed as
// completed, or closed with no reason said, is done.
func TestGitHubClosedReason(t *testing.T) {
	for _, tc := range []struct {
		name, file, skipped string
		done                bool
	}{
		{"gh, not planned", `[{"number":1,"title":"a","state":"CLOSED","stateReason":"NOT_PLANNED"}]`, "closed as not planned, not done", false},
		{"REST, duplicate", `[{"number":1,"title":"a","state":"closed","state_reason":"duplicate"}]`, "closed as a duplicate, not done", false},
		{"REST, completed", `[{"number":1,"title":"a","state":"closed","state_reason":"completed"}]`, "", true},
		{"no reason", `[{"number":1,"title":"a","state":"CLOSED"}]`, "", true},
		{"open again", `[{"number":1,"title":"a","state":"open","state_reason":"reopened"}]`, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse(GitHub, "f", []byte(tc.file))
			require.NoError(t, err)
			if tc.skipped != "" {
				require.Len(t, p.Skipped, 1)
				assert.Equal(t, tc.skipped, p.Skipped[0].Why)
				assert.Empty(t, p.Items)
				return
			}
			require.Len(t, p.Items, 1)
			assert.Equal(t, tc.done, p.Items[0].Done)
		})
	}
}

// A repository without priority labels says it in the title's first
// brackets; a label says it over the title.
func TestGitHubTitlePriority(t *testing.T) {
	for _, tc := range []struct{ name, issue, want string }{
		{"low", `{"number":1,"title":"[LOW] Add a dark theme"}`, "P2"},
		{"medium", `{"number":1,"title":"[Medium] Cache the feed"}`, "P1"},
		{"high", `{"number":1,"title":"[HIGH] Fix the crash"}`, "P0"},
		{"p3", `{"number":1,"title":"[P3] Tidy the docs"}`, "P2"},
		{"no priority", `{"number":1,"title":"[Bug] Fix the crash"}`, "P1"},
		{"not first", `{"number":1,"title":"Fix the crash [HIGH]"}`, "P1"},
		{"a label over it", `{"number":1,"title":"[LOW] Fix the crash","labels":[{"name":"P0"}]}`, "P0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse(GitHub, "f", []byte("["+tc.issue+"]"))
			require.NoError(t, err)
			require.Len(t, p.Items, 1)
			assert.Equal(t, tc.want, p.Items[0].Priority)
		})
	}
}

// A Beads backup keeps its dependencies beside the issues: read with
// them, the issues wait on each other as an export's do.
func TestBeadsBackup(t *testing.T) {
	data, err := os.ReadFile("testdata/beads/backup/issues.jsonl")
	require.NoError(t, err)
	beside := func(name string) []byte {
		b, _ := os.ReadFile("testdata/beads/backup/" + name)
		return b
	}
	p, err := ParseBeside(Beads, "issues.jsonl", data, beside)
	require.NoError(t, err)
	assert.Equal(t, []brief{
		{Source: "beads:gt-rf1", Title: "Refinery merge queue", Priority: "P0", DependsOn: []string{"beads:gt-rf2", "beads:gt-rf3"}},
		{Source: "beads:gt-rf2", Title: "Rebase before merge", Priority: "P1", DependsOn: []string{"beads:gt-rf3"}, Acceptance: []string{"conflicts go back to the polecat"}},
		{Source: "beads:gt-rf3", Title: "Queue state in beads", Priority: "P1", Done: true},
	}, briefs(p))
	require.Len(t, p.Skipped, 1)
	assert.Equal(t, "an ephemeral wisp, never part of the plan", p.Skipped[0].Why)
	assert.Equal(t, []string{"issues.jsonl: the issues carry no dependencies (a Beads backup): read from dependencies.jsonl beside it"}, p.Notes)
}

// A Beads export holds records that are not issues (memories, a header):
// each is a skipped line saying what it is, never an error, and the
// issues around it are read as ever.
func TestBeadsOtherRecords(t *testing.T) {
	issue := `{"_type":"issue","id":"a","title":"A","status":"open"}` + "\n"
	for _, tc := range []struct {
		name, line string
		want       Skipped
	}{
		{name: "memory", line: `{"_type":"memory","key":"m1","value":"one"}`,
			want: Skipped{Source: "line 2", Title: "m1", Why: `a Beads memory ("_type": "memory", what bd remember keeps), not an issue`}},
		{name: "a record of another type with an id", line: `{"_type":"comment","id":"c-1","text":"x"}`,
			want: Skipped{Source: "beads:c-1", Why: `a Beads record of type "comment" ("_type"), not an issue`}},
		{name: "a stable export's header", line: `{"_schema":"beads-jsonl/1","_dolt_branch":"main","_sort":"stable-v1"}`,
			want: Skipped{Source: "line 2", Title: "beads-jsonl/1", Why: `the export's header ("_schema"), not an issue`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse(Beads, "issues.jsonl", []byte(issue+tc.line+"\n"))
			require.NoError(t, err)
			assert.Equal(t, []brief{{Source: "beads:a", Title: "A", Priority: "P1"}}, briefs(p))
			assert.Equal(t, []Skipped{tc.want}, p.Skipped)
			assert.Empty(t, p.Notes)
		})
	}
	// A line tagged "_type": "issue" is an issue: it needs its id.
	_, err := Parse(Beads, "f", []byte(`{"_type":"issue","title":"t"}`))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "f: line 1: id: is missing or empty")
}
