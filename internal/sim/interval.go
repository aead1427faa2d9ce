package sim

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"
)

// Interval is how far a real server's figures fall from a derived
// profile's: in Level of cases a measured latency lay within Latency[0]
// to Latency[1] times the simulated one, and a throughput within
// Throughput[0] to Throughput[1] times. The bounds are ratios
// (published / simulated) from sim check's published rows, so a
// simulated TTFT of 100 ms with Latency {0.9, 1.5} reads "90-150 ms".
type Interval struct {
	Level      float64
	Latency    [2]float64
	Throughput [2]float64
	// Covered of Figures held-out figures fell inside their source's
	// interval (CalibrateBySource; FromHeldOut counts only Figures, each
	// of its ratios itself held out).
	Covered, Figures int
	// Tail is the share of the rows' ratios left out below and above
	// each bound.
	Tail float64
	// Widen, above 1, is how many times the ratios' whole range (Tail 0)
	// the bounds span, about its middle (in logarithms): where the other
	// sources' range holds fewer than Level of a source's figures. 0 or 1
	// is the range itself.
	Widen float64
}

// String says the interval as a planner reads it.
func (iv Interval) String() string {
	return fmt.Sprintf("%.0f%% interval: latencies ×%.2f–%.2f, throughputs ×%.2f–%.2f of the simulated (%d of %d published figures inside it, each source's rows bounded by the others')",
		100*iv.Level, iv.Latency[0], iv.Latency[1], iv.Throughput[0], iv.Throughput[1], iv.Covered, iv.Figures)
}

// ratio is one gated figure of a checked row: published over simulated.
type ratio struct {
	source     string
	throughput bool
	r          float64
}

// ratios are the gated figures of cs (below the knee, not marked
// ungated; known misses included: a twin's miss is an interval's case).
func ratios(cs []Checked) []ratio {
	var out []ratio
	for _, c := range cs {
		if c.PastKnee {
			continue
		}
		for _, f := range c.Figures() {
			if _, ungated := c.Ungated[f.Name]; ungated || !(f.Simulated > 0) || !(f.Published > 0) {
				continue
			}
			out = append(out, ratio{source: c.Source, throughput: f.Name == "throughput", r: f.Published / f.Simulated})
		}
	}
	return out
}

// bounds are the tail and 1-tail quantiles of the ratios of one kind
// (throughput or latency), leaving out one source ("" leaves none), the
// span between them widened widen times about its middle (in logarithms;
// 1 leaves them where they are).
func bounds(rs []ratio, throughput bool, leaveOut string, tail, widen float64) ([2]float64, bool) {
	var xs []float64
	for _, r := range rs {
		if r.throughput == throughput && r.source != leaveOut {
			xs = append(xs, r.r)
		}
	}
	if len(xs) < 2 {
		return [2]float64{}, false
	}
	slices.Sort(xs)
	lo, hi := stat.Quantile(tail, stat.LinInterp, xs, nil), stat.Quantile(1-tail, stat.LinInterp, xs, nil)
	if widen > 1 {
		mid, half := (math.Log(lo)+math.Log(hi))/2, (math.Log(hi)-math.Log(lo))/2
		lo, hi = math.Exp(mid-widen*half), math.Exp(mid+widen*half)
	}
	return [2]float64{lo, hi}, true
}

// heldOutCoverage counts the figures that fall inside the interval the
// other sources' rows give: one source's rows share an engine version,
// a harness and a machine, so a row beside its own source's rows is not
// held out, and rows pooled across sources can promise too narrow an
// interval (with the rows of 2026-12-05, the 10th to 90th percentiles of
// all rows covered 72% of a source's figures left out; today's rows need
// their 6th and 94th percentiles to cover 80%).
func heldOutCoverage(rs []ratio, tail, widen float64) (covered, n int) {
	for _, r := range rs {
		b, ok := bounds(rs, r.throughput, r.source, tail, widen)
		if !ok {
			continue
		}
		n++
		if r.r >= b[0] && r.r <= b[1] {
			covered++
		}
	}
	return covered, n
}

// CalibrateBySource finds the narrowest interval whose held-out coverage,
// each source's figures against the bounds of the others', reaches
// level, and returns its bounds over all the rows. It is how an "80%
// interval" earns its name: measured on figures the bounds did not see.
// It narrows the tails left out first, from (1-level)/2 down to none;
// where the others' whole range still holds too few, it reaches past the
// range (Interval.Widen), up to maxWiden times its span.
func CalibrateBySource(cs []Checked, level float64) (Interval, error) {
	rs := ratios(cs)
	const step = 0.0025 // tails tried, from (1-level)/2 down to 0
	type try struct{ tail, widen float64 }
	var tries []try
	for i := int(math.Round((1 - level) / 2 / step)); i >= 0; i-- {
		tries = append(tries, try{float64(i) * step, 1})
	}
	for w := 1 + widenStep; w <= maxWiden+1e-9; w += widenStep {
		tries = append(tries, try{0, math.Round(w*100) / 100})
	}
	covered, n := 0, 0
	for _, t := range tries {
		if covered, n = heldOutCoverage(rs, t.tail, t.widen); n == 0 {
			break
		}
		if float64(covered) < level*float64(n) {
			continue
		}
		lat, ok1 := bounds(rs, false, "", t.tail, t.widen)
		tput, ok2 := bounds(rs, true, "", t.tail, t.widen)
		if !ok1 || !ok2 {
			n = 0 // too few of one kind: said below
			break
		}
		iv := Interval{Level: level, Latency: lat, Throughput: tput, Covered: covered, Figures: n, Tail: t.tail}
		if t.widen > 1 {
			iv.Widen = t.widen
		}
		return iv, nil
	}
	if n > 0 {
		return Interval{}, fmt.Errorf("the sources disagree beyond their own range: held out, %d of %d figures fall inside the others' bounds at %g times their range, short of %.0f%%", covered, n, maxWiden, 100*level)
	}
	return Interval{}, fmt.Errorf("too few published figures to calibrate an interval")
}

// Past the ratios' range, CalibrateBySource widens the bounds in steps of
// widenStep, to at most maxWiden times the range's span: beyond that the
// sources are too far apart for one interval.
const (
	widenStep = 0.05
	maxWiden  = 3.0
)

// DerivedInterval is CalibrateBySource(Check(References), 0.8), kept
// here so that a run does not replay every published row to print it;
// TestDerivedIntervalIsCurrent holds it to the computation (and with
// -update prints the new one).
var DerivedInterval = Interval{Level: 0.8, Latency: [2]float64{0.90, 1.18}, Throughput: [2]float64{0.92, 1.18}, Covered: 80, Figures: 99, Tail: 0.0625}

// FromHeldOut is the interval of a twin from its own held-out ratios
// (measured over predicted, each by a fit that did not see the point),
// split by kind, from points held-out points. With n independent ratios
// of a kind, the k-th smallest and largest bound a further one in
// (n+1-2k)/(n+1) of cases, by their ranks alone; k is the largest that
// still reaches level, or 1 (the range) where no k does, and the
// interval's Level is what the worse kind reaches. The ratios of one
// point (its TTFT, TPOT and end-to-end) move together, so where a kind
// has more ratios than there are points, n is the points and the
// interval their whole range. False with fewer than two ratios of either
// kind, or a ratio that is not a positive number.
func FromHeldOut(latency, throughput []float64, points int, level float64) (Interval, bool) {
	iv := Interval{Level: 1}
	for _, kind := range []struct {
		xs  []float64
		out *[2]float64
	}{{latency, &iv.Latency}, {throughput, &iv.Throughput}} {
		xs := slices.Clone(kind.xs)
		if slices.ContainsFunc(xs, func(x float64) bool { return !(x > 0) || math.IsInf(x, 0) }) {
			return Interval{}, false // a figure the twin could not predict
		}
		n := min(len(xs), points)
		if n < 2 {
			return Interval{}, false
		}
		slices.Sort(xs)
		k := max(1, int(math.Floor((1-level)/2*float64(n+1)+1e-9)))
		if len(xs) > points {
			k = 1 // ratios that move together: their range, at the points' level
		}
		*kind.out = [2]float64{xs[k-1], xs[len(xs)-k]}
		iv.Level = min(iv.Level, float64(n+1-2*k)/float64(n+1))
		iv.Figures += len(xs)
	}
	return iv, true
}

// CalibratedEngine reports whether the published rows DerivedInterval
// was calibrated on ran the engine model name ("" is vLLM's): the
// interval says nothing of an engine no row ran.
func CalibratedEngine(name string) bool {
	e, ok := LookupEngine(name)
	if !ok {
		return false
	}
	for _, r := range References {
		if re, _ := LookupEngine(r.EngineModel); re.Name == e.Name {
			return true
		}
	}
	return false
}
