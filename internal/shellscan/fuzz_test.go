package shellscan

import (
	"strings"
	"testing"
)

var seedCommands = []string{
	"echo x > ./harness-tasks.json",
	"cat > harness-tasks.json <<EOF\n{}\nEOF",
	"bash -c 'sed -i s/a/b/ harness-tasks.json'",
	"$(rm .harness-active)",
	"`rm .harness-active`",
	"cd sub && mv ../harness-tasks.json /tmp",
	"mv /repo/harness-tasks.json /tmp",
	"echo ok >> harness-progress.txt",
	`python3 -c 'open("harness-tasks.json","w").write("{}")'`,
	`eval "rm .harness-active"`,
	"find . -name harness-tasks.json -delete",
	"true && { cp /tmp/x harness-tasks.json; }",
	"go test ./... && git status",
	"echo harness-tasks.json | xargs -I{} rm {}",
	"bash <<EOF\nrm .harness-active\nEOF",
	`F=harness-tasks.json; rm "${F:-x}" $'\x2e' ~/x {a,b}c *.json`,
	"f() { cd /tmp; f; }; f; pushd a; popd; cd -",
	"for ((i=0;i<3;i++)); do case $i in 1) rm x;; esac; done",
	"[[ -n $(rm a) ]] && (( x = $(rm b) )) ; let y=1; declare -a z=(1 2)",
	"sudo -u r env -C d timeout 5 nice -n1 git -C sub reset --hard",
	"diff <(cat a) >(tee b) 2>&1 >&- 3<>f",
	`perl -pi -e 's/a/b/' f; awk '{print > "o"}' x; node -e "fs.writeFileSync('a.js','')"`,
	"tar xzf a.tgz -C out; unzip a.zip -d o; patch -p1 < x; dd of=z",
	"echo 'unterminated",
	"if then",
	"$((",
	"${a[$(rm x)]}",
}

func FuzzAnalyze(f *testing.F) {
	for _, s := range seedCommands {
		f.Add(s, "/repo")
	}
	f.Add("rm x", "")
	f.Add("cd .. && rm y", "/")
	f.Fuzz(func(t *testing.T, command, dir string) {
		r := Analyze(command, dir)
		for _, w := range r.Writes {
			if w.Kind == 0 || w.Kind > ScriptRewrite {
				t.Fatalf("bad kind %d", w.Kind)
			}
			_ = w.Touches("/repo/harness-tasks.json")
		}
		for _, p := range r.Programs {
			IsDestructiveGit(p)
		}
		if len(r.Writes) > maxWrites || len(r.Programs) > maxPrograms || len(r.Mentions) > maxMentions {
			t.Fatalf("limits exceeded: %d %d %d", len(r.Writes), len(r.Programs), len(r.Mentions))
		}
		_ = strings.Join(r.Mentions, "")
	})
}

func BenchmarkAnalyze(b *testing.B) {
	cases := []struct{ name, cmd string }{
		{"typical", "go test ./... && git status"},
		{"redirects", `cd internal && go vet ./... 2>&1 | tee /tmp/vet.log >> ../harness-progress.txt`},
		{"nested", `bash -c "cd sub && python3 -c 'open(\"x.json\",\"w\").write(\"{}\")'" && eval "rm -f a b c"`},
		{"long", strings.Repeat("echo step >> /tmp/log && cp a/b/c.txt d/e/ && ", 100) + "git status"},
		{"heredoc", "cat > notes.md <<'EOF'\n" + strings.Repeat("Some prose line with words in it.\n", 500) + "EOF"},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(c.cmd)))
			for b.Loop() {
				Analyze(c.cmd, "/repo")
			}
		})
	}
}
