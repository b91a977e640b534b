package report

import (
	"sort"

	"github.com/harness-agent/harness/internal/graph"
)

// Layout places the graph's nodes in layers, dependencies left of their
// dependents: a compact Sugiyama layout (longest-path layering, then
// barycenter ordering sweeps to cut crossings). Written here rather than
// linking Graphviz (go-graphviz embeds it as WebAssembly, several MB in the
// CLI) because this much is enough for a task graph and costs no dependency.
type Layout struct {
	X, Y          []float64 // node centres, by node index
	Width, Height float64
	Compact       bool // many tasks: nodes drawn as small boxes, titles on hover
	NodeW, NodeH  float64
}

// maxColumn is how many nodes one layer stacks before it wraps into another
// column, so a wide layer of a thousand tasks stays a block, not a thin line.
const maxColumn = 40

// compactAbove is the task count beyond which nodes lose their labels.
const compactAbove = 60

// Lay computes the layout of g.
func Lay(g graph.Graph) Layout {
	n := len(g.Nodes)
	idx := make(map[string]int, n)
	for i, nd := range g.Nodes {
		idx[nd.ID] = i
	}
	preds := make([][]int, n)
	succs := make([][]int, n)
	indeg := make([]int, n)
	for _, e := range g.Edges {
		a, b := idx[e.From], idx[e.To]
		preds[b] = append(preds[b], a)
		succs[a] = append(succs[a], b)
		indeg[b]++
	}
	// Longest-path layering over a topological order; nodes on a cycle keep
	// the layer their acyclic predecessors give them.
	layer := make([]int, n)
	queue := make([]int, 0, n)
	for i := range indeg {
		if indeg[i] == 0 {
			queue = append(queue, i)
		}
	}
	for k := 0; k < len(queue); k++ {
		u := queue[k]
		for _, v := range succs[u] {
			if layer[u]+1 > layer[v] {
				layer[v] = layer[u] + 1
			}
			if indeg[v]--; indeg[v] == 0 {
				queue = append(queue, v)
			}
		}
	}
	depth := 0
	for _, l := range layer {
		if l+1 > depth {
			depth = l + 1
		}
	}
	layers := make([][]int, depth)
	for i := 0; i < n; i++ {
		layers[layer[i]] = append(layers[layer[i]], i)
	}
	pos := make([]float64, n)
	setPos := func(l []int) {
		for k, v := range l {
			pos[v] = float64(k)
		}
	}
	for _, l := range layers {
		setPos(l)
	}
	// Barycenter sweeps: down by predecessors, then up by successors.
	for sweep := 0; sweep < 4; sweep++ {
		down := sweep%2 == 0
		for li := range layers {
			if !down {
				li = len(layers) - 1 - li
			}
			l := layers[li]
			key := make(map[int]float64, len(l))
			for _, v := range l {
				nb := preds[v]
				if !down {
					nb = succs[v]
				}
				if len(nb) == 0 {
					key[v] = pos[v]
					continue
				}
				s := 0.0
				for _, u := range nb {
					s += pos[u]
				}
				key[v] = s / float64(len(nb))
			}
			sort.SliceStable(l, func(a, b int) bool { return key[l[a]] < key[l[b]] })
			setPos(l)
		}
	}
	lay := Layout{X: make([]float64, n), Y: make([]float64, n), Compact: n > compactAbove}
	colGap, rowGap := 220.0, 50.0
	lay.NodeW, lay.NodeH = 190, 36
	if lay.Compact {
		colGap, rowGap = 26, 14
		lay.NodeW, lay.NodeH = 18, 10
	}
	x := 20.0
	for _, l := range layers {
		cols := (len(l) + maxColumn - 1) / maxColumn
		for k, v := range l {
			lay.X[v] = x + float64(k/maxColumn)*colGap + lay.NodeW/2
			lay.Y[v] = 20 + float64(k%maxColumn)*rowGap + lay.NodeH/2
			if y := lay.Y[v] + lay.NodeH/2 + 20; y > lay.Height {
				lay.Height = y
			}
		}
		x += float64(cols)*colGap + colGap/2
	}
	lay.Width = x
	return lay
}
