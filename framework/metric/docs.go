package metric

import (
	"fmt"
	"strings"
)

// The documentation of figures that lives outside Go (the suite library's
// comments and docs/metrics.md's table) is generated from the catalogue, so that
// it cannot list fewer metrics than suites may name. The blocks sit
// between these markers; `go test ./framework/metric -update` rewrites
// them and the test fails when one is stale.
const (
	docBegin = "BEGIN generated from the metric catalogue (go test ./framework/metric -update)"
	docEnd   = "END generated"
)

// sloDoc is the suite library's comment on slo and tolerance keys.
func sloDoc() string {
	var lat, rate []string
	for _, d := range defs {
		switch {
		case !d.SLO:
		case d.Kind == Latency:
			lat = append(lat, d.Name)
		default:
			rate = append(rate, d.Name)
		}
	}
	var tol []string
	for _, k := range append(Gated, GatedSearch...) {
		tol = append(tol, k.String())
	}
	var b strings.Builder
	wrap(&b, "  // ", "slo.p50/p90/p95/p99/p999/mean/max(metric, op, threshold): metric is "+strings.Join(lat, ", ")+"; the threshold is a duration ('500ms').")
	wrap(&b, "  // ", "slo.rate(metric, op, threshold): metric is "+strings.Join(rate, ", ")+"; a throughput is per second, error_rate a fraction (0.01) or a percentage ('1%'), other rates a number.")
	wrap(&b, "  // ", "tolerance: { default: '10%', <key>: '5%' or '20ms' }, where a key is one of "+strings.Join(tol, ", ")+", or a latency metric alone (ttft) for all its statistics. 'off' shows a figure without gating it (a P99 of points too short to bound one).")
	return b.String()
}

// readmeTable is docs/metrics.md's table of every figure.
func readmeTable() string {
	var b strings.Builder
	b.WriteString("| figure | unit | better | measured for | sample | SLO | gate test | what |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	for _, d := range defs {
		name := "`" + d.Name + "`"
		if d.Kind == Latency {
			name = "`" + d.Name + ".<stat>`"
		}
		slo := ""
		if d.SLO {
			slo = "yes"
		}
		what := d.Doc
		if d.Only != "" {
			what += " (only " + d.Only + ")"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", name, d.Unit, d.Better, d.APIs, d.Scope, slo, d.Test, what)
	}
	b.WriteString("\n`<stat>` is one of " + strings.Join(Stats, ", ") + ". The gate compares ")
	var g []string
	for _, k := range append(Gated, GatedSearch...) {
		g = append(g, "`"+k.String()+"`")
	}
	b.WriteString(strings.Join(g, ", ") + ".\n")
	return b.String()
}

// wrap writes text as comment lines of at most 80 columns.
func wrap(b *strings.Builder, prefix, text string) {
	line := prefix
	for _, w := range strings.Fields(text) {
		if len(line) > len(prefix) && len(line)+1+len(w) > 80 {
			b.WriteString(strings.TrimRight(line, " ") + "\n")
			line = prefix
		}
		if len(line) > len(prefix) {
			line += " "
		}
		line += w
	}
	b.WriteString(line + "\n")
}

func (a APIs) String() string {
	switch a {
	case AnyAPI:
		return "all"
	case Generation:
		return "chat, completions"
	}
	var out []string
	for _, x := range []struct {
		a    APIs
		name string
	}{{Chat, "chat"}, {Completions, "completions"}, {Embeddings, "embeddings"}} {
		if a&x.a != 0 {
			out = append(out, x.name)
		}
	}
	return strings.Join(out, ", ")
}

func (s Scope) String() string {
	switch s {
	case PerRequest:
		return "per request"
	case PerGap:
		return "per chunk gap"
	case PerPoint:
		return "per point"
	case PerSearch:
		return "per search"
	}
	return fmt.Sprintf("Scope(%d)", int(s))
}

func (t Test) String() string {
	switch t {
	case BandOnly:
		return "band"
	case QuantileInterval:
		return "percentile intervals"
	case PoissonRates:
		return "Poisson rates"
	case TwoProportions:
		return "two proportions"
	}
	return fmt.Sprintf("Test(%d)", int(t))
}
