// Package graph turns the task list into its dependency graph: one node per
// task with the status a person cares about (done, running and by whom,
// eligible or waiting, retryable or failed for good, blocked), one edge from
// each dependency to its dependent, and the critical path, the longest chain
// of unfinished work, which bounds how soon the job can be done. It renders
// the graph as Mermaid (GitHub draws it in a README, an issue or a pull
// request), Graphviz DOT and JSON.
package graph

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/harness-agent/harness/internal/state"
)

// Classes of nodes, in the order of the legend.
const (
	Completed  = "completed"
	InProgress = "in_progress"
	Eligible   = "eligible"  // pending, every dependency completed
	Waiting    = "waiting"   // pending, waiting on unfinished dependencies
	Retryable  = "retryable" // failed, attempts left
	Failed     = "failed"    // failed for good
	Blocked    = "blocked"   // failed by, or waiting on, a dependency that failed for good
)

// Node is one task.
type Node struct {
	ID       string `json:"id"`
	Title    string `json:"title"`
	Status   string `json:"status"` // as the file has it
	Class    string `json:"class"`
	Worker   string `json:"worker,omitempty"` // in progress: who holds it
	Error    string `json:"error,omitempty"`  // the last error's first line
	Critical bool   `json:"critical"`
}

// Edge runs from a dependency to the task that depends on it.
type Edge struct {
	From     string `json:"from"`
	To       string `json:"to"`
	Critical bool   `json:"critical"`
}

// Graph is the dependency graph of a task list.
type Graph struct {
	Nodes    []Node   `json:"nodes"`
	Edges    []Edge   `json:"edges"`
	Critical []string `json:"critical_path"` // ids, first to last
}

// Build makes the graph of tasks. Dependencies on ids that do not exist
// are left out (status shows them).
func Build(tasks []state.Task) Graph {
	byID := make(map[string]int, len(tasks))
	for i := range tasks {
		byID[tasks[i].ID] = i
	}
	g := Graph{Nodes: make([]Node, len(tasks)), Edges: []Edge{}, Critical: []string{}}
	for i := range tasks {
		t := &tasks[i]
		n := Node{ID: t.ID, Title: t.Title, Status: t.Status, Class: class(tasks, byID, t)}
		if t.Status == state.InProgress {
			n.Worker = t.ClaimedBy
		}
		if k := len(t.ErrorLog); k > 0 && t.Status != state.Completed {
			n.Error = strings.SplitN(t.ErrorLog[k-1], "\n", 2)[0]
		}
		g.Nodes[i] = n
		for _, d := range t.DependsOn {
			if _, ok := byID[d]; ok {
				g.Edges = append(g.Edges, Edge{From: d, To: t.ID})
			}
		}
	}
	g.markCritical(tasks, byID)
	return g
}

func class(tasks []state.Task, byID map[string]int, t *state.Task) string {
	switch t.Status {
	case state.Completed:
		return Completed
	case state.InProgress:
		return InProgress
	case state.Failed:
		switch {
		case t.HasDependencyError():
			return Blocked
		case t.PermanentlyFailed():
			return Failed
		}
		return Retryable
	}
	ready := true
	for _, d := range t.DependsOn {
		j, ok := byID[d]
		if !ok {
			continue
		}
		if tasks[j].PermanentlyFailed() {
			return Blocked
		}
		if tasks[j].Status != state.Completed {
			ready = false
		}
	}
	if ready {
		return Eligible
	}
	return Waiting
}

// unfinished reports whether a node is work still to do on the way to done:
// not completed, and not failed for good (nothing more will happen to it).
func unfinished(c string) bool {
	return c == InProgress || c == Eligible || c == Waiting || c == Retryable
}

// markCritical finds the longest chain of unfinished tasks (by count, the
// earliest in file order on a tie) in one pass over a topological order of
// the unfinished part; tasks on a dependency cycle have no order and are
// left out.
func (g *Graph) markCritical(tasks []state.Task, byID map[string]int) {
	n := len(tasks)
	in := make([]int, n)
	out := make([][]int, n)
	for _, e := range g.Edges {
		a, b := byID[e.From], byID[e.To]
		if unfinished(g.Nodes[a].Class) && unfinished(g.Nodes[b].Class) {
			out[a] = append(out[a], b)
			in[b]++
		}
	}
	var queue []int
	for i := range n {
		if unfinished(g.Nodes[i].Class) && in[i] == 0 {
			queue = append(queue, i)
		}
	}
	length := make([]int, n)
	prev := make([]int, n)
	for i := range prev {
		prev[i] = -1
	}
	best := -1
	for k := 0; k < len(queue); k++ {
		v := queue[k]
		length[v]++
		if best < 0 || length[v] > length[best] || length[v] == length[best] && v < best {
			best = v
		}
		for _, w := range out[v] {
			if length[v] > length[w] {
				length[w], prev[w] = length[v], v
			}
			if in[w]--; in[w] == 0 {
				queue = append(queue, w)
			}
		}
	}
	if best < 0 {
		return
	}
	var path []int
	for v := best; v >= 0; v = prev[v] {
		path = append(path, v)
	}
	onPath := map[string]bool{}
	for k := len(path) - 1; k >= 0; k-- {
		id := tasks[path[k]].ID
		g.Critical = append(g.Critical, id)
		g.Nodes[path[k]].Critical = true
		onPath[id] = true
	}
	for k := 0; k+1 < len(g.Critical); k++ {
		for i := range g.Edges {
			if g.Edges[i].From == g.Critical[k] && g.Edges[i].To == g.Critical[k+1] {
				g.Edges[i].Critical = true
			}
		}
	}
}

// colours of each class: fill, then border.
var colours = map[string][2]string{
	Completed:  {"#d3f0dc", "#2e8b57"},
	InProgress: {"#cfe2ff", "#1f5fbf"},
	Eligible:   {"#fff3bf", "#b38f00"},
	Waiting:    {"#eeeeee", "#888888"},
	Retryable:  {"#ffe0c2", "#d9730d"},
	Failed:     {"#ffd6d6", "#c0392b"},
	Blocked:    {"#e8dcf5", "#7d4fb3"},
}

// label is a node's text: id, title, and who holds it.
func (n Node) label() string {
	l := n.ID + ": " + n.Title
	if n.Worker != "" {
		l += " (" + n.Worker + ")"
	}
	return l
}

// Mermaid renders g as a Mermaid flowchart, left to right, nodes coloured by
// class and the critical path drawn thick and red.
func (g Graph) Mermaid() string {
	var b strings.Builder
	b.WriteString("flowchart LR\n")
	key := make(map[string]string, len(g.Nodes))
	for i, n := range g.Nodes {
		key[n.ID] = fmt.Sprintf("t%d", i)
		fmt.Fprintf(&b, "  %s[\"%s\"]:::%s\n", key[n.ID], mermaidText(n.label()), n.Class)
	}
	var critical []string
	for i, e := range g.Edges {
		fmt.Fprintf(&b, "  %s --> %s\n", key[e.From], key[e.To])
		if e.Critical {
			critical = append(critical, fmt.Sprint(i))
		}
	}
	for _, c := range []string{Completed, InProgress, Eligible, Waiting, Retryable, Failed, Blocked} {
		fmt.Fprintf(&b, "  classDef %s fill:%s,stroke:%s\n", c, colours[c][0], colours[c][1])
	}
	if len(critical) > 0 {
		fmt.Fprintf(&b, "  linkStyle %s stroke:#d00000,stroke-width:3px\n", strings.Join(critical, ","))
	}
	return b.String()
}

// mermaidText makes s safe inside a quoted Mermaid label.
func mermaidText(s string) string {
	return strings.NewReplacer(`"`, "#quot;", "\n", " ", "<", "#lt;", ">", "#gt;").Replace(s)
}

// DOT renders g for Graphviz.
func (g Graph) DOT() string {
	var b strings.Builder
	b.WriteString("digraph harness {\n  rankdir=LR;\n  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\"];\n")
	for _, n := range g.Nodes {
		c := colours[n.Class]
		extra := ""
		if n.Critical {
			extra = ", penwidth=3"
		}
		tooltip := n.Class
		if n.Error != "" {
			tooltip += ": " + n.Error
		}
		fmt.Fprintf(&b, "  %s [label=%s, fillcolor=%q, color=%q, tooltip=%s%s];\n", dotID(n.ID), dotID(n.label()), c[0], c[1], dotID(tooltip), extra)
	}
	for _, e := range g.Edges {
		attr := ""
		if e.Critical {
			attr = " [color=\"#d00000\", penwidth=3]"
		}
		fmt.Fprintf(&b, "  %s -> %s%s;\n", dotID(e.From), dotID(e.To), attr)
	}
	b.WriteString("}\n")
	return b.String()
}

// dotID quotes s as a DOT string.
func dotID(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
}

// JSON renders g as indented JSON.
func (g Graph) JSON() string {
	data, _ := json.MarshalIndent(g, "", "  ")
	return string(data) + "\n"
}
