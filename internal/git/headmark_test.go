package git

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
)

// HeadMark changes whenever HEAD moves, and only then: in the main work
// tree and in a linked one, with the branch's ref loose or packed.
func TestHeadMarkMovesWithHead(t *testing.T) {
	for _, c := range []struct{ name, setup, at string }{
		{name: "loose ref"},
		{name: "packed ref", setup: "git pack-refs --all"},
		{name: "linked worktree", setup: "git worktree add -q wt -b side", at: "wt"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := repo(t, nil)
			if c.setup != "" {
				sh(t, dir, c.setup)
			}
			at := filepath.Join(dir, c.at)
			before := HeadMark(at)
			assert.NotEmpty(t, before)
			assert.Equal(t, before, HeadMark(at), "HEAD did not move")
			sh(t, at, "git commit -q --allow-empty -m next")
			moved := HeadMark(at)
			assert.NotEqual(t, before, moved, "a commit moves HEAD")
			sh(t, at, "git checkout -q HEAD~1")
			assert.NotEqual(t, moved, HeadMark(at), "a checkout moves HEAD")
		})
	}
	assert.Empty(t, HeadMark(t.TempDir()), "outside a repository")
}
