package sessionhook

import (
	"fmt"

	"github.com/harness-agent/harness/internal/hook"
	"github.com/harness-agent/harness/internal/statecache"
)

// SubagentStop keeps a subagent working while it still owns in-progress
// work: in exclusive mode any task in progress, in concurrent mode one
// claimed under HARNESS_WORKER_ID, the payload's agent_id or teammate_name. A
// stop right after a block (stop_hook_active) is always allowed.
func SubagentStop(p hook.Payload) hook.Decision {
	c, ok := active(p)
	if !ok || p.Bool("stop_hook_active") {
		return hook.Decision{}
	}
	sum, err := statecache.Load(c.Root)
	if err != nil {
		return hook.Decision{} // the main session's Stop reports an unreadable state
	}
	if len(sum.InProgress) == 0 || stayOut(c, ReadRuntime(c.Record(), c.session), sum.Concurrent) {
		return hook.Decision{}
	}
	ids := []string{c.workerID, p.Str("agent_id"), p.Str("teammate_name")}
	if sum.Concurrent && ids[0] == "" && ids[1] == "" && ids[2] == "" {
		return hook.Decision{Kind: hook.Block, Reason: "HARNESS: concurrent mode with work in progress, and this subagent has no worker identity (no HARNESS_WORKER_ID, agent_id or teammate_name), so the harness cannot tell whether that work is yours.\n" +
			"If you claimed a task, finish it and run `harness validate <id>`; give every worker a HARNESS_WORKER_ID. If you claimed nothing, you may stop now."}
	}
	for _, cl := range sum.InProgress {
		if owns(sum.Concurrent, cl.ClaimedBy, ids...) {
			return hook.Decision{Kind: hook.Block, Reason: fmt.Sprintf(
				"HARNESS: %s is still in progress. Do not stop with it half done: finish the work, then run `%s` (it records the completion, or the failure and the rollback).",
				describe(cl.ID, cl.Title), validateCmd(cl.ID))}
		}
	}
	return hook.Decision{}
}
