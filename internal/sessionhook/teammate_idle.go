package sessionhook

import (
	"fmt"

	"github.com/harness-agent/harness/internal/hook"
	"github.com/harness-agent/harness/internal/statecache"
)

// TeammateIdle keeps a teammate working (exit 2, the reason on stderr) while
// it owns in-progress work or eligible work remains. Like Stop it has a
// safety valve: after a few refusals without progress the teammate may idle.
func TeammateIdle(p hook.Payload) hook.Decision {
	c, ok := active(p)
	if !ok {
		return hook.Decision{}
	}
	sum, err := statecache.Load(c.Root)
	if err != nil {
		return hook.Decision{}
	}
	rt := ReadRuntime(c.Record(), c.session)
	if stayOut(c, rt, sum.Concurrent) {
		return hook.Decision{}
	}
	name := p.Str("teammate_name")
	var reason string
	for _, cl := range sum.InProgress {
		if cl.ClaimedBy != "" && owns(true, cl.ClaimedBy, name, c.workerID) {
			reason = fmt.Sprintf("HARNESS: %s is in progress and yours: finish it, then run `%s`.", describe(cl.ID, cl.Title), validateCmd(cl.ID))
			break
		}
	}
	if reason == "" && sum.Next != nil {
		// The step as Stop words it: a claim, or first a check where the
		// task has none (nextStep).
		reason = "HARNESS: eligible work remains: " + nextStep(upNext(sum), nil) + "."
	}
	if reason == "" {
		if rt != nil && rt.Idle[name] != nil {
			delete(rt.Idle, name) // the teammate may idle: the chain of refusals is over
			rt.save(c.Record())
		}
		return hook.Decision{}
	}
	if rt == nil {
		rt = &Runtime{SessionID: c.session, Session: sum.SessionCount, Worker: c.workerID, LogOffset: -1}
	}
	if rt.Idle == nil {
		rt.Idle = map[string]*Valve{}
	}
	v := rt.Idle[name]
	if v == nil {
		v = &Valve{}
		rt.Idle[name] = v
	}
	limit := ValveLimit()
	open := v.Block(sum.Fingerprint, limit)
	rt.save(c.Record())
	if open {
		logWarn(c.Root, rt.Session, c.now, "teammate %q allowed to idle after %d refusals without progress (%s unchanged); check the next task with `harness status`", name, limit, sum.Fingerprint)
		return hook.Decision{}
	}
	return hook.Decision{Kind: hook.Refuse, Reason: reason}
}
