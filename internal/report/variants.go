package report

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/benchci/benchci/internal/variants"
)

// Variants is the comparison of variants: the answers first, then one
// row per variant (capacity, throughput, TTFT and TPOT P99 and $/1M
// there, its standing), then the Pareto frontiers. Its markdown is
// VariantsMarkdown's, with its chart; its JSON the variants.Report itself,
// the schema results/<suite>.variants.json has.
func Variants(r *variants.Report) Doc {
	head := &Table{Title: fmt.Sprintf("variants%s: %d, workload %.12s%s", ofSuite(r.Suite), len(r.Variants), r.WorkloadHash, orderString(r.Order))}
	if r.Virtual {
		head.Notes = append(head.Notes, variantsVirtual)
	}
	for _, v := range r.Verdicts {
		head.Notes = append(head.Notes, fmt.Sprintf("%s: %s", v.Question, OneLine(v.Answer)))
	}
	t := &Table{Columns: variantColumns}
	for _, v := range r.Variants {
		c := CapacityCells(v)
		peak := Text("-")
		if v.Peak != nil {
			peak = Number(v.Peak.OutputTokPS, fmt.Sprintf("%.0f", v.Peak.OutputTokPS))
		}
		capacity := Text(c[0])
		if v.Capacity != nil {
			capacity = Number(v.Capacity.Rate, c[0])
		}
		cells := []Cell{Text(v.Name), Text(v.Target), capacity, Text(c[1]), Text(c[2]), Text(c[3]), Text(c[4]), Text(c[5])}
		if a := v.Capacity; a != nil && a.At != nil {
			cells[4], cells[5], cells[6] = Number(a.At.OutputTokPS, c[2]), Number(a.At.TTFTP99Ms, c[3]), Number(a.At.TPOTP99Ms, c[4])
			if a.At.USDPerMOutput > 0 {
				cells[7] = Number(a.At.USDPerMOutput, c[5])
			}
		}
		t.Add(append(cells, peak, Text(cmp.Or(v.Knee, "-")), Text(SLOCell(v)), Text(Standing(r, v)))...)
	}
	for _, f := range r.Frontiers {
		if len(f.Points) == 0 {
			continue
		}
		var ps []string
		for _, p := range f.Points {
			ps = append(ps, fmt.Sprintf("%s %s (%.0f tok/s, %s)", OneLine(p.Variant), OneLine(p.Point), p.OutputTokPS, Ms(p.LatencyMs)))
		}
		t.Notes = append(t.Notes, fmt.Sprintf("Pareto, output tok/s vs %s: %s", f.Latency, strings.Join(ps, " → ")))
	}
	for _, v := range r.Variants {
		for _, f := range v.SLOFailures {
			t.Notes = append(t.Notes, fmt.Sprintf("SLO FAIL: %s: %s", OneLine(v.Name), OneLine(f)))
		}
		if !v.Complete {
			t.Notes = append(t.Notes, fmt.Sprintf("INCOMPLETE: %s: %s (not ranked)", OneLine(v.Name), OneLine(v.Error)))
		}
	}
	return Doc{Tables: []*Table{head, t}, Layouts: map[string]func(io.Writer) error{
		"markdown": func(w io.Writer) error { return VariantsMarkdown(w, r) },
		"json":     func(w io.Writer) error { return writeJSON(w, r) },
	}}
}

// variantColumns are the variants table's columns; JSON keys carry units.
var variantColumns = []Column{
	{Key: "variant", Title: "variant", Right: true}, {Key: "target", Title: "target", Right: true},
	{Key: "capacity_rps", Title: "capacity", Right: true}, {Key: "at", Title: "at", Right: true},
	{Key: "output_throughput_tok_s", Title: "out tok/s", Right: true}, {Key: "ttft_p99_ms", Title: "TTFT p99", Right: true},
	{Key: "tpot_p99_ms", Title: "TPOT p99", Right: true}, {Key: "cost_usd_per_m_output", Title: "$/1M out", Right: true},
	{Key: "peak_output_throughput_tok_s", Title: "peak tok/s", Right: true}, {Key: "knee", Title: "knee", Right: true},
	{Key: "slos", Title: "SLOs", Right: true}, {Key: "standing", Title: "standing", Right: true},
}

func ofSuite(s string) string {
	if s == "" {
		return ""
	}
	return " of " + s
}

func orderString(o string) string {
	if o == "" {
		return ""
	}
	return ", run " + o
}

// CapacityCells are a variant's capacity, its point, and the throughput,
// TTFT P99, TPOT P99 and $/1M output there; dashes without them.
func CapacityCells(v variants.Variant) [6]string {
	out := [6]string{"-", "-", "-", "-", "-", "-"}
	c := v.Capacity
	if c == nil {
		return out
	}
	switch c.Bound {
	case "below-min":
		out[0] = "< " + Plain(c.Failing, 3) + " req/s"
	case "at-least-max":
		out[0] = "≥ " + Plain(c.Rate, 3) + " req/s"
	default:
		out[0] = Plain(c.Rate, 3) + " req/s"
	}
	if a := c.At; a != nil {
		out[1], out[2], out[3], out[4] = a.Point, fmt.Sprintf("%.0f", a.OutputTokPS), Ms(a.TTFTP99Ms), Ms(a.TPOTP99Ms)
		if a.USDPerMOutput > 0 {
			out[5] = fmt.Sprintf("$%.3f", a.USDPerMOutput)
		}
	}
	return out
}

// Standing is a variant's place in the first verdict: best, tied, or its
// gap to the leader and whether it is real.
func Standing(r *variants.Report, v variants.Variant) string {
	if !v.Complete {
		return "incomplete"
	}
	for _, vd := range r.Verdicts {
		for i, st := range vd.Standings {
			if st.Variant != v.Name {
				continue
			}
			switch {
			case vd.Best == v.Name:
				return "best " + vd.Question
			case slices.Contains(vd.Tied, v.Name):
				return "tied for best " + vd.Question
			case i > 0 && st.Value == 0 && st.Unit == "req/s":
				// A capacity of 0 is no rate held, not a rate 100% lower.
				return "held none of the rates tried"
			case i > 0:
				// VsLeader's reference is the leader: name it.
				return fmt.Sprintf("%+.0f%% %s vs %s, real", st.VsLeader*100, vd.Question, vd.Standings[0].Variant)
			}
		}
	}
	return "-"
}

// SLOCell says whether the run's gating SLO verdicts held.
func SLOCell(v variants.Variant) string {
	switch {
	case len(v.SLOs) == 0 && len(v.SLOFailures) == 0:
		return "-"
	case len(v.SLOFailures) > 0:
		return fmt.Sprintf("%d failed", len(v.SLOFailures))
	case v.SLOInconclusive > 0:
		// Neither passed nor failed: the trials measured this machine.
		return fmt.Sprintf("%d inconclusive", v.SLOInconclusive)
	}
	return "pass"
}

// palette colours the variants' lines in the Mermaid charts; legend
// names them with squares of the same colours, since xychart draws no
// legend of its own.
var palette = []struct{ hex, square string }{
	{"#1f77b4", "🟦"}, {"#ff7f0e", "🟧"}, {"#2ca02c", "🟩"}, {"#d62728", "🟥"}, {"#9467bd", "🟪"}, {"#8c564b", "🟫"},
}

// VariantsMarkdown writes the comparison as markdown: the answers, the
// per-variant table, a Mermaid chart of every variant's curve with a
// legend, and the frontiers.
func VariantsMarkdown(w io.Writer, r *variants.Report) error {
	var b strings.Builder
	fmt.Fprintf(&b, "## benchci variants%s\n\n", Escape(ofSuite(r.Suite)))
	if r.Virtual {
		fmt.Fprintf(&b, "> ℹ️ **%s**\n\n", Escape(variantsVirtual))
	}
	for _, v := range r.Verdicts {
		mark := "🏆"
		if v.Best == "" {
			mark = "🤝"
		}
		fmt.Fprintf(&b, "%s **%s**: %s\n\n", mark, v.Question, Escape(v.Answer))
	}
	b.WriteString("| variant | target | capacity | at | out tok/s | TTFT p99 | TPOT p99 | $/1M out | peak tok/s | knee | SLOs | standing |\n|---|---|--:|---|--:|--:|--:|--:|--:|---|---|---|\n")
	for _, v := range r.Variants {
		c := CapacityCells(v)
		peak := "-"
		if v.Peak != nil {
			peak = fmt.Sprintf("%.0f", v.Peak.OutputTokPS)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", Escape(v.Name), Escape(v.Target),
			c[0], Escape(c[1]), c[2], c[3], c[4], c[5], peak, Escape(cmp.Or(v.Knee, "-")), Escape(SLOCell(v)), Escape(Standing(r, v)))
	}
	b.WriteString("\n")
	variantsChart(&b, r)
	for _, f := range r.Frontiers {
		if len(f.Points) == 0 {
			continue
		}
		fmt.Fprintf(&b, "**Pareto frontier**, output tok/s vs %s: ", f.Latency)
		var ps []string
		for _, p := range f.Points {
			ps = append(ps, fmt.Sprintf("%s %s (%.0f tok/s, %s)", Escape(p.Variant), Escape(p.Point), p.OutputTokPS, Ms(p.LatencyMs)))
		}
		b.WriteString(strings.Join(ps, " → ") + "\n\n")
	}
	for _, v := range r.Variants {
		if !v.Complete {
			fmt.Fprintf(&b, "⚠️ **%s is incomplete** and not ranked: %s\n\n", Escape(v.Name), Escape(v.Error))
		}
	}
	fmt.Fprintf(&b, "<details><summary>How the verdicts are reached</summary>\n\n%s\n\n", Escape(r.Method))
	for _, v := range r.Verdicts {
		for _, st := range v.Standings {
			if st.Test != "" {
				fmt.Fprintf(&b, "- %s, %s: %s\n", v.Question, Escape(st.Variant), Escape(st.Test))
			}
		}
	}
	b.WriteString("\n</details>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// variantsChart draws output throughput against offered rate at the
// rates every variant measured, one line per variant; with fewer than two
// such rates (capacity searches that went apart), a bar of each
// variant's capacity instead.
func variantsChart(b *strings.Builder, r *variants.Report) {
	var vs []variants.Variant
	for _, v := range r.Variants {
		if v.Complete {
			vs = append(vs, v)
		}
	}
	if len(vs) == 0 || len(vs) > len(palette) {
		return
	}
	rates, stopped := commonRates(vs)
	var colours, legend []string
	for i, v := range vs {
		colours = append(colours, palette[i].hex)
		legend = append(legend, palette[i].square+" "+Escape(v.Name))
	}
	fmt.Fprintf(b, "```mermaid\n%%%%{init: {\"themeVariables\": {\"xyChart\": {\"plotColorPalette\": \"%s\"}}}}%%%%\nxychart-beta\n", strings.Join(colours, ", "))
	if len(rates) >= 2 {
		var xs []string
		for _, x := range rates {
			xs = append(xs, fmt.Sprintf("%q", strconv.FormatFloat(x, 'g', 4, 64)))
		}
		top := 0.0
		var lines []string
		for _, v := range vs {
			var ys []string
			for _, x := range rates {
				for _, c := range v.Curve {
					if c.OpenLoop && c.Offered == x {
						ys = append(ys, fmt.Sprintf("%.0f", c.OutputTokPS))
						top = max(top, c.OutputTokPS)
					}
				}
			}
			lines = append(lines, "    line ["+strings.Join(ys, ", ")+"]")
		}
		fmt.Fprintf(b, "    title \"output tok/s vs offered rate\"\n    x-axis \"req/s\" [%s]\n    y-axis \"output tok/s\" 0 --> %.0f\n%s\n```\n\n",
			strings.Join(xs, ", "), top*1.1+1, strings.Join(lines, "\n"))
	} else {
		var names, caps []string
		top := 0.0
		for _, v := range vs {
			c := 0.0
			if v.Capacity != nil {
				c = v.Capacity.Rate
			}
			names = append(names, "\""+strings.ReplaceAll(v.Name, "\"", "")+"\"")
			caps = append(caps, Num(c))
			top = max(top, c)
		}
		fmt.Fprintf(b, "    title \"capacity under the SLOs (req/s)\"\n    x-axis [%s]\n    y-axis \"req/s\" 0 --> %s\n    bar [%s]\n```\n\n",
			strings.Join(names, ", "), Num(top*1.1+1), strings.Join(caps, ", "))
		return
	}
	fmt.Fprintf(b, "Legend: %s", strings.Join(legend, " · "))
	if len(stopped) > 0 {
		var xs []string
		for _, x := range stopped {
			xs = append(xs, strconv.FormatFloat(x, 'g', 4, 64)) // as the x axis names rates
		}
		fmt.Fprintf(b, ". Left out: %s req/s, where a probe was stopped as saturated (what it finished is no sustained throughput)", strings.Join(xs, ", "))
	}
	b.WriteString("\n\n")
}

// commonRates are the open-loop rates every variant measured, ascending,
// but those where some variant's probe was stopped as saturated: a line
// through one draws a collapse that did not happen, and xychart has no
// other mark. Those are stopped, ascending.
func commonRates(vs []variants.Variant) (rates, stopped []float64) {
	count := map[float64]int{}
	saturated := map[float64]bool{}
	for _, v := range vs {
		seen := map[float64]bool{}
		for _, c := range v.Curve {
			if c.OpenLoop && c.Offered > 0 && !seen[c.Offered] {
				seen[c.Offered] = true
				count[c.Offered]++
			}
			if c.Saturated {
				saturated[c.Offered] = true
			}
		}
	}
	for x, n := range count {
		switch {
		case n < len(vs):
		case saturated[x]:
			stopped = append(stopped, x)
		default:
			rates = append(rates, x)
		}
	}
	slices.Sort(rates)
	slices.Sort(stopped)
	return rates, stopped
}

// variantsVirtual says that a variants comparison's figures are a replay's.
const variantsVirtual = "virtual time (simulated clock): every variant was replayed on the embedded simulator, not measured"
