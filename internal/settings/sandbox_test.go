package settings

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

var wantSandbox = Sandbox{DenyWrite: []string{"/h/.local/state/harness/records", "/h/.claude/harness/bin"}, AllowWrite: []string{"/tmp"}}

// TestSandboxRoundTrip: EnableSandbox sets what it must, keeps the user's
// bytes, changes nothing the second time, and DisableSandbox gives the
// file back byte for byte (a file it created goes with the hooks).
func TestSandboxRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name, before string
		// changes the first EnableSandbox makes
		changes int
		// after, the values the sandbox settings must have
		denyWrite []string
	}{
		{name: "missing file", before: "", changes: 6},
		{name: "empty object", before: "{}\n", changes: 6},
		{name: "user settings, tabs, CRLF", before: "{\r\n\t\"model\": \"opus\",\r\n\t\"hooks\": {}\r\n}\r\n", changes: 6},
		{
			name:    "the user's own sandbox block, partly ours already",
			before:  "{\n  \"sandbox\": {\n    \"enabled\": true,\n    \"filesystem\": {\n      \"denyWrite\": [\"/secret\", \"/h/.claude/harness/bin\"]\n    },\n    \"network\": {\"allowedDomains\": [\"x.test\"]}\n  }\n}\n",
			changes: 4, denyWrite: []string{"/secret", "/h/.claude/harness/bin", "/h/.local/state/harness/records"},
		},
		{
			name:    "a fallback the user allowed is replaced, and put back",
			before:  "{\n  \"sandbox\": {\"enabled\": false, \"allowUnsandboxedCommands\": true}\n}\n",
			changes: 6,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "settings.json")
			if tc.before != "" {
				require.NoError(t, os.WriteFile(path, []byte(tc.before), 0o644))
			}
			res, err := EnableSandbox(path, wantSandbox, false)
			require.NoError(t, err)
			assert.Len(t, res.Changes, tc.changes, "%v", res.Changes)
			doc, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.True(t, gjson.ValidBytes(doc), "%s", doc)
			st := ReadSandbox(doc)
			assert.True(t, st.Enabled)
			assert.True(t, st.NoFallback)
			assert.True(t, st.Required)
			want := tc.denyWrite
			if want == nil {
				want = wantSandbox.DenyWrite
			}
			assert.Equal(t, want, st.DenyWrite)
			assert.Equal(t, []string{"/tmp"}, st.AllowWrite)
			if tc.before != "" {
				assert.Equal(t, gjson.Get(tc.before, "model").Raw, gjson.GetBytes(doc, "model").Raw)
				assert.Equal(t, gjson.Get(tc.before, "sandbox.network").Raw, gjson.GetBytes(doc, "sandbox.network").Raw)
			}

			again, err := EnableSandbox(path, wantSandbox, false)
			require.NoError(t, err)
			assert.Empty(t, again.Changes, "a second install changes nothing")

			res, err = DisableSandbox(path, false)
			require.NoError(t, err)
			assert.NotEmpty(t, res.Changes)
			after, err := os.ReadFile(path)
			switch tc.before {
			case "":
				// A file created for the sandbox alone is {} again: the
				// hooks' uninstall deletes such a file.
				require.NoError(t, err)
				assert.Equal(t, "{}\n", string(after))
			default:
				require.NoError(t, err)
				assert.Equal(t, tc.before, string(after), "uninstall gives the user's bytes back")
			}
			assert.NoFileExists(t, path+SandboxSuffix)
		})
	}
}

// TestSandboxUserChangeKept: a setting the user changed after the install is
// theirs, and the uninstall leaves it.
func TestSandboxUserChangeKept(t *testing.T) {
	path := filepath.Join(t.TempDir(), "settings.json")
	require.NoError(t, os.WriteFile(path, []byte("{}\n"), 0o644))
	_, err := EnableSandbox(path, wantSandbox, false)
	require.NoError(t, err)
	doc, _ := os.ReadFile(path)
	doc, err = sjson.SetRawBytes(doc, "sandbox.failIfUnavailable", []byte("false"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, doc, 0o644))
	_, err = DisableSandbox(path, false)
	require.NoError(t, err)
	after, _ := os.ReadFile(path)
	assert.Equal(t, "false", gjson.GetBytes(after, "sandbox.failIfUnavailable").Raw)
	assert.False(t, gjson.GetBytes(after, "sandbox.enabled").Exists())
	assert.False(t, gjson.GetBytes(after, "sandbox.filesystem").Exists())
}

// TestSandboxWithHooks: with the hooks, in a file the harness created, the
// whole install goes at uninstall: the file is deleted, no backup left.
func TestSandboxWithHooks(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".claude", "settings.json")
	_, err := Install(path, "/opt/harness/bin", false)
	require.NoError(t, err)
	_, err = EnableSandbox(path, wantSandbox, false)
	require.NoError(t, err)
	assert.NoFileExists(t, path+BackupSuffix)
	_, err = DisableSandbox(path, false)
	require.NoError(t, err)
	res, err := Uninstall(path, false)
	require.NoError(t, err)
	assert.True(t, res.Removed, "the file the harness created goes")
	assert.NoFileExists(t, path)
	assert.NoFileExists(t, path+BackupSuffix)
}

// TestSandboxRefusesShapes: a sandbox setting of another shape is left as
// it is, with the field named.
func TestSandboxRefusesShapes(t *testing.T) {
	for _, doc := range []string{
		`{"sandbox": true}`,
		`{"sandbox": {"filesystem": []}}`,
		`{"sandbox": {"filesystem": {"denyWrite": "/x"}}}`,
	} {
		path := filepath.Join(t.TempDir(), "settings.json")
		require.NoError(t, os.WriteFile(path, []byte(doc), 0o644))
		_, err := EnableSandbox(path, wantSandbox, false)
		require.Error(t, err, doc)
		assert.Contains(t, err.Error(), "sandbox")
		after, _ := os.ReadFile(path)
		assert.Equal(t, doc, string(after))
	}
}

// TestSandboxDryRun writes nothing.
func TestSandboxDryRun(t *testing.T) {
	path := filepath.Join(t.TempDir(), "settings.json")
	require.NoError(t, os.WriteFile(path, []byte("{}\n"), 0o644))
	res, err := EnableSandbox(path, wantSandbox, true)
	require.NoError(t, err)
	assert.Len(t, res.Changes, 6)
	after, _ := os.ReadFile(path)
	assert.Equal(t, "{}\n", string(after))
	assert.NoFileExists(t, path+SandboxSuffix)
}
