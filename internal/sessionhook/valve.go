package sessionhook

import (
	"os"
	"strconv"
)

// maxValve is the most consecutive blocks without progress the harness makes
// before it lets a stop through. Claude Code overrides a Stop hook itself
// after 8 consecutive blocks (CLAUDE_CODE_STOP_HOOK_BLOCK_CAP) with a
// generic message; the harness's valve opens well before, and says why.
const maxValve = 5

// defaultBlockCap is Claude Code's own cap when CLAUDE_CODE_STOP_HOOK_BLOCK_CAP
// is unset.
const defaultBlockCap = 8

// ValveLimit returns how many consecutive blocks without progress a hook
// makes before the valve opens: 5, lower with HARNESS_STOP_VALVE, and always
// at least two below Claude Code's block cap when CLAUDE_CODE_STOP_HOOK_BLOCK_CAP
// sets it lower, so the harness's valve (with its explanation) opens first.
// Never below 1.
func ValveLimit() int {
	limit := maxValve
	if n, err := strconv.Atoi(os.Getenv("HARNESS_STOP_VALVE")); err == nil && n >= 1 && n < limit {
		limit = n
	}
	if c := blockCap(); c > 0 && c-2 < limit {
		limit = max(c-2, 1)
	}
	return limit
}

// blockCap is Claude Code's consecutive Stop block cap (0: none).
func blockCap() int {
	if n, err := strconv.Atoi(os.Getenv("CLAUDE_CODE_STOP_HOOK_BLOCK_CAP")); err == nil {
		return n
	}
	return defaultBlockCap
}
