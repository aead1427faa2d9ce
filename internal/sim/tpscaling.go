package sim

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Scaling is one load's figure at several tensor-parallel sizes, as
// published and as simulated: how a planner's "TP 4 or TP 8?" reads.
type Scaling struct {
	// Load names the rows' shared settings: source, engine, GPU, model,
	// weights, batch and lengths.
	Load   string
	Figure string // "ttft", "tpot", "throughput"
	Unit   string // "ms", "tok/s"
	TP     []int
	// Published and Simulated are the figure at each TP, in Unit.
	Published, Simulated []float64
}

// scaled is a figure at each TP over its value at the smallest.
func scaled(xs []float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = x / xs[0]
	}
	return out
}

// ScalingError is the error of the simulated figure's ratio at the
// largest TP to its value at the smallest: (simulated ratio - published
// ratio) / published ratio. For a latency, below zero means the simulator
// scales better than the engine did; for a throughput, above zero.
func (s Scaling) ScalingError() float64 {
	p, m := scaled(s.Published), scaled(s.Simulated)
	last := len(s.TP) - 1
	return (m[last] - p[last]) / p[last]
}

// TPScaling groups checked rows that differ only in their tensor-parallel
// size, three sizes or more, and lists their figures side by side.
func TPScaling(cs []Checked) []Scaling {
	type key struct {
		source, engine, gpu, model, weights, kv string
		conc, in, out                           int
		rate                                    float64
	}
	groups := map[key][]Checked{}
	var order []key
	for _, c := range cs {
		k := key{c.Source, c.Engine, c.GPU, c.Model, c.Weights, c.KVCache, c.Concurrency, c.Input, c.Output, c.Rate}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], c)
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	var out []Scaling
	for _, k := range order {
		g := groups[k]
		if len(g) < 3 {
			continue
		}
		slices.SortFunc(g, func(a, b Checked) int { return cmp.Compare(a.TP, b.TP) })
		// One row a size: a repeated TP (two runs of one load) is not a
		// scaling; the first stands.
		g = slices.CompactFunc(g, func(a, b Checked) bool { return a.TP == b.TP })
		weights := cmp.Or(k.weights, "bf16")
		load := fmt.Sprintf("%s, %s %s on %s, batch of %d, %d/%d", g[0].Engine, k.model, weights, k.gpu, k.conc, k.in, k.out)
		for _, fig := range []string{"ttft", "tpot", "throughput"} {
			s := Scaling{Load: load, Figure: fig, Unit: "ms"}
			for _, c := range g {
				var pub, sim float64
				switch fig {
				case "ttft":
					pub, sim = c.TTFTMs, ms(c.Sim.Mean.TTFT)
				case "tpot":
					pub, sim = c.TPOTMs, ms(c.Sim.Mean.TPOT)
				default:
					pub, sim, s.Unit = c.OutputPerSec, c.Sim.OutputPerSec, "tok/s"
				}
				if pub <= 0 || sim <= 0 {
					continue
				}
				s.TP, s.Published, s.Simulated = append(s.TP, c.TP), append(s.Published, pub), append(s.Simulated, sim)
			}
			if len(s.TP) >= 3 {
				out = append(out, s)
			}
		}
	}
	return out
}

// ScalingMarkdown renders the scaling rows: each figure at the smallest TP
// and as a multiple of it at the others.
func ScalingMarkdown(ss []Scaling) string {
	if len(ss) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("| load | figure | TP | published (x the first) | simulated, held out (x the first) | error of the ratio at the largest TP |\n|---|---|---|---|---|---|\n")
	join := func(first float64, unit string, rs []float64) string {
		parts := []string{fmt.Sprintf("%.1f %s", first, unit)}
		for _, r := range rs[1:] {
			parts = append(parts, fmt.Sprintf("%.2f", r))
		}
		return strings.Join(parts, ", ")
	}
	for _, s := range ss {
		tps := make([]string, len(s.TP))
		for i, tp := range s.TP {
			tps[i] = fmt.Sprint(tp)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %+.0f%% |\n", s.Load, s.Figure, strings.Join(tps, ", "),
			join(s.Published[0], s.Unit, scaled(s.Published)), join(s.Simulated[0], s.Unit, scaled(s.Simulated)), 100*s.ScalingError())
	}
	return b.String()
}
