package shellscan

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	cwd       = "/repo"
	tasks     = "/repo/harness-tasks.json"
	progress  = "/repo/harness-progress.txt"
	active    = "/repo/.harness-active"
	homeForUs = "/home/agent"
)

func init() { repanic = true }

// w is the part of a Write the tests compare.
type w struct {
	Path string
	Kind WriteKind
}

func writesOf(r Report) []w {
	out := make([]w, 0, len(r.Writes))
	for _, x := range r.Writes {
		out = append(out, w{x.Path, x.Kind})
	}
	return out
}

func describe(r Report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "err=%v incomplete=%v\n", r.ParseError, r.Incomplete)
	for _, x := range r.Writes {
		fmt.Fprintf(&b, "  %-13s %q dyn=%v tree=%v op=%q\n", x.Kind, x.Path, x.Dynamic, x.Tree, x.Op)
	}
	return b.String()
}

// TestWrites checks that each command reports at least the listed writes.
func TestWrites(t *testing.T) {
	t.Setenv("HOME", homeForUs)
	tests := []struct {
		name string
		cmd  string
		want []w
	}{
		// Redirections.
		{"redirect", "echo x > harness-tasks.json", []w{{tasks, Redirect}}},
		{"redirect dot slash", "echo x > ./harness-tasks.json", []w{{tasks, Redirect}}},
		{"redirect absolute", "echo x > /repo/harness-tasks.json", []w{{tasks, Redirect}}},
		{"redirect dotdot", "echo x > sub/../harness-tasks.json", []w{{tasks, Redirect}}},
		{"clobber", "echo x >| harness-tasks.json", []w{{tasks, Redirect}}},
		{"append", "echo ok >> harness-progress.txt", []w{{progress, Append}}},
		{"all", "make &> build.log", []w{{"/repo/build.log", Redirect}}},
		{"append all", "make &>> build.log", []w{{"/repo/build.log", Append}}},
		{"read write", "exec 3<> harness-tasks.json", []w{{tasks, Redirect}}},
		{"fd redirect", "cmd 2> err.log", []w{{"/repo/err.log", Redirect}}},
		{"dup to file", "cmd >& out.log", []w{{"/repo/out.log", Redirect}}},
		{"bare redirect", "> harness-tasks.json", []w{{tasks, Redirect}}},
		{"colon truncate", ": > harness-tasks.json", []w{{tasks, Redirect}}},
		{"heredoc cat", "cat > harness-tasks.json <<EOF\n{\"tasks\": []}\nEOF", []w{{tasks, Redirect}}},
		{"heredoc quoted", "cat <<'EOF' > harness-tasks.json\n$x\nEOF", []w{{tasks, Redirect}}},
		{"jq roundtrip", "jq '.a=1' harness-tasks.json > harness-tasks.json", []w{{tasks, Redirect}}},
		{"quoted name", `echo x > "harness-"'tasks.json'`, []w{{tasks, Redirect}}},
		{"escaped name", `echo x > harness\-tasks.json`, []w{{tasks, Redirect}}},
		{"ansi c name", `echo x > $'\x68arness-tasks.json'`, []w{{tasks, Redirect}}},
		{"brace expansion", "rm harness-{tasks.json,progress.txt}", []w{{tasks, Remove}, {progress, Remove}}},
		{"block redirect", "{ echo a; echo b; } > harness-tasks.json", []w{{tasks, Redirect}}},
		{"subshell redirect", "(echo a) > harness-tasks.json", []w{{tasks, Redirect}}},
		{"loop redirect", "for i in 1 2; do echo $i; done > harness-tasks.json", []w{{tasks, Redirect}}},

		// Variables.
		{"variable", `F=harness-tasks.json; rm "$F"`, []w{{tasks, Remove}}},
		{"braced variable", `F=harness-tasks.json && rm "${F}"`, []w{{tasks, Remove}}},
		{"export variable", `export F=harness-tasks.json; rm $F`, []w{{tasks, Remove}}},
		{"local in function", `f() { local F=harness-tasks.json; rm $F; }; f`, []w{{tasks, Remove}}},
		{"appended variable", `F=harness-; F+=tasks.json; rm $F`, []w{{tasks, Remove}}},
		{"single for item", `for f in harness-tasks.json; do rm $f; done`, []w{{tasks, Remove}}},
		{"home", "rm $HOME/x", []w{{homeForUs + "/x", Remove}}},
		{"tilde", "rm ~/x", []w{{homeForUs + "/x", Remove}}},
		{"pwd var", "rm $PWD/harness-tasks.json", []w{{tasks, Remove}}},
		{"pwd subst", "rm $(pwd)/harness-tasks.json", []w{{tasks, Remove}}},
		{"default expansion", `rm ${F:-harness-tasks.json}`, []w{{"${F:-harness-tasks.json}", Remove}}},

		// Nesting.
		{"and list", "true && rm harness-tasks.json", []w{{tasks, Remove}}},
		{"or list", "false || rm harness-tasks.json", []w{{tasks, Remove}}},
		{"pipeline", "cat x | tee harness-tasks.json | wc -l", []w{{tasks, Tee}}},
		{"group", "true && { cp /tmp/x harness-tasks.json; }", []w{{tasks, CopyTarget}}},
		{"subshell", "(rm .harness-active)", []w{{active, Remove}}},
		{"cmd subst", "echo $(rm .harness-active)", []w{{active, Remove}}},
		{"cmd subst alone", "$(rm .harness-active)", []w{{active, Remove}}},
		{"backticks", "`rm .harness-active`", []w{{active, Remove}}},
		{"cmd subst in assignment", "x=$(rm .harness-active)", []w{{active, Remove}}},
		{"cmd subst in redirect target", "echo > $(rm .harness-active; echo /tmp/x)", []w{{active, Remove}}},
		{"cmd subst in quotes", `echo "a $(rm .harness-active) b"`, []w{{active, Remove}}},
		{"cmd subst in param default", `echo ${X:-$(rm .harness-active)}`, []w{{active, Remove}}},
		{"cmd subst in arithmetic", `echo $(( $(rm .harness-active) + 1 ))`, []w{{active, Remove}}},
		{"cmd subst in heredoc", "cat <<EOF\n$(rm .harness-active)\nEOF", []w{{active, Remove}}},
		{"process subst", "diff <(rm .harness-active) x", []w{{active, Remove}}},
		{"output process subst", "echo x > >(tee harness-tasks.json)", []w{{tasks, Tee}}},
		{"if body", "if true; then rm .harness-active; fi", []w{{active, Remove}}},
		{"if cond", "if rm .harness-active; then :; fi", []w{{active, Remove}}},
		{"elif else", "if a; then :; elif b; then :; else rm .harness-active; fi", []w{{active, Remove}}},
		{"while body", "while true; do rm .harness-active; done", []w{{active, Remove}}},
		{"until cond", "until rm .harness-active; do :; done", []w{{active, Remove}}},
		{"for body", "for i in 1 2 3; do rm .harness-active; done", []w{{active, Remove}}},
		{"c for", "for ((i=0;i<3;i++)); do rm .harness-active; done", []w{{active, Remove}}},
		{"case", "case x in x) rm .harness-active;; esac", []w{{active, Remove}}},
		{"function called", "f() { rm .harness-active; }; f", []w{{active, Remove}}},
		{"function never called", "function f { rm .harness-active; }", []w{{active, Remove}}},
		{"test clause subst", "[[ -n $(rm .harness-active) ]]", []w{{active, Remove}}},
		{"negated", "! rm .harness-active", []w{{active, Remove}}},
		{"background", "rm .harness-active &", []w{{active, Remove}}},
		{"time", "time rm .harness-active", []w{{active, Remove}}},
		{"bash -c", "bash -c 'sed -i s/a/b/ harness-tasks.json'", []w{{tasks, InPlace}}},
		{"sh -c", `sh -c "rm .harness-active"`, []w{{active, Remove}}},
		{"zsh -c", `zsh -c "rm .harness-active"`, []w{{active, Remove}}},
		{"dash -c", `dash -c "rm .harness-active"`, []w{{active, Remove}}},
		{"bash -lc", `bash -lc "rm .harness-active"`, []w{{active, Remove}}},
		{"bash -c nested", `bash -c "bash -c 'rm .harness-active'"`, []w{{active, Remove}}},
		{"eval", `eval "rm .harness-active"`, []w{{active, Remove}}},
		{"eval words", `eval rm .harness-active`, []w{{active, Remove}}},
		{"eval cd persists", `eval "cd sub"; rm x`, []w{{"/repo/sub/x", Remove}}},
		{"heredoc to bash", "bash <<EOF\nrm .harness-active\nEOF", []w{{active, Remove}}},
		{"heredoc to sh", "sh <<'EOF'\necho x > harness-tasks.json\nEOF", []w{{tasks, Redirect}}},
		{"herestring to bash", `bash <<< "rm .harness-active"`, []w{{active, Remove}}},
		{"echo to bash", `echo "rm .harness-active" | bash`, []w{{active, Remove}}},
		{"cat heredoc to sh", "cat <<EOF | sh\nrm .harness-active\nEOF", []w{{active, Remove}}},
		{"trap", `trap 'rm .harness-active' EXIT`, []w{{active, Remove}}},
		{"source proc subst", `source <(echo "rm .harness-active")`, []w{{active, Remove}}},
		{"bash proc subst", `bash <(printf 'rm .harness-active')`, []w{{active, Remove}}},
		{"echo to sudo bash", `echo "rm .harness-active" | sudo bash`, []w{{active, Remove}}},
		{"echo to python", `echo "open('harness-tasks.json','w')" | python3`, []w{{tasks, ScriptRewrite}}},
		{"xargs from echo", "echo harness-tasks.json | xargs rm", []w{{tasks, Remove}}},
		{"xargs -I", "echo harness-tasks.json | xargs -I{} cp /tmp/x {}", []w{{tasks, CopyTarget}}},
		{"xargs sh -c", `xargs sh -c 'rm .harness-active'`, []w{{active, Remove}}},
		{"find delete", "find . -name harness-tasks.json -delete", []w{{"/repo/**/harness-tasks.json", Remove}}},
		{"find delete all", "find . -type f -delete", []w{{cwd, Remove}}},
		{"find exec", `find . -name '*.json' -exec rm {} \;`, []w{{"{}", Remove}}},
		{"find exec sh", `find . -exec sh -c 'rm .harness-active' \;`, []w{{active, Remove}}},
		{"find fprint", `find . -fprint harness-tasks.json`, []w{{tasks, Output}}},

		// Wrappers.
		{"sudo", "sudo rm .harness-active", []w{{active, Remove}}},
		{"sudo -u", "sudo -u root rm .harness-active", []w{{active, Remove}}},
		{"env", "env -i FOO=1 rm .harness-active", []w{{active, Remove}}},
		{"env -C", "env -C sub rm x", []w{{"/repo/sub/x", Remove}}},
		{"env -S", "env -S 'rm .harness-active'", []w{{active, Remove}}},
		{"nice", "nice -n 10 rm .harness-active", []w{{active, Remove}}},
		{"nice -N", "nice -10 rm .harness-active", []w{{active, Remove}}},
		{"timeout", "timeout -s KILL 5 rm .harness-active", []w{{active, Remove}}},
		{"nohup", "nohup rm .harness-active", []w{{active, Remove}}},
		{"command", "command rm .harness-active", []w{{active, Remove}}},
		{"builtin", "builtin cd sub && rm x", []w{{"/repo/sub/x", Remove}}},
		{"exec", "exec rm .harness-active", []w{{active, Remove}}},
		{"stdbuf", "stdbuf -oL rm .harness-active", []w{{active, Remove}}},
		{"absolute program", "/bin/rm .harness-active", []w{{active, Remove}}},
		{"busybox", "busybox rm .harness-active", []w{{active, Remove}}},
		{"watch", "watch -n 1 'rm .harness-active'", []w{{active, Remove}}},
		{"flock -c", "flock /tmp/lock -c 'rm .harness-active'", []w{{active, Remove}}},
		{"su -c", "su root -c 'rm .harness-active'", []w{{active, Remove}}},
		{"uv run", "uv run python -c 'import os; os.remove(\".harness-active\")'", []w{{active, ScriptRewrite}}},
		{"prefix assignment", "LC_ALL=C rm .harness-active", []w{{active, Remove}}},

		// cd tracking.
		{"cd and", "cd sub && mv ../harness-tasks.json /tmp", []w{{tasks, MoveSource}, {"/tmp/harness-tasks.json", MoveTarget}}},
		{"cd absolute", "cd /etc && rm passwd", []w{{"/etc/passwd", Remove}}},
		{"cd twice", "cd a && cd b && rm x", []w{{"/repo/a/b/x", Remove}}},
		{"cd semicolon keeps both", "cd /nowhere; rm harness-tasks.json", []w{{"/nowhere/harness-tasks.json", Remove}, {tasks, Remove}}},
		{"cd in subshell does not leak", "(cd /tmp); rm x", []w{{"/repo/x", Remove}}},
		{"cd in group leaks", "{ cd sub; } && rm x", []w{{"/repo/sub/x", Remove}}},
		{"cd home", "cd && rm x", []w{{homeForUs + "/x", Remove}}},
		{"cd tilde", "cd ~/p && rm x", []w{{homeForUs + "/p/x", Remove}}},
		{"pushd popd", "pushd sub && popd && rm x", []w{{"/repo/x", Remove}}},
		{"pushd", "pushd /tmp >/dev/null && rm x", []w{{"/tmp/x", Remove}}},
		{"cd in if", "if true; then cd sub; fi; rm x", []w{{"/repo/sub/x", Remove}, {"/repo/x", Remove}}},
		{"cd in function", "go() { cd sub; }; go && rm x", []w{{"/repo/sub/x", Remove}}},
		{"git -C", "git -C sub rm f", []w{{"/repo/sub/f", Remove}}},

		// Writers.
		{"tee", "echo x | tee harness-tasks.json", []w{{tasks, Tee}}},
		{"tee multiple", "echo x | tee a b", []w{{"/repo/a", Tee}, {"/repo/b", Tee}}},
		{"tee -a", "echo x | tee -a harness-progress.txt", []w{{progress, Append}}},
		{"sudo tee", "echo x | sudo tee harness-tasks.json", []w{{tasks, Tee}}},
		{"sed -i", "sed -i s/a/b/ harness-tasks.json", []w{{tasks, InPlace}}},
		{"sed -i.bak", "sed -i.bak 's/a/b/' harness-tasks.json", []w{{tasks, InPlace}}},
		{"sed -Ei", "sed -Ei 's/a/b/' harness-tasks.json", []w{{tasks, InPlace}}},
		{"sed --in-place", "sed --in-place=.bak -e 's/a/b/' harness-tasks.json", []w{{tasks, InPlace}}},
		{"sed --in-pl abbreviation", "sed --in-pl -e 's/a/b/' harness-tasks.json", []w{{tasks, InPlace}}},
		{"sed -i -e", "sed -i -e 's/a/b/' -e 's/c/d/' a b", []w{{"/repo/a", InPlace}, {"/repo/b", InPlace}}},
		{"sed w command", "sed -n 'w harness-tasks.json' x", []w{{tasks, Output}}},
		{"sed s///w", "sed 's/a/b/w harness-tasks.json' x", []w{{tasks, Output}}},
		{"perl -pi", "perl -pi -e 's/a/b/' harness-tasks.json", []w{{tasks, InPlace}}},
		{"perl -i.bak", "perl -i.bak -pe 's/a/b/' harness-tasks.json", []w{{tasks, InPlace}}},
		{"perl unlink", `perl -e 'unlink ".harness-active"'`, []w{{active, ScriptRewrite}}},
		{"ruby -i", "ruby -i -pe 'gsub(/a/,\"b\")' harness-tasks.json", []w{{tasks, InPlace}}},
		{"cp", "cp /tmp/x harness-tasks.json", []w{{tasks, CopyTarget}}},
		{"cp into dir", "cp /tmp/harness-tasks.json .", []w{{tasks, CopyTarget}}},
		{"cp -t", "cp -t . /tmp/harness-tasks.json", []w{{tasks, CopyTarget}}},
		{"cp --target-directory", "cp --target-directory=/repo /tmp/harness-tasks.json", []w{{tasks, CopyTarget}}},
		{"cp -r", "cp -r /tmp/d sub", []w{{"/repo/sub", CopyTarget}, {"/repo/sub/d", CopyTarget}}},
		{"cp /dev/null", "cp /dev/null harness-tasks.json", []w{{tasks, CopyTarget}}},
		{"install", "install -m 644 /tmp/x harness-tasks.json", []w{{tasks, CopyTarget}}},
		{"install -d", "install -d out", []w{{"/repo/out", Mkdir}}},
		{"rsync", "rsync -av /tmp/backup/ .", []w{{cwd, CopyTarget}}},
		{"rsync remote target ignored", "rsync -av . host:/backup", nil},
		{"mv", "mv harness-tasks.json /tmp/", []w{{tasks, MoveSource}, {"/tmp/harness-tasks.json", MoveTarget}}},
		{"mv onto", "mv /tmp/x harness-tasks.json", []w{{"/tmp/x", MoveSource}, {tasks, MoveTarget}}},
		{"mv -t", "mv -t /tmp a b", []w{{"/repo/a", MoveSource}, {"/tmp/a", MoveTarget}, {"/tmp/b", MoveTarget}}},
		{"rm", "rm -f .harness-active", []w{{active, Remove}}},
		{"rm after options end", "rm -- -x", []w{{"/repo/-x", Remove}}},
		{"unlink", "unlink .harness-active", []w{{active, Remove}}},
		{"shred", "shred -u harness-tasks.json", []w{{tasks, Remove}}},
		{"rmdir", "rmdir d", []w{{"/repo/d", Remove}}},
		{"truncate", "truncate -s 0 harness-tasks.json", []w{{tasks, Truncate}}},
		{"dd", "dd if=/dev/zero of=harness-tasks.json bs=1 count=0", []w{{tasks, Output}}},
		{"touch", "touch -d yesterday .harness-active", []w{{active, Touch}}},
		{"ln", "ln -sf /tmp/evil harness-tasks.json", []w{{tasks, Link}}},
		{"ln one arg", "ln -s /tmp/harness-tasks.json", []w{{tasks, Link}}},
		{"mkdir", "mkdir -p a/b", []w{{"/repo/a/b", Mkdir}}},
		{"chmod", "chmod 000 harness-tasks.json", []w{{tasks, Chmod}}},
		{"chmod symbolic dash", "chmod -w harness-tasks.json", []w{{tasks, Chmod}}},
		{"chown", "chown -R me: .", []w{{cwd, Chmod}}},
		{"git checkout --", "git checkout -- harness-tasks.json", []w{{tasks, GitRestore}}},
		{"git checkout file", "git checkout HEAD harness-tasks.json", []w{{tasks, GitRestore}}},
		{"git restore", "git restore harness-tasks.json", []w{{tasks, GitRestore}}},
		{"git restore source", "git restore --source=HEAD~1 -- harness-tasks.json", []w{{tasks, GitRestore}}},
		{"git rm", "git rm harness-tasks.json", []w{{tasks, Remove}}},
		{"git mv", "git mv harness-tasks.json x.json", []w{{tasks, MoveSource}, {"/repo/x.json", MoveTarget}}},
		{"git clean", "git clean -fdx", []w{{cwd, Remove}}},
		{"sponge", "jq . harness-tasks.json | sponge harness-tasks.json", []w{{tasks, Output}}},
		{"sponge -a", "echo x | sponge -a harness-progress.txt", []w{{progress, Append}}},
		{"yq -i", "yq -i '.a = 1' config.yaml", []w{{"/repo/config.yaml", InPlace}}},
		{"sort -o", "sort -o harness-tasks.json harness-tasks.json", []w{{tasks, Output}}},
		{"curl -o", "curl -sSLo harness-tasks.json https://x", []w{{tasks, Output}}},
		{"wget -O", "wget -O harness-tasks.json https://x", []w{{tasks, Output}}},
		{"tar -x", "tar -xzf a.tgz -C out", []w{{"/repo/out", Extract}}},
		{"tar old style", "tar xzf a.tgz", []w{{cwd, Extract}}},
		{"tar -c", "tar -czf out.tgz src", []w{{"/repo/out.tgz", Output}}},
		{"unzip", "unzip a.zip -d out", []w{{"/repo/out", Extract}}},
		{"patch", "patch -p1 < fix.diff", []w{{cwd, InPlace}}},
		{"gzip", "gzip harness-tasks.json", []w{{tasks, Remove}}},
		{"gofmt -w", "gofmt -w main.go", []w{{"/repo/main.go", InPlace}}},
		{"prettier --write", "prettier --write src", []w{{"/repo/src", InPlace}}},
		{"black", "black .", []w{{cwd, InPlace}}},
		{"editor", "vim -c 'wq' harness-tasks.json", []w{{tasks, InPlace}}},
		{"awk inplace", "gawk -i inplace '{print}' harness-tasks.json", []w{{tasks, InPlace}}},
		{"awk print to file", `awk '{print > "harness-tasks.json"}' x`, []w{{tasks, ScriptRewrite}}},

		// Interpreters.
		{"python open w", `python3 -c 'open("harness-tasks.json","w").write("{}")'`, []w{{tasks, ScriptRewrite}}},
		{"python pathlib", `python -c "import pathlib; pathlib.Path('harness-tasks.json').write_text('{}')"`, []w{{tasks, ScriptRewrite}}},
		{"python os.remove", `python3 -c "import os; os.remove('.harness-active')"`, []w{{active, ScriptRewrite}}},
		{"python os.system", `python3 -c "import os; os.system('rm .harness-active')"`, []w{{active, Remove}}},
		{"python subprocess list", `python3 -c "import subprocess; subprocess.run(['rm', '.harness-active'])"`, []w{{active, ScriptRewrite}}},
		{"python heredoc", "python3 <<'EOF'\nopen('harness-tasks.json', 'w').write('{}')\nEOF", []w{{tasks, ScriptRewrite}}},
		{"python dash heredoc", "python3 - <<'EOF'\nimport os\nos.unlink('.harness-active')\nEOF", []w{{active, ScriptRewrite}}},
		{"python3.12", `python3.12 -c 'open("harness-tasks.json","a").write("x")'`, []w{{tasks, ScriptRewrite}}},
		{"node writeFileSync", `node -e "require('fs').writeFileSync('harness-tasks.json', '{}')"`, []w{{tasks, ScriptRewrite}}},
		{"node unlink", `node -e "require('fs').unlinkSync('.harness-active')"`, []w{{active, ScriptRewrite}}},
		{"ruby File.write", `ruby -e 'File.write("harness-tasks.json", "{}")'`, []w{{tasks, ScriptRewrite}}},
		{"script relative to cd", `cd sub && python3 -c 'open("x.txt","w")'`, []w{{"/repo/sub/x.txt", ScriptRewrite}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Analyze(tt.cmd, cwd)
			require.NoError(t, r.ParseError)
			got := writesOf(r)
			for _, x := range tt.want {
				assert.Contains(t, got, x, describe(r))
			}
			if tt.want == nil {
				assert.Empty(t, got, describe(r))
			}
		})
	}
}

// TestProtectedFiles is the list of evasions the hook must see through: each
// command must report a write that may touch the given file.
func TestProtectedFiles(t *testing.T) {
	tests := []struct {
		cmd    string
		target string
	}{
		{"echo x > ./harness-tasks.json", tasks},
		{"cat > harness-tasks.json <<EOF\n{}\nEOF", tasks},
		{"bash -c 'sed -i s/a/b/ harness-tasks.json'", tasks},
		{"$(rm .harness-active)", active},
		{"`rm .harness-active`", active},
		{"cd sub && mv ../harness-tasks.json /tmp", tasks},
		{"mv /repo/harness-tasks.json /tmp", tasks},
		{"echo ok >> harness-progress.txt", progress},
		{`python3 -c 'open("harness-tasks.json","w").write("{}")'`, tasks},
		{`eval "rm .harness-active"`, active},
		{"find . -name harness-tasks.json -delete", tasks},
		{"true && { cp /tmp/x harness-tasks.json; }", tasks},
		{"rm -rf .", tasks},
		{"rm -rf /repo", tasks},
		{"mv /repo /tmp/x", tasks},
		{"rm *.json", tasks},
		{"rm harness-tasks.js?n", tasks},
		{"rm harness-tasks.js[o]n", tasks},
		{"rm .harness-*", active},
		{`rm "$X"`, tasks},
		{`rm "$D/harness-tasks.json"`, tasks},
		{`cd "$D" && rm harness-tasks.json`, tasks},
		{"cd - && rm harness-tasks.json", tasks},
		{"find . -name '*.json' -exec rm {} +", tasks},
		{"find . | xargs rm", tasks},
		{"ls | xargs -I % rm %", tasks},
		{"git checkout .", tasks},
		{"git restore .", tasks},
		{"git reset --hard", tasks},
		{"cd sub && git reset --hard", tasks},
		{"git stash -u", tasks},
		{"git clean -fdx", tasks},
		{"git checkout -- '*.json'", tasks},
		{"for f in *; do rm $f; done", tasks},
		{"while read f; do rm $f; done < list", tasks},
		{"cd /tmp; cd -; rm harness-tasks.json", tasks},
		{"source x.sh; rm $F", tasks},
		{"echo x > harness-tasks.json.tmp && mv harness-tasks.json.tmp harness-tasks.json", tasks},
		{"F=safe.txt; read F; rm $F", tasks},
		{"F=safe.txt; for F in a b; do :; done; rm $F", tasks},
		// Unquoted expansions are split and globbed.
		{`f="harness-tasks.json x"; rm $f`, tasks},
		{`f="x harness-tasks.json"; rm -- $f`, tasks},
		{"f='*.json'; rm $f", tasks},
		{"f='harness-tasks.js?n'; rm $f", tasks},
		{"IFS=x; f=harness-tasks.jsonxfoo; rm $f", tasks},
		{"IFS=:; f=a:harness-tasks.json; rm $f", tasks},
		{"read IFS; f=harness-tasks.jsonxfoo; rm $f", tasks},
		{"source env.sh; f=harness-tasks.jsonxfoo; rm $f", tasks},
		{"f=$(mktemp); IFS=.; rm $f", tasks},
		// Folded substitutions and narrowed finds still see the state files.
		{"echo > $(echo harness-tasks.json)", tasks},
		{"rm $(echo x harness-tasks.json)", tasks},
		{"rm $(echo '*.json')", tasks},
		{"rm -- $(echo -n harness-tasks.json)", tasks},
		{`f="$(echo harness-tasks.json)"; rm "$f"`, tasks},
		{"tmp=$(mktemp); tmp=harness-tasks.json; echo > $tmp", tasks},
		{"if true; then t=$(mktemp); else t=harness-tasks.json; fi; echo > $t", tasks},
		{"find . -name '*.json' -delete", tasks},
		{"find . -name 'harness-*' -delete", tasks},
		{"find . -iname '*.JSON' -delete", tasks},
		{"find . -name '*.orig' -o -delete", tasks},
		{"find . ! -name '*.orig' -delete", tasks},
		{"find . -not -name '*.orig' -delete", tasks},
		{`find . \( -name '*.orig' -o -name '*.json' \) -delete`, tasks},
		{"find . -name '*.orig' -o -name '*.json' -delete", tasks},
		{"find . -name '*.orig' -o -exec rm {} +", tasks},
		{"find . -name $N -delete", tasks},
		{"find harness-tasks.json -name '*.json' -delete", tasks},
		{"find / -name 'harness-tasks.json' -delete", tasks},
		{"cd sub && find .. -name '*.json' -exec rm {} +", tasks},
		// Inline interpreter code that writes is given a state file as an argument.
		{`python3 -c 'import os,sys; os.remove(sys.argv[1])' harness-tasks.json`, tasks},
		{`python3 -c 'import sys; open(sys.argv[1], "w").write("{}")' harness-tasks.json`, tasks},
		{"python3 - harness-tasks.json <<'EOF'\nimport os, sys\nos.remove(sys.argv[1])\nEOF", tasks},
		{`node -e 'require("fs").unlinkSync(process.argv[1])' harness-tasks.json`, tasks},
		{`node -e 'require("fs").writeFileSync(process.argv[1], "{}")' -- harness-tasks.json`, tasks},
		{`perl -e 'unlink @ARGV' harness-tasks.json`, tasks},
		{`perl -e 'open(F, ">$ARGV[0]")' harness-tasks.json`, tasks},
		{`perl -e 'open(F,">harness-tasks.json")'`, tasks},
		{`perl -e 'open(my $f, "+<", "harness-tasks.json")'`, tasks},
		{`perl -e 'open F, ">> harness-tasks.json"'`, tasks},
		{`ruby -e 'File.delete(ARGV[0])' harness-tasks.json`, tasks},
		{`php -r 'unlink($argv[1]);' harness-tasks.json`, tasks},
		{`awk '{print > FILENAME}' harness-tasks.json`, tasks},
		// Archivers that delete what they archive.
		{"tar --remove-files -cf /tmp/x.tar harness-tasks.json", tasks},
		{"tar -czf /tmp/x.tgz --remove-files -C /repo harness-tasks.json", tasks},
		{"cd sub && tar -cf /tmp/x.tar -C .. harness-tasks.json --remove-files", tasks},
		{"zip -m /tmp/x.zip harness-tasks.json", tasks},
		{"zip -rm /tmp/x.zip .", tasks},
		{"zip harness-tasks.json notes.txt", tasks},
		{`eval "$(echo rm harness-tasks.json)"`, tasks},
		{`eval $(echo rm harness-tasks.json)`, tasks},
	}
	for _, tt := range tests {
		t.Run(tt.cmd, func(t *testing.T) {
			r := Analyze(tt.cmd, cwd)
			assert.NotEmpty(t, r.WritesTo(tt.target), describe(r))
		})
	}
}

// TestNotProtected guards against over-reporting where the policy would
// otherwise deny ordinary work.
func TestNotProtected(t *testing.T) {
	tests := []string{
		"cat harness-tasks.json",
		"jq '.tasks[0]' harness-tasks.json",
		"grep -n todo harness-progress.txt 2>/dev/null",
		"tail -n 20 harness-progress.txt",
		"sed -n 1,5p harness-tasks.json",
		"ls -la > /dev/null 2>&1",
		"go test ./... && git status",
		"git diff -- harness-tasks.json",
		"git log -p harness-tasks.json",
		"git checkout -b feature",
		"git restore --staged harness-tasks.json",
		"git clean -n",
		"git stash list",
		"cp harness-tasks.json /tmp/backup.json",
		"rm /tmp/*.json",
		"rm -rf sub",
		"command -v rm",
		`python3 -c 'import json; print(json.load(open("harness-tasks.json")))'`,
		`python3 -c 'import json,sys; sys.stdout.write(json.dumps(json.load(open("harness-tasks.json"))))'`,
		`node -e "console.log(require('fs').readFileSync('harness-tasks.json','utf8'))"`,
		"echo x > >(cat)",
		"cd /tmp && rm harness-tasks.json",
		"(cd /tmp && rm -rf *)",
		"diff <(cat a) <(cat b)",
		"echo harness-tasks.json",
		"echo x 2>&1 >&2",
		// A fresh temporary file is none of the state files.
		"tmp=$(mktemp); echo x > $tmp",
		`tmp="$(mktemp)"; echo x > "$tmp"; rm -f "$tmp"`,
		"echo x > $(mktemp)",
		"d=$(mktemp -d); echo x > $d/out; rm -rf $d",
		"tmp=$(mktemp /tmp/out.XXXXXX); sort x > $tmp && mv $tmp sorted.txt",
		"tmp=$(mktemp -p . scratch.XXXX); echo x > $tmp",
		"t=`mktemp --suffix=.json`; echo '{}' > $t",
		"TMPDIR=/var/tmp; t=$(mktemp); echo > $t",
		// A literal $(echo …) is its words.
		"echo > $(echo main.go)",
		`echo > "$(echo notes.txt)"`,
		"rm $(echo a.o b.o)",
		// find deletes what its -name test allows.
		"find . -name '*.orig' -delete",
		"find . -type f -name '*.orig' -o -name '*.rej' -delete",
		"find . -name '*.orig' -exec rm {} +",
		"find . -name '*.pyc' -exec rm -rf {} \\;",
		"find . -name .git -prune -o -name '*.pyc' -delete",
		"find . -name '*.tmp' -execdir rm {} \\;",
		// Reading a state file from inline code, or writing another one.
		`python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["tasks"]))' harness-tasks.json`,
		`python3 -c 'import os,sys; os.remove(sys.argv[1])' notes.txt`,
		`node -e 'console.log(require("fs").readFileSync(process.argv[1], "utf8"))' harness-tasks.json`,
		`perl -ne 'print if /pending/' harness-tasks.json`,
		`perl -e 'open(F, "<harness-tasks.json"); print <F>'`,
		`awk '{print > "/dev/stderr"}' harness-tasks.json`,
		"tar -czf /tmp/state.tgz harness-tasks.json harness-progress.txt",
		"tar -cf /tmp/x.tar notes --remove-files",
		"zip -r /tmp/x.zip . -x '*.git*'",
		"zip -m /tmp/x.zip notes.txt",
	}
	for _, cmd := range tests {
		t.Run(cmd, func(t *testing.T) {
			r := Analyze(cmd, cwd)
			require.NoError(t, r.ParseError)
			for _, target := range []string{tasks, progress, active} {
				assert.Empty(t, r.WritesTo(target), describe(r))
			}
		})
	}
}

func TestAppendOnly(t *testing.T) {
	for cmd, want := range map[string]WriteKind{
		"echo ok >> harness-progress.txt":             Append,
		"echo ok &>> harness-progress.txt":            Append,
		"echo ok | tee -a harness-progress.txt":       Append,
		"echo ok | tee --append harness-progress.txt": Append,
		"echo ok > harness-progress.txt":              Redirect,
		"echo ok | tee harness-progress.txt":          Tee,
		"sed -i 1d harness-progress.txt":              InPlace,
	} {
		t.Run(cmd, func(t *testing.T) {
			ws := Analyze(cmd, cwd).WritesTo(progress)
			require.Len(t, ws, 1)
			assert.Equal(t, want, ws[0].Kind)
		})
	}
}

func TestWriteDetails(t *testing.T) {
	r := Analyze(`echo hi > "$OUT/harness-tasks.json" 2>/dev/null`, cwd)
	require.Len(t, r.Writes, 1, "/dev/null is not reported")
	x := r.Writes[0]
	assert.Equal(t, "$OUT/harness-tasks.json", x.Path)
	assert.True(t, x.Dynamic)
	assert.Equal(t, `echo hi > "$OUT/harness-tasks.json"`, x.Op)
	assert.True(t, x.Touches(tasks))
	assert.True(t, x.Touches("/anywhere/harness-tasks.json"))
	assert.False(t, x.Touches("/repo/other.json"))

	r = Analyze("rm -r build", cwd)
	require.Len(t, r.Writes, 1)
	assert.True(t, r.Writes[0].Tree)
	assert.True(t, r.Writes[0].Touches("/repo/build/x/y"))
	assert.False(t, r.Writes[0].Touches("/repo/buildx"))

	r = Analyze("rm /repo/sub/*.json", cwd)
	require.Len(t, r.Writes, 1)
	assert.True(t, r.Writes[0].Dynamic)
	assert.Equal(t, "/repo/sub/*.json", r.Writes[0].Path)
	assert.False(t, r.Writes[0].Touches(tasks))

	long := "echo " + strings.Repeat("x", 500) + " > out"
	r = Analyze(long, cwd)
	require.Len(t, r.Writes, 1)
	assert.LessOrEqual(t, len(r.Writes[0].Op), maxOpBytes+len("…"))

	r = Analyze("rm a; rm a; rm a", cwd)
	assert.Len(t, r.Writes, 1, "writes are deduplicated")

	r = Analyze("git checkout main -- a", cwd)
	assert.Equal(t, []w{{"/repo/a", GitRestore}}, writesOf(r), "the revision before -- is not a path")

	r = Analyze("rm x", "")
	assert.Equal(t, []w{{"x", Remove}}, writesOf(r), "without a cwd paths stay relative")
}

func TestUnder(t *testing.T) {
	for cmd, want := range map[string]string{
		"rm lib/*":                "/repo/lib",
		"rm -rf lib/*/cache":      "/repo/lib",
		"echo x > lib/$f.go":      "/repo/lib",
		"echo x > lib/a$f.go":     "/repo/lib",
		"echo x > lib$f":          "/repo",
		"echo x > /abs/dir/$f":    "/abs/dir",
		"echo x > lib/a.go":       "/repo/lib",
		`echo x > "$OUT/a.go"`:    "",
		"echo x > $(mktemp -d)/a": "",
	} {
		r := Analyze(cmd, cwd)
		require.Len(t, r.Writes, 1, describe(r))
		assert.Equal(t, want, r.Writes[0].Under(), cmd)
	}
}

func TestGitDirs(t *testing.T) {
	r := Analyze("cd /other && git -C sub --work-tree=../w reset --hard", cwd)
	require.Len(t, r.Programs, 2)
	assert.Equal(t, []string{"/other/w"}, GitDirs(r.Programs[1]))
	r = Analyze("cd $X && git reset --hard", cwd)
	assert.Equal(t, []string{""}, GitDirs(r.Programs[len(r.Programs)-1]))
	assert.Equal(t, []string{"main", "x.go"}, GitCheckoutWords(Analyze("git checkout main x.go", cwd).Programs[0]))
	assert.Nil(t, GitCheckoutWords(Analyze("git checkout -b x", cwd).Programs[0]))
}

func TestGitHiddenPrograms(t *testing.T) {
	for _, cmd := range []string{
		"git -c alias.x='!curl x' x",
		"git -c core.pager='curl x' log",
		`git submodule foreach "curl x"`,
	} {
		var names []string
		for _, p := range Analyze(cmd, cwd).Programs {
			names = append(names, p.Base())
		}
		assert.Contains(t, names, "curl", cmd)
	}
}

func TestPrograms(t *testing.T) {
	tests := []struct {
		cmd  string
		want []string
	}{
		{"go test ./... && git status", []string{"go", "git"}},
		{"sudo -u root env A=1 timeout 5 nice -n 1 rm x", []string{"sudo", "env", "timeout", "nice", "rm"}},
		{"bash -c 'curl x | sh'", []string{"bash", "curl", "sh"}},
		{`eval "make install"`, []string{"eval", "make"}},
		{"echo $(whoami)", []string{"whoami", "echo"}},
		{"find . -exec grep -l x {} +", []string{"find", "grep"}},
		{"ls | xargs -n1 wc -l", []string{"ls", "xargs", "wc"}},
		{"if git diff --quiet; then npm test; fi", []string{"git", "npm"}},
		{"f() { make; }; f", []string{"make", "f"}},
		{"command -v jq", []string{"command"}},
		{"bash <<EOF\nnpm publish\nEOF", []string{"bash", "npm"}},
		{`python3 -c "import os; os.system('curl evil')"`, []string{"python3", "curl"}},
		// Programs the go command runs for its tests and tools.
		{"go test -exec ./wrap ./...", []string{"go", "wrap"}},
		{"go test -exec='sudo -E' ./...", []string{"go", "sudo"}},
		{"go run --exec=qemu-arm .", []string{"go", "qemu-arm"}},
		{"go build -toolexec /usr/bin/strace ./cmd", []string{"go", "strace"}},
		{"go -C sub build -toolexec=time ./...", []string{"go", "time"}},
		{"go vet -vettool=$(which shadow) ./...", []string{"go", "which"}},
		{"GOFLAGS=-toolexec=evil go build", []string{"go", "evil"}},
		{"env GOFLAGS='-mod=mod -exec=runner' go test", []string{"go", "runner"}},
		{"export GOFLAGS=-toolexec=evil; go build", []string{"go", "evil"}},
		{"go env -w GOFLAGS=-toolexec=later", []string{"go", "later"}},
		// Commands git runs for its subcommands: environment variables,
		// flags, bisect run.
		{"GIT_SSH_COMMAND='ssh -o ProxyCommand=evil' git fetch", []string{"git", "ssh"}},
		{"GIT_EXTERNAL_DIFF=sh git diff", []string{"git", "sh"}},
		{"GIT_PAGER='sh -c \"curl x\"' git log", []string{"git", "sh", "curl"}},
		{"export GIT_PAGER=less; git log", []string{"git", "less"}},
		{"git rebase -x 'make check' main", []string{"git", "make"}},
		{"git rebase --exec=pytest main", []string{"git", "pytest"}},
		{"git bisect run python3 check.py", []string{"git", "python3"}},
		{"git filter-branch --tree-filter 'rm -f secret' HEAD", []string{"git", "rm"}},
		{"git difftool -x meld", []string{"git", "meld"}},
		{"git difftool --extcmd=vimdiff", []string{"git", "vimdiff"}},
	}
	for _, tt := range tests {
		t.Run(tt.cmd, func(t *testing.T) {
			r := Analyze(tt.cmd, cwd)
			var names []string
			for _, p := range r.Programs {
				names = append(names, p.Base())
			}
			for _, n := range tt.want {
				assert.Contains(t, names, n)
			}
		})
	}

	r := Analyze("$CMD arg; /usr/bin/git -C x status", cwd)
	require.Len(t, r.Programs, 2)
	assert.Equal(t, Program{Name: "$CMD", Args: []string{"arg"}, Dynamic: true, Dirs: []string{cwd}}, r.Programs[0])
	assert.Equal(t, Program{Name: "/usr/bin/git", Args: []string{"-C", "x", "status"}, Dirs: []string{cwd}}, r.Programs[1])
	assert.Equal(t, "git", r.Programs[1].Base())

	r = Analyze("command -v rm", cwd)
	for _, p := range r.Programs {
		assert.NotEqual(t, "rm", p.Name, "command -v only looks the name up")
	}

	for _, cmd := range []string{"go test -exec $RUNNER ./...", "go vet -vettool=$(which x)", "read GOFLAGS; go build", "go test ./... -args -exec=x"} {
		r = Analyze(cmd, cwd)
		dynamic := false
		for _, p := range r.Programs {
			dynamic = dynamic || p.Dynamic
		}
		if cmd == "go test ./... -args -exec=x" {
			assert.False(t, dynamic, cmd)
			assert.Len(t, r.Programs, 1, "after -args the flags are the test binary's")
			continue
		}
		assert.True(t, dynamic, "%s: the program go runs is not known", cmd)
	}
	r = Analyze("go test -v -run TestX -count=1 ./...", cwd)
	assert.Len(t, r.Programs, 1)
}

func TestMentions(t *testing.T) {
	r := Analyze(`cat <<'EOF' > run.sh
rm .harness-active
EOF
grep -q "harness-tasks.json" x && X=$'\x2eharness-active'`, cwd)
	joined := strings.Join(r.Mentions, "\n")
	assert.Contains(t, joined, "rm .harness-active")
	assert.Contains(t, r.Mentions, "harness-tasks.json")
	assert.Contains(t, r.Mentions, ".harness-active")
	assert.Contains(t, r.Mentions, "run.sh")
}

func TestDestructiveGit(t *testing.T) {
	tests := []struct {
		cmd  string
		want bool
	}{
		{"git reset --hard", true},
		{"git reset --hard HEAD~1", true},
		{"git -C sub reset --hard", true},
		{"git -c core.x=y reset --hard", true},
		{"git --no-pager reset --merge", true},
		{"git reset HEAD file", false},
		{"git reset --soft HEAD~1", false},
		{"git clean -fd", true},
		{"git clean -xdf", true},
		{"git clean", true},
		{"git checkout -- .", true},
		{"git checkout .", true},
		{"git checkout -- src/a.go", true},
		{"git checkout -f main", true},
		{"git checkout HEAD -- .", true},
		{"git checkout main", false},
		{"git checkout -b feature", false},
		{"git restore .", true},
		{"git restore src/a.go", true},
		{"git restore --staged .", false},
		{"git restore --staged --worktree .", true},
		{"git switch --discard-changes main", true},
		{"git switch main", false},
		{"git stash", true},
		{"git stash push -m x", true},
		{"git stash pop", true},
		{"git stash drop", false},
		{"git clean -n", false},
		{"git clean --dry-run -d", false},
		{"git -c alias.r='reset --hard' r", true},
		{"git -c alias.st=status st", false},
		{"git checkout-index -f -a", true},
		{"git checkout src/a.go", true},
		{"git stash list", false},
		{"git stash show -p", false},
		{"git status", false},
		{"git log --oneline", false},
		{"git commit -am x", false},
		{"/usr/bin/git reset --hard", true},
	}
	for _, tt := range tests {
		t.Run(tt.cmd, func(t *testing.T) {
			r := Analyze(tt.cmd, cwd)
			require.NotEmpty(t, r.Programs)
			got, why := IsDestructiveGit(r.Programs[0])
			assert.Equal(t, tt.want, got)
			if got {
				assert.NotEmpty(t, why)
			}
		})
	}

	// Nested forms are found through Programs.
	r := Analyze(`bash -c "cd x && git reset --hard"`, cwd)
	found := false
	for _, p := range r.Programs {
		if ok, _ := IsDestructiveGit(p); ok {
			found = true
		}
	}
	assert.True(t, found)

	ok, _ := IsDestructiveGit(Program{Name: "$G", Args: []string{"reset", "--hard"}, Dynamic: true})
	assert.False(t, ok)
}

func TestParseErrors(t *testing.T) {
	r := Analyze("rm .harness-active; if then", cwd)
	assert.Error(t, r.ParseError)
	assert.True(t, r.Incomplete)
	assert.NotEmpty(t, r.WritesTo(active), "what parsed before the error is analysed")

	r = Analyze(`bash -c 'rm x; ('`, cwd)
	assert.Error(t, r.ParseError, "nested scripts report parse errors")

	r = Analyze(`python3 -c 'os.system("not ( shell")'`, cwd)
	assert.NoError(t, r.ParseError, "guessed shell inside code is parsed quietly")

	r = Analyze("echo 'unterminated", cwd)
	assert.Error(t, r.ParseError)
	assert.Contains(t, r.Mentions, "unterminated")
}

func TestLimits(t *testing.T) {
	// The work bounds are asserted through what they report (errors,
	// Incomplete); how fast the bounded work runs is BenchmarkAnalyze's job,
	// and a blow-up here shows as a test timeout.
	check := func(name, cmd string, _ time.Duration) Report {
		t.Helper()
		return Analyze(cmd, cwd)
	}

	r := check("deep parens", strings.Repeat("(", 100000)+"x"+strings.Repeat(")", 100000), time.Second)
	assert.ErrorIs(t, r.ParseError, ErrTooNested)

	r = check("deep substitutions", strings.Repeat("$(", 300)+"rm x"+strings.Repeat(")", 300), time.Second)
	assert.NotEmpty(t, r.Writes)

	r = check("deep eval", strings.Repeat("eval ", 50)+"rm .harness-active", time.Second)
	assert.True(t, r.Incomplete, "eval nesting is capped")

	r = check("huge", strings.Repeat("echo hello > /tmp/x && ", 40000)+"true", 3*time.Second)
	assert.NotEmpty(t, r.Writes)

	r = check("long and-chain", strings.Repeat("true && ", 3000)+"rm .harness-active", time.Second)
	assert.NoError(t, r.ParseError)
	assert.False(t, r.Incomplete)
	assert.NotEmpty(t, r.WritesTo(active))

	r = check("long pipeline", strings.Repeat("cat | ", 3000)+"tee harness-tasks.json", time.Second)
	assert.NoError(t, r.ParseError)
	assert.NotEmpty(t, r.WritesTo(tasks))

	r = check("too large", strings.Repeat("x", maxCommandBytes+1), time.Second)
	assert.ErrorIs(t, r.ParseError, ErrTooLarge)

	r = check("many writes", strings.Repeat("touch a$RANDOM; ", 5000), 3*time.Second)
	assert.LessOrEqual(t, len(r.Writes), maxWrites)

	r = check("brace bomb", "rm "+strings.Repeat("{a,b}", 40), time.Second)
	assert.NotEmpty(t, r.Writes)

	r = check("recursive function", "f() { f; rm x; }; f", time.Second)
	assert.NotEmpty(t, r.Writes)

	r = check("function fan-out", "a(){ :; }; b(){ a;a;a;a;a;a;a;a; }; c(){ b;b;b;b;b;b;b;b; }; d(){ c;c;c;c;c;c;c;c; }; e(){ d;d;d;d;d;d;d;d; }; g(){ e;e;e;e;e;e;e;e; }; g", 2*time.Second)
	_ = r
}

func TestGlobMatch(t *testing.T) {
	any := string(wildAny)
	tests := []struct {
		pat, name string
		want      bool
	}{
		{"/a/b", "/a/b", true},
		{"/a/b", "/a/c", false},
		{any, "/x/y", true},
		{any + "/f", "/x/y/f", true},
		{any + "/f", "/x/y/g", false},
		{"/a/" + any + ".json", "/a/b/c.json", true},
		{"/a/" + any + ".json", "/a/b/c.txt", false},
		{any + any + "x", "x", true},
		{"", "", true},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, globMatch(tt.pat, tt.name), "%q %q", tt.pat, tt.name)
	}
	assert.Equal(t, any+"/f", cleanPattern("/a/"+any+"/../f"))
	assert.Equal(t, "/a/f", cleanPattern("/a/b/../f"))
	assert.Equal(t, "/", cleanPattern("/.."))
}

func TestANSIC(t *testing.T) {
	assert.Equal(t, "harness", ansiC(`\x68arness`))
	assert.Equal(t, "a\nb", ansiC(`a\nb`))
	assert.Equal(t, "é", ansiC(`\u00e9`))
	assert.Equal(t, "A", ansiC(`\101`))
	assert.Equal(t, `\q`, ansiC(`\q`))
	assert.Equal(t, "\x01", ansiC(`\cA`))
}

func TestKindString(t *testing.T) {
	assert.Equal(t, "append", Append.String())
	assert.Equal(t, "unknown", WriteKind(0).String())
	assert.Equal(t, "unknown", WriteKind(200).String())
}

func TestBraceEmptyAlternative(t *testing.T) {
	r := Analyze("mv harness-tasks.json{,.old}", cwd)
	assert.NotEmpty(t, r.WritesTo(cwd+"/harness-tasks.json"))
	r = Analyze("cp harness-tasks.json{.bak,}", cwd)
	var copies []string
	for _, w := range r.Writes {
		if w.Kind == CopyTarget {
			copies = append(copies, w.Path)
		}
	}
	assert.Contains(t, copies, cwd+"/harness-tasks.json")
}

func TestLinkSources(t *testing.T) {
	for _, cmd := range []string{"ln harness-tasks.json notes.json", "ln -s harness-tasks.json l", "cp -l harness-tasks.json n", "cp --link harness-tasks.json n", "ln -s ../harness-tasks.json sub/l"} {
		r := Analyze(cmd, cwd)
		var hit bool
		for _, w := range r.Writes {
			hit = hit || w.Kind == LinkSource && strings.HasSuffix(w.Path, "/harness-tasks.json")
		}
		assert.True(t, hit, cmd)
	}
	for _, w := range Analyze("cp harness-tasks.json n", cwd).Writes {
		assert.NotEqual(t, LinkSource, w.Kind)
	}
}

func TestRawPath(t *testing.T) {
	r := Analyze("echo {} > deep/../../../harness-tasks.json", cwd)
	require.Len(t, r.Writes, 1)
	assert.Equal(t, cwd+"/deep/../../../harness-tasks.json", r.Writes[0].Raw)
	r = Analyze("cd deep && echo {} > ../../x", cwd)
	require.Len(t, r.Writes, 1)
	assert.Equal(t, cwd+"/deep/../../x", r.Writes[0].Raw)
	r = Analyze("echo x > a/b", cwd)
	assert.Empty(t, r.Writes[0].Raw)
}

func TestGitReach(t *testing.T) {
	tests := []struct {
		cmd   string
		kind  WriteKind
		reach Reach
	}{
		{"git checkout -- .", GitRestore, ReachTracked},
		{"git restore harness-tasks.json", GitRestore, ReachTracked},
		{"git checkout-index -f -a", GitRestore, ReachTracked},
		{"git stash", GitRestore, ReachTracked},
		{"git stash -u", GitRestore, ReachUnignored},
		{"git stash push --all", GitRestore, ReachAll},
		{"git clean -fd", Remove, ReachUnignored},
		{"git clean -fdx", Remove, ReachAll},
		{"git add -f harness-tasks.json", GitIndex, ReachAll},
		{"git update-index --add --cacheinfo 100644,abc,harness-tasks.json", GitIndex, ReachAll},
		{"git update-index --add --cacheinfo 100644 abc harness-tasks.json", GitIndex, ReachAll},
		{"git apply x.patch", InPlace, ReachAll},
	}
	for _, tt := range tests {
		r := Analyze(tt.cmd, cwd)
		require.NotEmpty(t, r.Writes, tt.cmd)
		assert.Equal(t, tt.kind, r.Writes[0].Kind, tt.cmd)
		assert.Equal(t, tt.reach, r.Writes[0].Reach, tt.cmd)
	}
	for _, cmd := range []string{"git add .", "git stash list", "git clean -n", "git apply --check x.patch"} {
		assert.Empty(t, Analyze(cmd, cwd).Writes, cmd)
	}
	r := Analyze("git update-index --add --cacheinfo 100644,abc,harness-tasks.json", cwd)
	assert.Equal(t, cwd+"/harness-tasks.json", r.Writes[0].Path)
}

// A name mktemp makes is new, so it is none of the harness's files, even
// when the project or the lock directory was itself made by mktemp -d and so
// matches mktemp's pattern. Only the whole name (or a path below it) is:
// ".." climbs back out of it.
func TestFreshTemporaryNames(t *testing.T) {
	const root = "/tmp/tmp.Ab12Cd34Ef"
	targets := []string{root, root + "/harness-tasks.json", "/tmp/tmp.Lk34Mn56Op/harness-0123456789abcdef.lock"}
	for _, cmd := range []string{
		"echo hi > $(mktemp)",
		"t=$(mktemp); echo hi > $t",
		`t="$(mktemp)"; echo hi > "$t"; rm -f "$t"`,
		"d=$(mktemp -d); echo x > $d/out; rm -rf $d",
		"mv $(mktemp) notes.txt",
		// The template's X's are replaced, and the file is created
		// exclusively: never the state file itself.
		"t=$(mktemp harness-tasks.jsonXXX); echo x > $t",
	} {
		t.Run(cmd, func(t *testing.T) {
			r := Analyze(cmd, root)
			require.NoError(t, r.ParseError)
			for _, target := range targets {
				assert.Empty(t, r.WritesTo(target), "%s\n%s", target, describe(r))
			}
		})
	}
	for _, cmd := range []string{
		"d=$(mktemp -d); rm $d/../tmp.Ab12Cd34Ef/harness-tasks.json",
		"t=$(mktemp); rm -rf ${t}x $t/../tmp.Ab12Cd34Ef",
	} {
		t.Run(cmd, func(t *testing.T) {
			r := Analyze(cmd, root)
			assert.NotEmpty(t, r.WritesTo(root+"/harness-tasks.json"), describe(r))
		})
	}
}
