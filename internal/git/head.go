package git

import (
	"bufio"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/harness-agent/harness/internal/safefile"
)

// Repo is where a work tree's repository keeps its files.
type Repo struct {
	GitDir string // the work tree's own (a linked worktree's, under the main one's .git)
	Common string // where objects and shared refs live
}

// Plain returns the repository of the work tree holding dir when its files
// alone say what git would: none of git's environment variables that move
// or add to it is set, and no graft, replace ref or reftable changes what
// HEAD names. ok is false otherwise, and outside a repository.
func Plain(dir string) (r Repo, ok bool) {
	for _, v := range []string{"GIT_DIR", "GIT_WORK_TREE", "GIT_CEILING_DIRECTORIES", "GIT_OBJECT_DIRECTORY",
		"GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_CONFIG_GLOBAL",
		"GIT_CONFIG_SYSTEM", "GIT_REPLACE_REF_BASE", "GIT_COMMON_DIR", "GIT_INDEX_FILE"} {
		if os.Getenv(v) != "" {
			return r, false
		}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return r, false
	}
	r.GitDir, r.Common = dirs(abs)
	if r.GitDir == "" || plainOdd(r.Common) {
		return r, false
	}
	return r, true
}

// Head is the id of the commit HEAD names, read from the files; ok is
// false for an unborn branch or anything unexpected.
func (r Repo) Head() (oid [20]byte, ok bool) { return resolveHead(r.GitDir, r.Common) }

// HeadOid is Head in hex.
func (r Repo) HeadOid() (string, bool) {
	oid, ok := r.Head()
	if !ok {
		return "", false
	}
	return hex.EncodeToString(oid[:]), true
}

// ConfigFiles are the configuration files git reads for this repository,
// in its order (system, global, repository); the ones that do not exist
// included.
func (r Repo) ConfigFiles() []string {
	var files []string
	if os.Getenv("GIT_CONFIG_NOSYSTEM") == "" {
		files = append(files, "/etc/gitconfig")
	}
	if xdg := UserDir(); xdg != "" {
		files = append(files, filepath.Join(xdg, "config"))
	}
	if home, _ := os.UserHomeDir(); home != "" {
		files = append(files, filepath.Join(home, ".gitconfig"))
	}
	return append(files, filepath.Join(r.Common, "config"), filepath.Join(r.Common, "config.worktree"))
}

// UserDir is git's directory of the user's own files under
// XDG_CONFIG_HOME (~/.config/git: config, ignore, attributes); "" when
// neither it nor a home is set.
func UserDir() string {
	if x := os.Getenv("XDG_CONFIG_HOME"); x != "" {
		return filepath.Join(x, "git")
	}
	if home, _ := os.UserHomeDir(); home != "" {
		return filepath.Join(home, ".config", "git")
	}
	return ""
}

// ConfigMentions reports whether any of the repository's configuration
// files mentions one of words (compared without case), or cannot be read:
// a setting the caller's answer does not follow may then be there.
func (r Repo) ConfigMentions(words ...string) bool {
	for _, f := range r.ConfigFiles() {
		data, err := safefile.ReadFile(f, safefile.Small)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return true
		}
		low := strings.ToLower(string(data))
		for _, w := range words {
			if strings.Contains(low, w) {
				return true
			}
		}
	}
	return false
}

// dirs returns the repository directory of the work tree holding abs (for
// a linked worktree, its own directory under the main one's .git) and the
// common directory (where objects and shared refs live); "" outside a
// repository.
func dirs(abs string) (gitDir, common string) {
	gitDir, file := gitEntry(abs)
	if gitDir == "" {
		return "", ""
	}
	if file {
		// A linked worktree or submodule: "gitdir: <path>".
		data, err := safefile.ReadFile(gitDir, safefile.Small)
		if err != nil {
			return "", ""
		}
		p := strings.TrimSpace(strings.TrimPrefix(string(data), "gitdir:"))
		if !filepath.IsAbs(p) {
			p = filepath.Join(filepath.Dir(gitDir), p)
		}
		gitDir = p
	}
	common = gitDir
	if data, err := safefile.ReadFile(filepath.Join(gitDir, "commondir"), safefile.Small); err == nil {
		if p := strings.TrimSpace(string(data)); filepath.IsAbs(p) {
			common = p
		} else {
			common = filepath.Join(gitDir, p)
		}
	}
	return gitDir, common
}

// plainOdd reports whether the repository has what makes `git log` show
// another commit than the files say (grafts, replace refs) or stores refs
// in a reftable.
func plainOdd(common string) bool {
	for _, p := range []string{"info/grafts", "reftable", "refs/replace"} {
		if _, err := os.Lstat(filepath.Join(common, p)); err == nil {
			return true
		}
	}
	return false
}

// resolveHead follows HEAD to the commit it names, through loose refs and
// packed-refs; ok is false for an unborn branch or anything unexpected.
func resolveHead(gitDir, common string) (oid [20]byte, ok bool) {
	name := "HEAD"
	for depth := 0; depth < 5; depth++ {
		path, shared := refFile(gitDir, common, name)
		data, err := safefile.ReadFile(path, safefile.Small)
		if errors.Is(err, os.ErrNotExist) && shared {
			return packedRef(common, name)
		}
		if err != nil {
			return oid, false
		}
		v := strings.TrimSpace(string(data))
		if target, sym := strings.CutPrefix(v, "ref: "); sym {
			if strings.Contains(target, "..") {
				return oid, false
			}
			name = strings.TrimSpace(target)
			continue
		}
		return parseOid(v)
	}
	return oid, false
}

// refFile is where the loose ref name lives: HEAD and the per-worktree
// refs in the work tree's own repository directory, every other in the
// common one (shared: packed-refs there may hold it instead).
func refFile(gitDir, common, name string) (path string, shared bool) {
	if name == "HEAD" || !strings.HasPrefix(name, "refs/") || strings.HasPrefix(name, "refs/bisect/") ||
		strings.HasPrefix(name, "refs/worktree/") || strings.HasPrefix(name, "refs/rewritten/") {
		return filepath.Join(gitDir, filepath.FromSlash(name)), false
	}
	return filepath.Join(common, filepath.FromSlash(name)), true
}

// packedRef looks name up in packed-refs.
func packedRef(common, name string) (oid [20]byte, ok bool) {
	f, err := safefile.Open(filepath.Join(common, "packed-refs"))
	if err != nil {
		return oid, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if len(line) > 41 && line[40] == ' ' && line[41:] == name {
			return parseOid(line[:40])
		}
	}
	return oid, false
}

func parseOid(s string) (oid [20]byte, ok bool) {
	if len(s) != 40 {
		return oid, false
	}
	if _, err := hex.Decode(oid[:], []byte(s)); err != nil {
		return oid, false
	}
	return oid, true
}
