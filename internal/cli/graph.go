package cli

import (
	"fmt"

	"github.com/harness-agent/harness/internal/graph"
)

var graphVerb = &command{
	name:    "graph",
	args:    "[--format mermaid|dot|json]",
	summary: "print the dependency graph with each task's status and the critical path: Mermaid (GitHub renders it), Graphviz DOT or JSON (read-only)",
	run:     runGraph,
}

func runGraph(e *Env, c *command, args []string) int {
	fs := e.flags(c)
	format := fs.String("format", "mermaid", "mermaid, dot or json")
	if err := e.parseNone(c, fs, args); err != nil {
		return e.fail(err)
	}
	render := map[string]func(graph.Graph) string{"mermaid": graph.Graph.Mermaid, "dot": graph.Graph.DOT, "json": graph.Graph.JSON}[*format]
	if render == nil {
		return e.fail(usageErr(c, "--format must be mermaid, dot or json, got %q", *format))
	}
	dir, err := e.viewRoot()
	if err != nil {
		return e.fail(err)
	}
	s, err := e.load(dir)
	if err != nil {
		return e.fail(err)
	}
	fmt.Fprint(e.Stdout, render(graph.Build(s.Tasks)))
	return ExitOK
}
