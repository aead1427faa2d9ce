package variants

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/benchci/benchci/framework/compare"
	"github.com/benchci/benchci/framework/metric"
	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/framework/suite"
	"github.com/benchci/benchci/internal/slo"
	"github.com/benchci/benchci/internal/stats"
)

var outputThroughput = metric.K(metric.OutputThroughput, "")

// z99 is the two-sided 99% normal quantile, the gate's confidence.
const z99 = 2.5758

// verdicts answers the questions for the variants idx, which share one
// SLO set. Incomplete runs are not ranked: a stopped search or a dead
// server measured something else than the configuration.
func verdicts(all []Variant, idx []int) []Verdict {
	var vs []*Variant
	for _, i := range idx {
		if all[i].Complete {
			vs = append(vs, &all[i])
		}
	}
	if len(vs) == 0 {
		return nil
	}
	slos := vs[0].SLOs
	var out []Verdict
	if len(slos) > 0 {
		if v, ok := capacityVerdict(vs, slos); ok {
			out = append(out, v)
			if c, ok := costVerdict(vs, slos); ok {
				out = append(out, c)
			}
		}
		return out
	}
	if v, ok := throughputVerdict(vs); ok {
		out = append(out, v)
	}
	return out
}

func capacityVerdict(vs []*Variant, slos []string) (Verdict, bool) {
	var have []*Variant
	for _, v := range vs {
		if v.Capacity != nil {
			have = append(have, v)
		}
	}
	if len(have) == 0 {
		return Verdict{}, false
	}
	slices.SortStableFunc(have, func(a, b *Variant) int { return cmp.Compare(b.Capacity.Rate, a.Capacity.Rate) })
	lead := have[0]
	v := Verdict{Question: "capacity", SLOs: slos}
	for _, w := range have {
		st := Standing{Variant: w.Name, Value: w.Capacity.Rate, Unit: "req/s"}
		if w != lead {
			st.VsLeader, _ = stats.RelDelta(w.Capacity.Rate, lead.Capacity.Rate) // reference: the leader
			st.Real, st.Test = capacityGap(lead, w)
		}
		v.Standings = append(v.Standings, st)
	}
	decide(&v, func(x float64) string { return fmt.Sprintf("%.3g req/s", x) }, "holds every SLO up to", "the highest capacity")
	return v, true
}

// capacityGap judges whether w's capacity is below lead's for real: at a
// rate both measured, where lead passed and w failed, one of the SLO
// figures w failed must be worse than lead's by the gate's statistics.
// Every such rate is tested, the strongest evidence (the rate nearest
// lead's capacity, where the two differ most) first. Two identical
// configurations split only where a figure sits on its threshold, and
// there the test finds noise.
func capacityGap(lead, w *Variant) (bool, string) {
	if w.Capacity.Rate == lead.Capacity.Rate {
		return false, "same capacity"
	}
	var tests []string
	splits := 0
	lps := openLoop(lead.Curve)
	slices.Reverse(lps)
	for _, lp := range lps {
		if !lp.Pass {
			continue
		}
		wp := pointAt(w.Curve, lp.Offered)
		if wp == nil || wp.Pass {
			continue
		}
		splits++
		if wp.Completed == 0 {
			return true, fmt.Sprintf("at %s %s completed no request", wp.Point, w.Name)
		}
		for _, o := range failed(w, wp) {
			row, ok := compare.Differ(o.Key(), lp.trials, wp.trials)
			if !ok {
				continue
			}
			t := fmt.Sprintf("at %s, %s: %.4g vs %.4g %s (%s)", wp.Point, slo.Name(o), row.Base, row.Cand, row.Unit, row.Test)
			if row.Verdict == compare.Regression {
				// w's figure is worse than the leader's beyond noise.
				return true, t
			}
			tests = append(tests, t)
		}
	}
	if splits > 0 {
		if len(tests) == 0 {
			return false, "the failed SLO figures could not be tested"
		}
		return false, strings.Join(tests, "; ") + ": within noise"
	}
	// No rate separates them in the data (separate runs of other sweeps):
	// the brackets decide, without a test.
	if f := w.Capacity.Failing; f > 0 && f <= lead.Capacity.Rate {
		return true, fmt.Sprintf("no rate measured by both separates them; %s failed at %.3g req/s, where %s passed", w.Name, f, lead.Name)
	}
	return false, "no rate measured by both separates them, and their capacity brackets overlap"
}

// failed lists the SLOs w failed at point p.
func failed(w *Variant, p *Figures) []suite.SLO {
	var out []suite.SLO
	for _, o := range w.slos {
		bad := false
		for _, t := range p.trials {
			for _, r := range slo.Evaluate([]suite.SLO{o}, []result.Point{*t}) {
				if r.Point == p.Point && !r.Pass {
					bad = true
				}
			}
		}
		if bad {
			out = append(out, o)
		}
	}
	return out
}

func openLoop(curve []Figures) []*Figures {
	var out []*Figures
	for i := range curve {
		if curve[i].OpenLoop && curve[i].Offered > 0 {
			out = append(out, &curve[i])
		}
	}
	slices.SortFunc(out, func(a, b *Figures) int { return cmp.Compare(a.Offered, b.Offered) })
	return out
}

func pointAt(curve []Figures, rate float64) *Figures {
	for i := range curve {
		if curve[i].OpenLoop && curve[i].Offered == rate {
			return &curve[i]
		}
	}
	return nil
}

// costVerdict ranks $/1M output tokens at each variant's capacity. A
// cost is price / throughput; its 99% interval comes from the Poisson
// interval of the completions behind the throughput.
func costVerdict(vs []*Variant, slos []string) (Verdict, bool) {
	var have []*Variant
	for _, v := range vs {
		if c := v.Capacity; c != nil && c.At != nil && c.At.USDPerMOutput > 0 {
			have = append(have, v)
		}
	}
	if len(have) == 0 {
		return Verdict{}, false
	}
	slices.SortStableFunc(have, func(a, b *Variant) int {
		return cmp.Compare(a.Capacity.At.USDPerMOutput, b.Capacity.At.USDPerMOutput)
	})
	lead := have[0]
	llo, lhi := costCI(lead.Capacity.At)
	v := Verdict{Question: "cost", SLOs: slos}
	for _, w := range have {
		c := w.Capacity.At
		st := Standing{Variant: w.Name, Value: c.USDPerMOutput, Unit: "$/1M output tokens"}
		if w != lead {
			st.VsLeader, _ = stats.RelDelta(c.USDPerMOutput, lead.Capacity.At.USDPerMOutput) // reference: the leader
			wlo, whi := costCI(c)
			st.Real = wlo > lhi
			st.Test = fmt.Sprintf("99%% Poisson intervals $%.3g–%.3g vs $%.3g–%.3g (%d and %d completions)", llo, lhi, wlo, whi, lead.Capacity.At.Completed, c.Completed)
		}
		v.Standings = append(v.Standings, st)
	}
	decide(&v, func(x float64) string { return fmt.Sprintf("$%.3g per 1M output tokens", x) }, "costs", "the lowest cost at capacity")
	if len(v.Tied) > 1 {
		// A tie is a statement about the run's length, not the configs:
		// say what would separate the widest gap it saw.
		var far *Variant
		for _, w := range have[1:] {
			if slices.Contains(v.Tied, w.Name) && (far == nil || w.Capacity.At.USDPerMOutput > far.Capacity.At.USDPerMOutput) {
				far = w
			}
		}
		if far != nil {
			v.Answer += separation(lead.Capacity.At, far.Capacity.At)
		}
	}
	return v, true
}

// separation says how long two points' windows must be for their 99%
// Poisson intervals of cost to part at the gap they showed. Cost goes as
// 1/throughput and a throughput's relative error as z/sqrt(n) for n
// completions, so intervals c/(1±x) part when x < g/(2+g) for a gap g:
// n > (z(2+g)/g)^2 completions, each side, at the rates they ran.
func separation(lead, other *Figures) string {
	g, ok := stats.RelDelta(other.USDPerMOutput, lead.USDPerMOutput)
	if !ok || g <= 0 || lead.Seconds <= 0 || other.Seconds <= 0 || lead.Completed <= 0 || other.Completed <= 0 {
		return ""
	}
	need := math.Pow(z99*(2+g)/g, 2)
	// The slower side's completions per second set the window.
	perSec := min(float64(lead.Completed)/lead.Seconds, float64(other.Completed)/other.Seconds)
	secs := need / perSec
	return fmt.Sprintf("; the %.0f%% gap to %s would part with about %.0f completions each: probes of at least %s (now %s)",
		100*g, other.Point, math.Ceil(need), seconds(secs), seconds(max(lead.Seconds, other.Seconds)))
}

func seconds(s float64) string {
	if s >= 120 {
		return fmt.Sprintf("%.0f min", math.Ceil(s/60))
	}
	return fmt.Sprintf("%.0f s", math.Ceil(s))
}

// costCI is the 99% interval of a point's $/1M output tokens: the cost
// scales as 1/throughput, and the throughput's relative error is that of
// a Poisson count of its completions.
func costCI(f *Figures) (lo, hi float64) {
	n := float64(f.Completed)
	if n <= 0 {
		return 0, math.Inf(1)
	}
	rel := z99 / math.Sqrt(n)
	lo = f.USDPerMOutput / (1 + rel)
	if rel >= 1 {
		return lo, math.Inf(1)
	}
	return lo, f.USDPerMOutput / (1 - rel)
}

// throughputVerdict ranks peak output throughput, for runs without SLOs.
func throughputVerdict(vs []*Variant) (Verdict, bool) {
	var have []*Variant
	for _, v := range vs {
		if v.Peak != nil {
			have = append(have, v)
		}
	}
	if len(have) == 0 {
		return Verdict{}, false
	}
	slices.SortStableFunc(have, func(a, b *Variant) int { return cmp.Compare(b.Peak.OutputTokPS, a.Peak.OutputTokPS) })
	lead := have[0]
	v := Verdict{Question: "throughput"}
	for _, w := range have {
		st := Standing{Variant: w.Name, Value: w.Peak.OutputTokPS, Unit: "output tok/s"}
		if w != lead {
			st.VsLeader, _ = stats.RelDelta(w.Peak.OutputTokPS, lead.Peak.OutputTokPS) // reference: the leader
			row, ok := compare.Differ(outputThroughput, lead.Peak.trials, w.Peak.trials)
			if ok {
				st.Real = row.Verdict == compare.Regression
				st.Test = fmt.Sprintf("peaks %s vs %s: %s", lead.Peak.Point, w.Peak.Point, row.Test)
			}
		}
		v.Standings = append(v.Standings, st)
	}
	decide(&v, func(x float64) string { return fmt.Sprintf("%.4g output tok/s", x) }, "peaks at", "the highest peak throughput")
	return v, true
}

// decide names the best variant, or the tie, and says it.
func decide(v *Verdict, format func(float64) string, verb, superlative string) {
	lead := v.Standings[0]
	v.Tied = []string{lead.Variant}
	for _, st := range v.Standings[1:] {
		if !st.Real {
			v.Tied = append(v.Tied, st.Variant)
		}
	}
	if len(v.Tied) == 1 {
		v.Best, v.Tied = lead.Variant, nil
		v.Answer = fmt.Sprintf("%s has %s: it %s %s", lead.Variant, superlative, verb, format(lead.Value))
		if len(v.Standings) > 1 {
			// The sentence is about the leader, measured against the
			// runner-up: the runner-up is the reference. (Negating the
			// runner-up's VsLeader divided by the leader's figure: "-146%"
			// for $0.776 against $1.91, which is -59%.)
			next := v.Standings[1]
			v.Answer += ", "
			if d, ok := stats.RelDelta(lead.Value, next.Value); ok {
				v.Answer += fmt.Sprintf("%+.0f%% ", d*100)
			}
			v.Answer += fmt.Sprintf("against %s (%s), beyond noise", next.Variant, format(next.Value))
		}
		return
	}
	v.Answer = fmt.Sprintf("tie for %s between %s (%s for %s): the statistics cannot separate them", superlative,
		strings.Join(v.Tied, ", "), format(lead.Value), lead.Variant)
}

// frontier keeps the points of complete runs that no other point beats on
// both output throughput (higher) and the latency (lower), by throughput;
// saturated probes are not candidates.
func frontier(vs []Variant, name string, lat func(Figures) float64) Frontier {
	var all []FrontierPoint
	for _, v := range vs {
		if !v.Complete {
			continue
		}
		for _, c := range v.Curve {
			// A probe stopped as saturated finished what it could before
			// the stop: not a throughput the configuration sustains.
			if c.OutputTokPS > 0 && lat(c) > 0 && !c.Saturated {
				all = append(all, FrontierPoint{Variant: v.Name, Point: c.Point, OutputTokPS: c.OutputTokPS, LatencyMs: lat(c)})
			}
		}
	}
	slices.SortStableFunc(all, func(a, b FrontierPoint) int {
		return cmp.Or(cmp.Compare(b.OutputTokPS, a.OutputTokPS), cmp.Compare(a.LatencyMs, b.LatencyMs))
	})
	f := Frontier{Latency: name, Points: []FrontierPoint{}}
	best := math.Inf(1)
	for _, p := range all {
		if p.LatencyMs < best {
			f.Points = append(f.Points, p)
			best = p.LatencyMs
		}
	}
	slices.Reverse(f.Points)
	return f
}
