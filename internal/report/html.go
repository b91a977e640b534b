package report

import (
	"fmt"
	"html"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/harness-agent/harness/internal/graph"
	"github.com/harness-agent/harness/internal/schedule"
)

var fill = map[string][2]string{
	graph.Completed:  {"#d3f0dc", "#2e8b57"},
	graph.InProgress: {"#cfe2ff", "#1f5fbf"},
	graph.Eligible:   {"#fff3bf", "#b38f00"},
	graph.Waiting:    {"#eeeeee", "#888888"},
	graph.Retryable:  {"#ffe0c2", "#d9730d"},
	graph.Failed:     {"#ffd6d6", "#c0392b"},
	graph.Blocked:    {"#e8dcf5", "#7d4fb3"},
}

var classOrder = []string{graph.Completed, graph.InProgress, graph.Eligible, graph.Waiting, graph.Retryable, graph.Failed, graph.Blocked}

// Options change how the page behaves.
type Options struct {
	RefreshSeconds int // > 0: the page reloads itself (the --serve view)
}

// Write renders the page: one file, no external assets, no network.
func Write(w io.Writer, d *Data, o Options) error {
	var b strings.Builder
	b.WriteString("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>harness report</title>\n")
	if o.RefreshSeconds > 0 {
		fmt.Fprintf(&b, "<meta http-equiv=\"refresh\" content=\"%d\">\n", o.RefreshSeconds)
	}
	b.WriteString(style)
	b.WriteString("</head><body>\n<h1>harness report</h1>\n")
	h := d.Headline
	since := "no progress logged"
	if h.SinceProgress >= 0 {
		since = h.SinceProgress.Round(time.Second).String() + " since the last progress"
	}
	maxS := "no limit"
	if h.MaxSess > 0 {
		maxS = fmt.Sprint(h.MaxSess)
	}
	// The mean is the log's: tasks completed without an attempt it
	// recorded (a plan imported with items done) have no time in it.
	mean := "<b>—</b> mean time per task (no attempt in the log completed one)"
	if h.Timed > 0 {
		mean = "<b>" + h.MeanTask.Round(time.Second).String() + "</b> mean time per task"
	}
	fmt.Fprintf(&b, "<div class=\"head\"><span><b>%d/%d</b> done</span><span><b>%.0f%%</b> success per attempt (%d %s)</span><span>%s</span><span><b>%d</b> of %s sessions</span><span>%s</span><span>generated %s</span></div>\n",
		h.Done, h.Total, 100*h.SuccessPerAttempt, h.AttemptsTotal, map[bool]string{true: "attempt", false: "attempts"}[h.AttemptsTotal == 1], mean, h.Sessions, maxS, since, d.Now.UTC().Format(time.RFC3339))
	if len(h.Budget) > 0 {
		b.WriteString("<div class=\"head\">")
		for _, l := range h.Budget {
			warn := ""
			if l.Over() {
				warn = " style=\"color:#d00000\""
			}
			fmt.Fprintf(&b, "<span%s><b>%d%%</b> of %s (%d of %d)</span>", warn, l.Percent(), html.EscapeString(l.Name), l.Used, l.Limit)
		}
		b.WriteString("</div>\n")
	}
	if len(d.Workers) > 0 {
		b.WriteString("<h2>Workers</h2>\n<pre class=\"workers\">")
		b.WriteString(html.EscapeString(strings.Join(d.Workers, "\n")))
		b.WriteString("</pre>\n")
	}
	b.WriteString("<div class=\"legend\">")
	for _, c := range classOrder {
		fmt.Fprintf(&b, "<span><i style=\"background:%s;border-color:%s\"></i>%s</span>", fill[c][0], fill[c][1], c)
	}
	b.WriteString("<span><i style=\"border:3px solid #d00000\"></i>critical path</span>")
	if schedule.CountUnchecked(d.State.Tasks) > 0 {
		b.WriteString("<span><i style=\"border:2px dashed #888\"></i>no validation command</span>")
	}
	b.WriteString("</div>\n")
	writeGraph(&b, d)
	writeTimeline(&b, d)
	writeTable(&b, d)
	b.WriteString(script)
	b.WriteString("</body></html>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func writeGraph(b *strings.Builder, d *Data) {
	g, l := d.Graph, d.Layout
	idx := make(map[string]int, len(g.Nodes))
	for i, n := range g.Nodes {
		idx[n.ID] = i
	}
	// A task not done without a validation command, which no session can
	// claim: its box is dashed, and its tooltip says why.
	noCheck := map[string]bool{}
	for i := range d.State.Tasks {
		if t := &d.State.Tasks[i]; schedule.Unchecked(t) {
			noCheck[t.ID] = true
		}
	}
	b.WriteString("<h2>Dependency graph</h2>\n<div class=\"graph\"><aside id=\"panel\">Select a task.</aside><div class=\"scroll\">")
	fmt.Fprintf(b, "<svg id=\"graph\" width=\"%.0f\" height=\"%.0f\">\n", l.Width, l.Height)
	b.WriteString("<defs><marker id=\"arr\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"6\" markerHeight=\"6\" orient=\"auto\"><path d=\"M0,0L10,5L0,10z\" fill=\"#999\"/></marker></defs>\n")
	for _, e := range g.Edges {
		a, c := idx[e.From], idx[e.To]
		x1, y1 := l.X[a]+l.NodeW/2, l.Y[a]
		x2, y2 := l.X[c]-l.NodeW/2, l.Y[c]
		cls := "edge"
		if e.Critical {
			cls = "edge crit"
		}
		mx := (x1 + x2) / 2
		fmt.Fprintf(b, "<path class=\"%s\" d=\"M%.0f,%.0fC%.0f,%.0f %.0f,%.0f %.0f,%.0f\" marker-end=\"url(#arr)\"/>\n", cls, x1, y1, mx, y1, mx, y2, x2, y2)
	}
	for i, n := range g.Nodes {
		c := fill[n.Class]
		cls := "node"
		if n.Critical {
			cls = "node crit"
		}
		tip := n.ID + ": " + n.Title + " — " + n.Class
		if n.Worker != "" {
			tip += " (" + n.Worker + ")"
		}
		dash := ""
		if noCheck[n.ID] {
			tip += ", no validation command: no session can claim it"
			dash = ` stroke-dasharray="4 3"`
		}
		if n.Error != "" {
			tip += "\n" + n.Error
		}
		fmt.Fprintf(b, "<g class=\"%s\" data-id=\"%s\" data-class=\"%s\" data-error=\"%s\"><title>%s</title><rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" rx=\"4\" fill=\"%s\" stroke=\"%s\"%s/>",
			cls, html.EscapeString(n.ID), n.Class, html.EscapeString(n.Error), html.EscapeString(tip), l.X[i]-l.NodeW/2, l.Y[i]-l.NodeH/2, l.NodeW, l.NodeH, c[0], c[1], dash)
		if !l.Compact {
			// The id on one line, the title on the next, each clipped to
			// the box (the whole title is the tooltip and the side panel's).
			fmt.Fprintf(b, "<text x=\"%.0f\" y=\"%.0f\"><tspan class=\"nid\">%s</tspan><tspan x=\"%.0f\" dy=\"14\">%s</tspan></text>",
				l.X[i], l.Y[i]-3, html.EscapeString(clipRunes(n.ID, labelRunes)), l.X[i], html.EscapeString(clipRunes(n.Title, labelRunes)))
		}
		b.WriteString("</g>\n")
	}
	b.WriteString("</svg></div></div>\n")
}

// labelRunes is how many characters of a line fit a node's box.
const labelRunes = 30

// clipRunes shortens s to n characters with an ellipsis.
func clipRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// minBar is the narrowest an attempt is drawn: one under a second is still
// seen (its tooltip has its real length).
const minBar = 6.0

func writeTimeline(b *strings.Builder, d *Data) {
	tl := d.Timeline
	b.WriteString("<h2>Timeline</h2>\n")
	if len(tl.Sessions) == 0 {
		b.WriteString("<p>The progress log has no entries yet.</p>\n")
		return
	}
	t0, t1 := tl.Sessions[0].Start, tl.Last
	for _, s := range tl.Sessions {
		if s.End.After(t1) {
			t1 = s.End
		}
	}
	span := t1.Sub(t0).Seconds()
	if span <= 0 {
		span = 1
	}
	// left is the gutter where each row is named by its task.
	const width, left = 1000.0, 80.0
	xOf := func(t time.Time) float64 { return left + width*t.Sub(t0).Seconds()/span }
	// One row per task that has attempts, capped so a huge job stays readable.
	rows := map[string]int{}
	var order []string
	for _, a := range tl.Attempts {
		if _, ok := rows[a.TaskID]; !ok {
			rows[a.TaskID] = len(order)
			order = append(order, a.TaskID)
		}
	}
	rowH := 12.0
	if len(order) > 100 {
		rowH = 3
	}
	burnH, axisH := 80.0, 18.0
	height := 20 + float64(len(order))*rowH + burnH + 20 + axisH
	fmt.Fprintf(b, "<div class=\"scroll\"><svg id=\"timeline\" width=\"%.0f\" height=\"%.0f\">\n", width+left+20, height)
	for i, s := range tl.Sessions {
		shade := "#f4f6fa"
		if i%2 == 1 {
			shade = "#e9edf5"
		}
		w := xOf(s.End) - xOf(s.Start)
		if w < 2 {
			w = 2
		}
		fmt.Fprintf(b, "<rect class=\"session\" x=\"%.1f\" y=\"0\" width=\"%.1f\" height=\"%.0f\" fill=\"%s\"><title>session %d: %s – %s</title></rect>",
			xOf(s.Start), w, height, shade, s.N, s.Start.Format(time.RFC3339), s.End.Format(time.RFC3339))
		// A band too narrow for its name is named on hover alone: a long
		// run's many short sessions wrote their names over each other,
		// and past the page's right edge.
		if label := "S" + strconv.Itoa(s.N); w >= sessionLabelWidth(label) {
			fmt.Fprintf(b, "<text class=\"small\" x=\"%.1f\" y=\"12\">%s</text>", xOf(s.Start)+2, label)
		}
		b.WriteString("\n")
	}
	for _, a := range tl.Attempts {
		end, color := a.End, "#1f5fbf"
		switch a.Outcome {
		case "completed":
			color = "#2e8b57"
		case "failed":
			color = "#c0392b"
		default:
			end = t1
		}
		w := xOf(end) - xOf(a.Start)
		if w < minBar {
			w = minBar
		}
		y := 20 + float64(rows[a.TaskID])*rowH
		fmt.Fprintf(b, "<rect class=\"attempt\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"><title>%s: %s (%s)</title></rect>\n",
			xOf(a.Start), y, w, rowH*0.8, color, html.EscapeString(a.TaskID), a.Start.Format(time.RFC3339), outcome(a))
	}
	if rowH >= 12 {
		for i, id := range order {
			fmt.Fprintf(b, "<text class=\"rowlabel\" x=\"4\" y=\"%.1f\">%s<title>%s</title></text>\n", 20+float64(i)*rowH+rowH*0.7, html.EscapeString(clipRunes(id, 12)), html.EscapeString(id))
		}
	}
	// A log of hours holds many warnings: the latest maxMarkers are drawn.
	markers := tl.Markers
	if len(markers) > maxMarkers {
		markers = markers[len(markers)-maxMarkers:]
	}
	for _, m := range markers {
		y := 16.0
		if r, ok := rows[m.TaskID]; ok {
			y = 20 + float64(r)*rowH + rowH*0.4
		}
		fmt.Fprintf(b, "<path class=\"marker m-%s\" d=\"M%.1f,%.1fl4,-4l4,4l-4,4z\"><title>%s</title></path>\n",
			strings.ToLower(m.Type), xOf(m.Time)-4, y, html.EscapeString(m.Title()))
	}
	// Burn-up of completed tasks.
	base := height - 15 - axisH
	total := float64(d.Headline.Total)
	if total == 0 {
		total = 1
	}
	var pts strings.Builder
	fmt.Fprintf(&pts, "%.1f,%.1f", left, base)
	for k, t := range tl.Done {
		fmt.Fprintf(&pts, " %.1f,%.1f %.1f,%.1f", xOf(t), base-burnH*float64(k)/total, xOf(t), base-burnH*float64(k+1)/total)
	}
	fmt.Fprintf(&pts, " %.1f,%.1f", left+width, base-burnH*float64(len(tl.Done))/total)
	fmt.Fprintf(b, "<polyline class=\"burnup\" points=\"%s\"><title>completed tasks over time (%d)</title></polyline>\n", pts.String(), len(tl.Done))
	writeAxis(b, t0, t1, left, width, height-axisH)
	b.WriteString("</svg></div>\n<p class=\"small\">Rows: tasks. Bands: sessions. Bars: attempts (green completed, red failed, blue open; at least 6 px wide, hover for the real length). Diamonds: rollbacks, recoveries, tamper reverts, valve openings, reflection rounds and warnings (hover for the line). Line: completed tasks (burn-up). Axis: UTC.</p>\n")
}

// sessionLabelWidth is the width a session band needs to show its label
// (the page's small text is about 6 px a character) with a margin.
func sessionLabelWidth(label string) float64 { return 6*float64(len(label)) + 4 }

// writeAxis draws the time axis under the timeline at y: a line and up to
// seven ticks labelled in UTC, with the date when the span passes a day. A
// tick whose label would repeat the one before it (a span of a few
// seconds) is left out.
func writeAxis(b *strings.Builder, t0, t1 time.Time, left, width, y float64) {
	fmt.Fprintf(b, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", left, y, left+width, y)
	layout := "15:04:05"
	if t1.Sub(t0) > 24*time.Hour {
		layout = "01-02 15:04"
	}
	const ticks = 6
	last := ""
	for k := 0; k <= ticks; k++ {
		x := left + width*float64(k)/ticks
		t := t0.Add(time.Duration(float64(t1.Sub(t0)) * float64(k) / ticks)).UTC()
		label := t.Format(layout)
		if label == last {
			continue
		}
		last = label
		anchor := "middle"
		switch k {
		case 0:
			anchor = "start"
		case ticks:
			anchor = "end"
		}
		fmt.Fprintf(b, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/><text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">%s</text>\n",
			x, y, x, y+4, x, y+15, anchor, label)
	}
}

// maxMarkers bounds the diamonds the timeline draws.
const maxMarkers = 2000

func outcome(a Attempt) string {
	if a.Outcome == "" {
		return "open"
	}
	return a.Outcome + " after " + a.End.Sub(a.Start).Round(time.Second).String()
}

func writeTable(b *strings.Builder, d *Data) {
	esc := html.EscapeString
	logMade, _ := d.Timeline.attemptsOf()
	spent := map[string]time.Duration{}
	for _, a := range d.Timeline.Attempts {
		if !a.End.IsZero() {
			spent[a.TaskID] += a.End.Sub(a.Start)
		}
	}
	class := make(map[string]string, len(d.Graph.Nodes))
	for _, n := range d.Graph.Nodes {
		class[n.ID] = n.Class
	}
	b.WriteString("<h2>Tasks</h2>\n<table id=\"tasks\"><thead><tr><th data-k=\"s\">id</th><th data-k=\"s\">title</th><th data-k=\"s\">status</th><th data-k=\"s\">priority</th><th data-k=\"n\">attempts</th><th data-k=\"n\">time spent</th></tr></thead><tbody>\n")
	for _, t := range d.State.Tasks {
		sp := spent[t.ID]
		made := attemptsMade(&t)
		// Since the last retry, of its max_attempts; and all of them, as
		// the timeline draws them, when a retry reset the count.
		attempts := fmt.Sprintf("%d/%d", made, t.MaxAttempts)
		all := max(made, logMade[t.ID])
		if all > made {
			attempts += fmt.Sprintf(" (%d in all)", all)
		}
		label := class[t.ID]
		switch {
		case t.Validated():
			label = "validated, in the merge queue"
		case t.Status == "completed" && t.IntegratedCommit != "":
			label = "integrated"
		case schedule.Unchecked(&t):
			// Not done, and no session can claim it until it has one.
			label += ", no validation command"
		}
		fmt.Fprintf(b, "<tr class=\"row\" data-id=\"%s\"><td>%s</td><td>%s</td><td data-v=\"%s\"><i style=\"background:%s\"></i>%s</td><td>%s</td><td data-v=\"%d\">%s</td><td data-v=\"%d\">%s</td></tr>\n",
			esc(t.ID), esc(t.ID), esc(t.Title), class[t.ID], fill[class[t.ID]][0], esc(label), esc(t.Priority), all, attempts, int64(sp.Seconds()), sp.Round(time.Second))
		b.WriteString("<tr class=\"detail\" hidden><td colspan=\"6\">")
		if schedule.Unchecked(&t) {
			fmt.Fprintf(b, "<div><b>validation</b> none: no session can claim or complete it until one is set (<code>harness edit %s --validate COMMAND</code>)</div>", esc(t.ID))
		} else {
			fmt.Fprintf(b, "<div><b>validation</b> <code>%s</code> (timeout %ds)</div>", esc(t.Command), t.TimeoutSeconds)
		}
		if t.StartedAtCommit != "" {
			fmt.Fprintf(b, "<div><b>started at commit</b> <code>%s</code></div>", esc(t.StartedAtCommit))
		}
		if t.CompletedAt != "" {
			fmt.Fprintf(b, "<div><b>completed</b> %s</div>", esc(t.CompletedAt))
		}
		if t.ValidatedCommit != "" {
			fmt.Fprintf(b, "<div><b>validated in its worker's tree</b> as <code>%s</code> at %s, waits in the merge queue</div>", esc(t.ValidatedCommit), esc(t.ValidatedAt))
		}
		if t.IntegratedCommit != "" {
			fmt.Fprintf(b, "<div><b>integrated</b> as <code>%s</code> after its validation passed on the merged tree</div>", esc(t.IntegratedCommit))
		}
		if len(t.DependsOn) > 0 {
			fmt.Fprintf(b, "<div><b>depends on</b> %s</div>", esc(strings.Join(t.DependsOn, ", ")))
		}
		if t.Source != "" {
			fmt.Fprintf(b, "<div><b>from</b> <code>%s</code></div>", esc(t.Source))
		}
		if t.Description != "" {
			fmt.Fprintf(b, "<div class=\"desc\">%s</div>", esc(t.Description))
		}
		if len(t.Acceptance) > 0 {
			b.WriteString("<div><b>acceptance criteria</b><ul class=\"accept\">")
			for _, a := range t.Acceptance {
				fmt.Fprintf(b, "<li>%s</li>", esc(a))
			}
			b.WriteString("</ul></div>")
		}
		for _, e := range t.ErrorLog {
			fmt.Fprintf(b, "<pre class=\"err\">%s</pre>", esc(e))
		}
		for _, c := range t.Checkpoints {
			fmt.Fprintf(b, "<div>checkpoint %d/%d %s <span class=\"small\">%s</span></div>", c.Step, c.Total, esc(c.Description), esc(c.Timestamp))
		}
		b.WriteString("</td></tr>\n")
	}
	b.WriteString("</tbody></table>\n")
}

const style = `<style>
body{font:14px system-ui,sans-serif;margin:16px;color:#222}
.head span{display:inline-block;margin:0 18px 8px 0}.legend span{margin-right:12px}
.legend i,td i{display:inline-block;width:12px;height:12px;border:1px solid #888;margin-right:4px;vertical-align:middle}
.graph{display:flex;gap:12px}#panel{width:240px;flex:none;border:1px solid #ccc;padding:8px;white-space:pre-wrap;font-size:12px;max-height:600px;overflow:auto}
.scroll{overflow:auto;max-height:640px;border:1px solid #eee}
.edge{fill:none;stroke:#aaa;stroke-width:1}.edge.crit{stroke:#d00000;stroke-width:3}
.node.crit rect{stroke:#d00000;stroke-width:3}.node{cursor:pointer}.node text{font-size:11px;text-anchor:middle}
.node.sel rect{stroke:#000;stroke-width:3}
.marker{fill:#333}.m-rollback{fill:#c0392b}.m-recovery{fill:#1f5fbf}.m-tamper{fill:#7d4fb3}.m-warn{fill:#d9730d}
.burnup{fill:none;stroke:#2e8b57;stroke-width:2}.small{font-size:11px;color:#666}
.node .nid{font-weight:600}.rowlabel,.tick{font-size:10px;fill:#444}.axis{stroke:#888;stroke-width:1}
table{border-collapse:collapse}th,td{border-bottom:1px solid #ddd;padding:3px 8px;text-align:left}th{cursor:pointer;background:#f4f4f4}
tr.row{cursor:pointer}.desc{white-space:pre-wrap}ul.accept{margin:2px 0}pre.err{color:#c0392b;white-space:pre-wrap;margin:2px 0}
</style>
`

// script sorts the table, expands rows, fills the side panel, and writes
// what it rendered into #report-result, which the browser test reads.
const script = `<div id="report-result" hidden></div>
<script>
(function(){
var panel=document.getElementById('panel');
document.querySelectorAll('#graph .node').forEach(function(g){g.addEventListener('click',function(){
 document.querySelectorAll('#graph .sel').forEach(function(s){s.classList.remove('sel')});g.classList.add('sel');
 panel.textContent=g.querySelector('title').textContent+(g.dataset.error?'':'');
 var r=document.querySelector('tr.row[data-id="'+CSS.escape(g.dataset.id)+'"]');if(r){r.nextElementSibling.hidden=false;}
});});
document.querySelectorAll('#tasks tr.row').forEach(function(r){r.addEventListener('click',function(){var d=r.nextElementSibling;d.hidden=!d.hidden;});});
var tb=document.querySelector('#tasks tbody'),dir={};
document.querySelectorAll('#tasks th').forEach(function(th,i){th.addEventListener('click',function(){
 var rows=[].slice.call(tb.querySelectorAll('tr.row')),num=th.dataset.k==='n';dir[i]=!dir[i];
 function v(r){var c=r.children[i];var x=c.dataset.v!==undefined?c.dataset.v:c.textContent;return num?Number(x):x;}
 rows.sort(function(a,b){var x=v(a),y=v(b);return (x<y?-1:x>y?1:0)*(dir[i]?1:-1);});
 rows.forEach(function(r){var d=r.nextElementSibling;tb.appendChild(r);tb.appendChild(d);});
});});
var res=document.getElementById('report-result');
res.setAttribute('data-nodes',document.querySelectorAll('#graph .node').length);
res.setAttribute('data-rows',document.querySelectorAll('#tasks tr.row').length);
res.setAttribute('data-ok','1');
})();
</script>
`
