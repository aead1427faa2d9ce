package history

import (
	"fmt"
	"math"
	"slices"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/benchci/benchci/framework/metric"
	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/internal/stats"
)

// Method says how history finds and judges change points, for the
// output to state.
const Method = "E-divisive means; significant by a permutation test of the series (p <= 0.05) " +
	"or, in short series, by the versions' histograms (quantile tests, Poisson rates, p < 0.01) and across the versions (t-test of the logs, p < 0.02)"

// maxJudged is the longest segment (in versions) whose best cut the
// histograms may judge when the permutation test cannot. Beyond it the
// permutation test has the resolution to decide alone (ten values split
// 5/5 have 252 splits), and one run's noise between versions, which the
// histograms cannot see, weighs more than their samples.
const maxJudged = 10

// latencyNames are the latency metrics whose histograms a change is
// judged on: those of the gated figures.
var latencyNames = func() []string {
	var out []string
	for _, k := range metric.Gated {
		if k.Def().Kind == metric.Latency && !slices.Contains(out, k.Metric) {
			out = append(out, k.Metric)
		}
	}
	return out
}()

// Trial is what history keeps of a valid trial of a version's embedded
// result: what a change is judged on.
type Trial struct {
	Label string
	// Completed is the answers measured; Requests the request
	// throughput over the window of Seconds.
	Completed         int
	Requests, Seconds float64
	// Histograms are the gated latencies' (encoded), which verifying the
	// version decoded and checked against their summaries.
	Histograms map[string]string
}

// trial is what history keeps of p, its histograms through intern (one
// string for one content, however many versions hold it); nil for a
// trial the gate leaves out (invalid or incomplete).
func trial(p *result.Point, intern func(string) string) *Trial {
	if !p.Valid() || p.Incomplete {
		return nil
	}
	t := &Trial{Label: p.Label, Completed: p.Requests.Completed, Requests: p.Throughput.Requests, Seconds: p.Window.Seconds, Histograms: map[string]string{}}
	for _, name := range latencyNames {
		if h, ok := p.Histograms[name]; ok {
			t.Histograms[name] = intern(h)
		}
	}
	return t
}

// judging turns the histograms' judgment off, so that a test can measure
// what the permutation test names alone.
var judging = true

// judge returns the Options.Judge of series s, whose values xs sit at
// versions at: whether the versions before a cut and those from it differ
// by the samples behind them. Each side's trials at the point are merged
// into one (histograms merged, counts and windows summed) and compared as
// the gate compares a baseline with a candidate that has no band: a
// latency percentile by distribution-free 99% intervals on the merged
// histograms, a throughput (and the cost, which is the price over the
// output throughput) by the Poisson rates of the completions. A cut is
// judged only where the versions on either side do not overlap (every
// version on one side above every version on the other) and their
// figures differ by more than the floor as versions (stats.LogShiftP at
// VersionAlpha): a run's own noise, which its samples cannot show, is
// not called a change. Near saturation a run's requests share its
// bursts, so two runs of one engine differ far more than their
// histograms say; the versions' spread is what measures that.
func judge(s *Series, xs []float64, at []int, versions []Version, minShift float64) func(lo, tau, hi int) string {
	k, err := metric.ParseKey(s.Figure)
	if err != nil || s.Point == "search" || !judging {
		return nil
	}
	prefix := ""
	if k.Metric == metric.CostPerMOutput {
		k, prefix = metric.K(metric.OutputThroughput, ""), "output throughput: "
	}
	hist := "" // a rate's test reads the counts alone
	switch k.Def().Test {
	case metric.QuantileInterval:
		hist = k.Metric
	case metric.PoissonRates:
	default:
		return nil // a band-only figure has no samples to judge by
	}
	return func(lo, tau, hi int) string {
		if hi-lo > maxJudged || !apart(xs[lo:tau], xs[tau:hi]) {
			return ""
		}
		across := ""
		if positive(xs[lo:hi]) {
			// A figure that fell to zero (every request failed) has no
			// log: the histograms and counts judge it alone.
			pv := stats.LogShiftP(xs[lo:tau], xs[tau:hi], minShift)
			if !(pv < VersionAlpha) {
				return ""
			}
			across = fmt.Sprintf("; across the versions, t-test of a %.0f%% move p=%.2g", 100*minShift, pv)
		}
		a, b := merged(s.Point, hist, versions, at[lo:tau]), merged(s.Point, hist, versions, at[tau:hi])
		if a == nil || b == nil {
			return ""
		}
		test, p := differ(k, a, b, minShift)
		if !(p < JudgeAlpha) {
			return ""
		}
		return prefix + test + across
	}
}

// positive says whether every value is above zero.
func positive(xs []float64) bool {
	for _, x := range xs {
		if !(x > 0) {
			return false
		}
	}
	return true
}

// JudgeAlpha is the level of the histograms' tests, the gate's (its
// percentile intervals are 99%). Their null is a move of the history's
// floor (5%), not none.
const JudgeAlpha = 0.01

// VersionAlpha is the level of the versions' test (stats.LogShiftP, the
// floor as its null too). Measured on six-version simulator histories of
// 153 requests a point: with fresh arrivals in every version, it took
// the histograms' 22 false change points in 20 flat histories to 1, and
// at 0.01 it would have lost 2 of 36 moved figures of the stepped
// log-normal history (TestShortSeriesNamesEveryFigureThatMoved) that
// 0.02 keeps; at 0.03 the flat histories had 3.
const VersionAlpha = 0.02

// differ tests figure k between two merged points: a latency percentile
// by a quantile test on their histograms, a throughput by the Poisson
// rates of their completions. The null hypothesis is a move of exactly
// minShift in the direction seen (a minimum-effect test): history names
// moves of minShift or more, and a flat history's noise seldom looks like
// one. It returns the test as words and its p-value (1 when it cannot
// tell).
func differ(k metric.Key, a, b *mergedPoint, minShift float64) (string, float64) {
	d := k.Def()
	f := 1 + minShift
	switch {
	case d.Kind == metric.Latency:
		q, ok := metric.Quantile(k.Stat)
		ha, hb := a.hist[k.Metric], b.hist[k.Metric]
		if !ok || ha == nil || hb == nil {
			return "", 1
		}
		na, nb := ha.TotalCount(), hb.TotalCount()
		unit := ""
		if d.Scope == metric.PerGap {
			// Gaps come in per-request clusters: the requests are the
			// sample size (the conservative design effect).
			na, nb, unit = min(na, a.completed), min(nb, b.completed), " requests"
		}
		// Under the null, the higher side's quantile is f times the
		// lower's: the lower side's values times f have the higher's
		// quantile, and a share q of the two together lies below the
		// pooled one on either side. The shares above it are two
		// binomial proportions.
		fa, fb := 1.0, 1.0
		if hb.ValueAtQuantile(q) >= ha.ValueAtQuantile(q) {
			fa = f
		} else {
			fb = f
		}
		sa, sb := scaled(ha, fa), scaled(hb, fb)
		pool := hdrhistogram.Import(sa.Export())
		pool.Merge(sb)
		x := pool.ValueAtQuantile(q)
		ua, ub := above(sa, x), above(sb, x)
		p := stats.TwoProportionsP(ua*float64(na), float64(na), ub*float64(nb), float64(nb))
		return fmt.Sprintf("quantile test of a %.0f%% move p=%.2g (p%g %s vs %s; %.1f%% vs %.1f%% above the pooled p%g, n=%d, %d%s)",
			100*minShift, p, q, fmtMs(float64(ha.ValueAtQuantile(q))/1000), fmtMs(float64(hb.ValueAtQuantile(q))/1000), 100*ua, 100*ub, q, na, nb, unit), p
	case d.Test == metric.PoissonRates:
		// Under the null the higher rate is f times the lower: weigh the
		// higher side's window by f.
		wa, wb := a.seconds, b.seconds
		if a.requests*b.seconds >= b.requests*a.seconds {
			wa *= f
		} else {
			wb *= f
		}
		p := stats.PoissonRatesP(a.requests, wa, b.requests, wb)
		return fmt.Sprintf("Poisson rates of a %.0f%% move p=%.2g (%.0f vs %.0f completions in %.0fs, %.0fs)",
			100*minShift, p, a.requests, b.requests, a.seconds, b.seconds), p
	}
	return "", 1
}

// scaled is h with every value multiplied by f (h itself when f is 1).
func scaled(h *hdrhistogram.Histogram, f float64) *hdrhistogram.Histogram {
	if f == 1 {
		return h
	}
	out := hdrhistogram.New(h.LowestTrackableValue(), h.HighestTrackableValue(), int(h.SignificantFigures()))
	for _, bar := range h.Distribution() {
		if bar.Count > 0 {
			out.RecordValues(int64(float64(bar.To)*f), bar.Count)
		}
	}
	return out
}

func fmtMs(ms float64) string { return fmt.Sprintf("%.4gms", ms) }

// above is the share of h's values above x.
func above(h *hdrhistogram.Histogram, x int64) float64 {
	var n int64
	for _, bar := range h.Distribution() {
		if bar.From > x {
			n += bar.Count
		}
	}
	return float64(n) / float64(h.TotalCount())
}

// apart says whether every value of xs lies on one side of every value
// of ys.
func apart(xs, ys []float64) bool {
	if len(xs) == 0 || len(ys) == 0 {
		return false
	}
	return slices.Max(xs) < slices.Min(ys) || slices.Min(xs) > slices.Max(ys)
}

// mergedPoint is the trials at one label of a segment's versions
// together: each latency's histograms merged, completions and windows
// summed.
type mergedPoint struct {
	hist      map[string]*hdrhistogram.Histogram
	completed int64
	// requests completed in seconds of windows: the counts behind the
	// throughputs.
	requests, seconds float64
}

// merged merges the trials at label of the versions at, and of their
// histograms the one of latency name alone (none when ""): a cut is
// judged by one figure, and decoding and merging every latency for each
// was most of a history's time. Nil when no version has the point or the
// histogram does not decode.
func merged(label, name string, versions []Version, at []int) *mergedPoint {
	var ps []*Trial
	for _, i := range at {
		for _, p := range versions[i].Points {
			if p.Label == label {
				ps = append(ps, p)
			}
		}
	}
	if len(ps) == 0 {
		return nil
	}
	m := &mergedPoint{hist: map[string]*hdrhistogram.Histogram{}}
	if name != "" && !slices.ContainsFunc(ps, func(p *Trial) bool { return p.Histograms[name] == "" }) {
		var h *hdrhistogram.Histogram
		for _, p := range ps {
			x, err := result.DecodeHistogram(p.Histograms[name])
			if err != nil {
				return nil
			}
			if h == nil {
				h = x
			} else if h.Merge(x) > 0 {
				return nil // values out of range
			}
		}
		if h.TotalCount() > 0 {
			m.hist[name] = h
		}
	}
	for _, p := range ps {
		m.completed += int64(p.Completed)
		m.requests += math.Round(p.Requests * p.Seconds)
		m.seconds += p.Seconds
	}
	return m
}
