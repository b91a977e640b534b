package sessionhook

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestExportPath(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "it's bin")
	require.NoError(t, os.MkdirAll(bin, 0o755))
	envFile := filepath.Join(t.TempDir(), "env.sh")

	exportPath(envFile, bin)
	_, err := os.Stat(envFile)
	assert.True(t, os.IsNotExist(err), "nothing to export without a harness binary beside the hook")

	require.NoError(t, os.WriteFile(filepath.Join(bin, "harness"), []byte("#!/bin/sh\necho from-harness\n"), 0o755))
	exportPath(envFile, bin)
	exportPath(envFile, bin)
	data, err := os.ReadFile(envFile)
	require.NoError(t, err)
	assert.Equal(t, 1, countLines(string(data)), "exported once")

	out, err := exec.Command("sh", "-c", ". "+envFile+" && harness").Output()
	require.NoError(t, err)
	assert.Equal(t, "from-harness\n", string(out))

	exportPath("", bin) // no env file: nothing happens, nothing breaks
}

func countLines(s string) int {
	n := 0
	for _, c := range s {
		if c == '\n' {
			n++
		}
	}
	return n
}
