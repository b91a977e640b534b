package gitobj

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/harness-agent/harness/internal/git"
	"github.com/harness-agent/harness/internal/gittest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// HeadLine must print exactly what `git log -1 --format='%h %s'` prints,
// or say it cannot (and git is asked): each case is checked against git
// itself.
func TestHeadLineAgreesWithGit(t *testing.T) {
	cases := []struct {
		name   string
		script string // run in a fresh repository with one commit, "base"
		at     string // where HeadLine is asked, relative to the repository
		ok     bool   // whether HeadLine answers from the files
	}{
		{name: "loose commit", ok: true},
		{name: "a subject over several lines, blank lines before, trailing blanks",
			script: `printf '\n\n  first line  \nsecond line\t\n\nbody\n' | git commit -q --allow-empty --cleanup=verbatim -F -`, ok: true},
		{name: "an empty message", script: `git commit -q --allow-empty --allow-empty-message -m ''`, ok: true},
		{name: "packed objects and refs", script: `echo x >f && git add f && git commit -q -m "after gc" && git gc -q`, ok: true},
		{name: "packed, then a loose commit on top", script: `git gc -q && git commit -q --allow-empty -m "loose on packed"`, ok: true},
		{name: "detached HEAD", script: `git commit -q --allow-empty -m two && git checkout -q HEAD~1`, ok: true},
		{name: "a branch whose name is a path", script: `git checkout -q -b feature/x/y && git commit -q --allow-empty -m "on feature"`, ok: true},
		{name: "below the top", script: `mkdir -p a/b && touch a/b/f`, at: "a/b", ok: true},
		{name: "linked worktree", script: `git worktree add -q wt -b side && git -C wt commit -q --allow-empty -m "in the worktree"`, at: "wt", ok: true},
		{name: "a latin-1 message: git converts it", script: `printf 'caf\351\n' | git -c i18n.commitEncoding=ISO-8859-1 commit -q --allow-empty -F -`},
		{name: "core.abbrev set", script: `git config core.abbrev 12`},
		{name: "a replace ref", script: `git commit -q --allow-empty -m other && git replace HEAD HEAD~1`},
		{name: "unborn branch", script: `git checkout -q --orphan fresh`},
		{name: "an alternate", script: `git clone -q --shared . ../shared-$$ && cp -r ../shared-$$/.git/objects/info .git/objects/`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := repo(t, nil)
			if c.script != "" {
				sh(t, dir, c.script)
			}
			at := filepath.Join(dir, c.at)
			want, werr := git.Run(at, "log", "-1", "--format=%h %s")
			got, ok := HeadLine(at)
			if !c.ok {
				assert.False(t, ok, "HeadLine answered %q where git should be asked (git: %q)", got, want)
				return
			}
			require.NoError(t, werr)
			require.True(t, ok, "HeadLine did not answer; git says %q", want)
			assert.Equal(t, want, got)
		})
	}
}

// A commit stored in a pack as a delta of another is left to git.
func TestHeadLineDeltaAskedOfGit(t *testing.T) {
	dir := repo(t, nil)
	// Commits alike enough (a long shared body) for repack to store all
	// but one as deltas of it.
	sh(t, dir, `body=$(printf 'x%.0s' $(seq 3000)); for i in 1 2 3 4 5 6 7 8; do git commit -q --allow-empty -m "subject $i" -m "$body"; done && git repack -q -a -d -f --window=250 --depth=50`)
	var delta string
	for _, l := range strings.Split(sh(t, dir, "git verify-pack -v .git/objects/pack/*.idx"), "\n") {
		if f := strings.Fields(l); len(f) == 7 && f[1] == "commit" {
			delta = f[0]
			break
		}
	}
	require.NotEmpty(t, delta, "repack stored no commit as a delta")
	sh(t, dir, "git checkout -q "+delta)
	got, ok := HeadLine(dir)
	assert.False(t, ok, "answered %q for a commit stored as a delta", got)
}

// The abbreviation grows as git's does: with the count of packed objects,
// and past another object sharing its first digits.
func TestHeadLineAbbreviation(t *testing.T) {
	t.Run("many packed objects", func(t *testing.T) {
		dir := repo(t, nil)
		// 20,000 blobs through fast-import: msb(20001)+1 = 15 bits, 8 digits.
		var in strings.Builder
		for i := 0; i < 20000; i++ {
			body := fmt.Sprintf("blob %d\n", i)
			fmt.Fprintf(&in, "blob\ndata %d\n%s\n", len(body), body)
		}
		write(t, dir, map[string]string{"blobs.fi": in.String()})
		sh(t, dir, "git fast-import --quiet <blobs.fi && rm blobs.fi")
		assert.Len(t, strings.Fields(agreed(t, dir))[0], 8)
	})
	t.Run("a loose object sharing nine digits", func(t *testing.T) {
		dir := repo(t, nil)
		head := sh(t, dir, "git rev-parse HEAD")
		// A loose object's name is all git reads to abbreviate: a file
		// named like an object sharing nine digits makes git print ten.
		twin := head[:9] + strings.Repeat(string("0123456789abcdef"[(strings.IndexByte("0123456789abcdef", head[9])+1)%16]), 31)
		require.NoError(t, os.WriteFile(filepath.Join(dir, ".git", "objects", twin[:2], twin[2:]), nil, 0o444))
		assert.Len(t, strings.Fields(agreed(t, dir))[0], 10)
	})
}

// agreed is HeadLine's answer in dir, which must be git log's.
func agreed(t *testing.T, dir string) string {
	t.Helper()
	want, err := git.Run(dir, "log", "-1", "--format=%h %s")
	require.NoError(t, err)
	got, ok := HeadLine(dir)
	require.True(t, ok)
	assert.Equal(t, want, got)
	return got
}

// Outside a repository HeadLine says it cannot answer, and never panics on
// damaged files.
func TestHeadLineDamaged(t *testing.T) {
	_, ok := HeadLine(t.TempDir())
	assert.False(t, ok, "outside a repository")
	for name, script := range map[string]string{
		"HEAD garbage":             `echo 'ref: ../../etc/passwd' >.git/HEAD`,
		"ref file garbage":         `echo nothex >.git/refs/heads/$(git symbolic-ref --short HEAD)`,
		"object truncated":         `f=$(git rev-parse HEAD); p=.git/objects/$(echo $f | cut -c1-2)/$(echo $f | cut -c3-); chmod u+w $p; head -c 10 $p >$p.t; mv $p.t $p`,
		"pack index truncated":     `git gc -q && for i in .git/objects/pack/*.idx; do chmod u+w $i; head -c 1100 $i >$i.t; mv $i.t $i; done`,
		"pack truncated":           `git gc -q && for p in .git/objects/pack/*.pack; do chmod u+w $p; head -c 20 $p >$p.t; mv $p.t $p; done`,
		"packed-refs lost its ref": `git gc -q && : >.git/packed-refs`,
	} {
		t.Run(name, func(t *testing.T) {
			dir := repo(t, nil)
			sh(t, dir, script)
			got, ok := HeadLine(dir)
			assert.False(t, ok, "answered %q", got)
		})
	}
}

var (
	repo  = gittest.Repo
	write = gittest.Write
	sh    = gittest.Sh
)

// A FIFO in the place of a file HeadLine reads (the agent can put one
// there; a plain open of it waits for a writer forever): HeadLine returns
// at once, saying it cannot answer where the FIFO hides what it needs (an
// unreadable commondir is taken as none).
func TestHeadLineNeverWaits(t *testing.T) {
	for name, script := range map[string]string{
		"loose commit":             `f=$(git rev-parse HEAD); p=.git/objects/$(echo $f | cut -c1-2)/$(echo $f | cut -c3-); rm -f $p; mkfifo $p`,
		"pack":                     `git gc -q && for p in .git/objects/pack/*.pack; do rm -f $p; mkfifo $p; done`,
		"packed-refs":              `git gc -q && rm -f .git/packed-refs && mkfifo .git/packed-refs`,
		"pack index":               `git gc -q && for i in .git/objects/pack/*.idx; do rm -f $i; mkfifo $i; done`,
		"the ref":                  `b=$(git symbolic-ref --short HEAD); rm -f .git/refs/heads/$b; mkfifo .git/refs/heads/$b`,
		"HEAD":                     `rm -f .git/HEAD; mkfifo .git/HEAD`,
		"the config":               `rm -f .git/config; mkfifo .git/config`,
		"the gitdir":               `mv .git ../real.git; mkfifo .git`,
		"a loose object directory": `git gc -q && f=$(git rev-parse HEAD) && rm -rf .git/objects/$(echo $f | cut -c1-2) && mkfifo .git/objects/$(echo $f | cut -c1-2)`,
		"commondir":                `mkfifo .git/commondir`,
	} {
		t.Run(name, func(t *testing.T) {
			dir := repo(t, nil)
			sh(t, dir, script)
			done := make(chan bool, 1)
			go func() {
				_, ok := HeadLine(dir)
				done <- ok
			}()
			select {
			case ok := <-done:
				assert.Equal(t, name == "commondir", ok)
			case <-time.After(10 * time.Second):
				t.Fatalf("HeadLine did not return")
			}
		})
	}
}
