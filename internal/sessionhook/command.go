package sessionhook

import (
	"fmt"
	"strings"
	"time"

	"github.com/harness-agent/harness/internal/validation"
)

// verdict says how a command went, in one line: "PASS (0.3s)",
// "FAIL (exit 1, 0.4s): --- FAIL: TestX".
func verdict(r validation.Result) string {
	took := r.Took.Round(time.Millisecond)
	if r.Took >= time.Second {
		took = r.Took.Round(100 * time.Millisecond)
	}
	v := fmt.Sprintf("%s (%s)", r.Outcome, took)
	if r.Outcome == validation.Fail && r.ExitCode >= 0 {
		v = fmt.Sprintf("%s (exit %d, %s)", r.Outcome, r.ExitCode, took)
	}
	if r.Outcome != validation.Pass && strings.TrimSpace(r.FirstLine) != "" {
		v += ": " + clip(r.FirstLine, 200)
	}
	return v
}
