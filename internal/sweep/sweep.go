// Package sweep reads load sweeps: where throughput stops rising (the
// knee), and the search for the highest rate that meets every SLO
// (capacity).
package sweep

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strconv"

	"github.com/benchci/benchci/framework/result"
)

// KneeGain is the knee rule's threshold: a step up in load whose relative
// throughput gain is below KneeGain times its relative load increase no
// longer buys throughput.
const KneeGain = 0.5

// KneeRule states the rule in words, for reports.
var KneeRule = fmt.Sprintf("last point before the first step whose relative output-throughput gain is below %.0f%% of its relative load increase", KneeGain*100)

// Knee finds the knee of the first trial's points, ordered by load: the
// last point before the first step (i-1 -> i) where
// T_i/T_{i-1} - 1 < KneeGain * (L_i/L_{i-1} - 1),
// T being output throughput and L the offered rate or concurrency. Nil
// when throughput keeps rising through the sweep, or with fewer than 2
// points. Only points that measured the server count: a trial that
// measured this machine (invalid) or answered nothing has no throughput
// of the server's to read a knee from.
func Knee(points []result.Point) *result.Knee {
	var ps []result.Point
	for _, p := range points {
		if p.Trial <= 1 && p.Valid() && p.Requests.Completed > 0 {
			ps = append(ps, p)
		}
	}
	load := func(p result.Point) float64 {
		if p.Mode == result.ModeConcurrency {
			return float64(p.Concurrency)
		}
		return p.Rate
	}
	sort.SliceStable(ps, func(i, j int) bool { return load(ps[i]) < load(ps[j]) })
	for i := 1; i < len(ps); i++ {
		l0, l1 := load(ps[i-1]), load(ps[i])
		t0, t1 := ps[i-1].Throughput.OutputTokens, ps[i].Throughput.OutputTokens
		if l0 <= 0 || l1 <= l0 || t0 <= 0 {
			continue
		}
		if t1/t0-1 < KneeGain*(l1/l0-1) {
			return &result.Knee{Point: ps[i-1].Label, Rule: KneeRule}
		}
	}
	return nil
}

// Probe runs one point at rate and reports whether every SLO held.
type Probe func(ctx context.Context, rate float64) (pass bool, err error)

// Search finds the highest rate in [min, max] at which probe passes,
// assuming passing is monotone in the rate (a server meeting its SLOs at
// some rate meets them at lower ones). It probes min and max, then bisects
// geometrically — rates span orders of magnitude, so the midpoint of 1 and
// 100 is 10, not 50 — until the passing and failing rates are within
// precision (relative) of each other.
func Search(ctx context.Context, min, max, precision float64, probe Probe) (*result.Capacity, error) {
	c := &result.Capacity{}
	try := func(rate float64) (bool, error) {
		c.Probes++
		return probe(ctx, rate)
	}
	ok, err := try(min)
	if err != nil {
		return c, err
	}
	if !ok {
		c.Bound, c.Failing = "below-min", min
		return c, nil
	}
	ok, err = try(max)
	if err != nil {
		return c, err
	}
	if ok {
		c.Bound, c.Rate = "at-least-max", max
		return c, nil
	}
	lo, hi := min, max
	for hi/lo-1 > precision {
		if ctx.Err() != nil {
			break
		}
		mid := RoundRate(math.Sqrt(lo * hi))
		if mid <= lo || mid >= hi {
			break // the rounding cannot split the bracket further
		}
		ok, err := try(mid)
		if err != nil {
			return c, err
		}
		if ok {
			lo = mid
		} else {
			hi = mid
		}
	}
	c.Bound, c.Rate, c.Failing = "bracketed", lo, hi
	return c, nil
}

// RoundRate keeps chosen rates readable (3 significant digits), so point
// labels are short and the same search probes the same rates every run.
// It rounds through the decimal form: scaling by a power of ten would leave
// binary noise such as 20.700000000000003.
func RoundRate(r float64) float64 {
	v, err := strconv.ParseFloat(strconv.FormatFloat(r, 'g', 3, 64), 64)
	if err != nil || r <= 0 {
		return r
	}
	return v
}
