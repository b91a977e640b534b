package report

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// chromium finds Debian's headless-capable Chromium, or skips the test;
// HARNESS_E2E_REQUIRED=1 (CI) turns the skip into a failure. The quick lane
// (-short) skips it.
func chromium(t *testing.T) string {
	if testing.Short() {
		t.Skip("starts a real browser; skipped with -short")
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("HARNESS_E2E_REQUIRED") == "1" {
		t.Fatal("chromium is not installed and HARNESS_E2E_REQUIRED=1 (apt-get install -y chromium)")
	}
	t.Skip("chromium is not installed: the page is not checked in a real browser (apt-get install -y chromium)")
	return ""
}

// runChromium runs headless Chromium on the page with one of its outputs
// (--dump-dom, or --screenshot=FILE).
func runChromium(t *testing.T, bin, page string, mode ...string) []byte {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + t.TempDir(), "--window-size=1400,1000"}, mode...)
	args = append(args, "file://"+page)
	var out, errb bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	require.NoError(t, cmd.Run(), errb.String())
	return out.Bytes()
}

var resultAttrs = regexp.MustCompile(`<div id="report-result" hidden="" data-nodes="(\d+)" data-rows="(\d+)" data-ok="1">`)

// TestPageInChromium opens the generated page in a real browser: its script
// ran to the end without an error and drew one graph node and one table row
// per task. SCREENSHOT_DIR=dir keeps the screenshots.
func TestPageInChromium(t *testing.T) {
	bin := chromium(t)
	for _, n := range []int{10, 1000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			var logBuf bytes.Buffer
			generatedLog(&logBuf, n, 200<<10)
			tl, err := ReadLog(&logBuf)
			require.NoError(t, err)
			var pageBuf bytes.Buffer
			require.NoError(t, Write(&pageBuf, Build(generated(n), tl, time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)), Options{}))
			page := filepath.Join(t.TempDir(), "report.html")
			require.NoError(t, os.WriteFile(page, pageBuf.Bytes(), 0o644))
			dom := runChromium(t, bin, page, "--dump-dom")
			m := resultAttrs.FindSubmatch(dom)
			require.NotNil(t, m, "the page's script did not finish (a script error): no result in the DOM")
			assert.Equal(t, fmt.Sprint(n), string(m[1]), "graph nodes")
			assert.Equal(t, fmt.Sprint(n), string(m[2]), "table rows")
			if dir := os.Getenv("SCREENSHOT_DIR"); dir != "" {
				shot, err := filepath.Abs(filepath.Join(dir, fmt.Sprintf("report-%d.png", n)))
				require.NoError(t, err)
				runChromium(t, bin, page, "--screenshot="+shot, "--hide-scrollbars")
				assert.FileExists(t, shot)
			}
		})
	}
}
