// Package changepoint finds where a series of measurements shifted level:
// the E-divisive means method (Matteson and James, "A nonparametric
// approach for multiple change point analysis of multivariate data",
// JASA 2014), as MongoDB's performance CI and Hunter use it on benchmark
// histories.
//
// The series is cut hierarchically. Within each segment the cut (τ) and
// the segment's end considered (κ) that maximize the divergence statistic
//
//	Q(τ, κ) = m·n/(m+n) · Ê,
//	Ê = 2/(m·n) Σ|xᵢ−yⱼ| − 1/C(m,2) Σ|xᵢ−xₖ| − 1/C(n,2) Σ|yⱼ−yₖ|
//
// (x the m values before τ, y the n values from τ to κ) are found; the
// best cut over all segments is kept if a permutation test says a shuffled
// series seldom scores as high (the values are shuffled within their
// segments, so earlier cuts stay). Each kept cut splits its segment and
// the search goes on until a cut is not significant.
//
// Ê is the energy distance between the two samples (exponent α = 1): it
// is zero only when they have the same distribution, and it needs no
// assumption of normality, which benchmark figures seldom meet. The
// permutation test makes the significance exact for any distribution but
// cannot be finer than 1/(permutations+1); its seed is fixed, so a series
// gives the same answer every time.
package changepoint

import (
	"math"
	"math/rand/v2"
	"sort"
)

// Options tune the search; the zero value takes the defaults.
type Options struct {
	// MinSize is the fewest values a segment may hold (default 2: the
	// statistic needs pairs within each side). A shift in the last value
	// alone cannot be told from an outlier, so it is never a change point.
	MinSize int
	// Alpha is the significance level of the permutation test (default 0.05).
	Alpha float64
	// Permutations is how many shuffles the test draws (default 199).
	Permutations int
	// Seed seeds the shuffles (default 1).
	Seed uint64
	// MinShift drops changes whose means differ by less than this share
	// of the level before them (0 keeps every significant one). Once a
	// large shift is cut, the test finds small real wobbles in long
	// segments too; benchmark histories care about shifts a gate would.
	MinShift float64
}

func (o Options) withDefaults() Options {
	if o.MinSize < 2 {
		o.MinSize = 2
	}
	if o.Alpha <= 0 {
		o.Alpha = 0.05
	}
	if o.Permutations <= 0 {
		o.Permutations = 199
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	return o
}

// Point is one change: the series' level shifted between Index-1 and
// Index.
type Point struct {
	Index int
	// Q is the divergence statistic of the cut; P the permutation test's
	// p-value for it.
	Q, P float64
	// Before and After are the means of the segments on either side, as
	// the final cut leaves them.
	Before, After float64
}

// Relative is the shift as a fraction of the level before it (NaN when
// that level is zero).
func (p Point) Relative() float64 {
	if p.Before == 0 {
		return math.NaN()
	}
	return (p.After - p.Before) / math.Abs(p.Before)
}

// EDivisive returns the significant change points of xs in index order.
func EDivisive(xs []float64, opts Options) []Point {
	o := opts.withDefaults()
	n := len(xs)
	if n < 2*o.MinSize {
		return nil
	}
	rng := rand.New(rand.NewPCG(o.Seed, uint64(n)))
	cuts := []int{0, n} // segment bounds, sorted
	var found []Point
	work := make([]float64, n)
	for {
		c, ok := bestCut(xs, cuts, o.MinSize)
		if !ok {
			break
		}
		// Permutation test: shuffle within segments, score the best cut.
		higher := 0
		for range o.Permutations {
			copy(work, xs)
			for i := 0; i+1 < len(cuts); i++ {
				seg := work[cuts[i]:cuts[i+1]]
				rng.Shuffle(len(seg), func(a, b int) { seg[a], seg[b] = seg[b], seg[a] })
			}
			if pc, ok := bestCut(work, cuts, o.MinSize); ok && pc.q >= c.q {
				higher++
			}
		}
		p := float64(higher+1) / float64(o.Permutations+1)
		if p > o.Alpha {
			break
		}
		found = append(found, Point{Index: c.tau, Q: c.q, P: p})
		cuts = append(cuts, c.tau)
		sort.Ints(cuts)
	}
	sort.Slice(found, func(i, j int) bool { return found[i].Index < found[j].Index })
	settle(xs, found)
	if o.MinShift > 0 {
		// Drop the smallest shift below the floor and re-measure its
		// neighbours over the merged segment, until none is left.
		for {
			drop, size := -1, o.MinShift
			for i, p := range found {
				if r := math.Abs(p.After-p.Before) / math.Abs(p.Before); !(r >= size) {
					drop, size = i, r
				}
			}
			if drop < 0 {
				break
			}
			found = append(found[:drop], found[drop+1:]...)
			settle(xs, found)
		}
	}
	return found
}

// settle sets each change's Before and After to the means of the segments
// the changes around it leave.
func settle(xs []float64, found []Point) {
	n := len(xs)
	for i := range found {
		lo, hi := 0, n
		if i > 0 {
			lo = found[i-1].Index
		}
		if i+1 < len(found) {
			hi = found[i+1].Index
		}
		found[i].Before = mean(xs[lo:found[i].Index])
		found[i].After = mean(xs[found[i].Index:hi])
	}
}

type cut struct {
	tau int
	q   float64
}

// bestCut is the cut with the highest Q over every segment long enough to
// split; ok is false when none is.
func bestCut(xs []float64, cuts []int, minSize int) (cut, bool) {
	best, ok := cut{q: math.Inf(-1)}, false
	for i := 0; i+1 < len(cuts); i++ {
		if c, found := segmentCut(xs[cuts[i]:cuts[i+1]], minSize); found && c.q > best.q {
			best, ok = cut{tau: cuts[i] + c.tau, q: c.q}, true
		}
	}
	return best, ok
}

// segmentCut maximizes Q over τ and κ within one segment, from prefix sums
// of the distance matrix: O(n²) for a segment of n values.
func segmentCut(seg []float64, minSize int) (cut, bool) {
	n := len(seg)
	if n < 2*minSize {
		return cut{}, false
	}
	// s[i][j]: the sum of |seg[a]-seg[b]| over a < i, b < j.
	s := make([][]float64, n+1)
	for i := range s {
		s[i] = make([]float64, n+1)
	}
	for i := 1; i <= n; i++ {
		for j := 1; j <= n; j++ {
			s[i][j] = s[i-1][j] + s[i][j-1] - s[i-1][j-1] + math.Abs(seg[i-1]-seg[j-1])
		}
	}
	rect := func(r0, r1, c0, c1 int) float64 { return s[r1][c1] - s[r0][c1] - s[r1][c0] + s[r0][c0] }
	best, ok := cut{q: math.Inf(-1)}, false
	for tau := minSize; tau+minSize <= n; tau++ {
		m := float64(tau)
		within := rect(0, tau, 0, tau) / 2
		for kappa := tau + minSize; kappa <= n; kappa++ {
			k := float64(kappa - tau)
			between := rect(0, tau, tau, kappa)
			withinY := rect(tau, kappa, tau, kappa) / 2
			e := 2*between/(m*k) - within/(m*(m-1)/2) - withinY/(k*(k-1)/2)
			if q := m * k / (m + k) * e; q > best.q {
				best, ok = cut{tau: tau, q: q}, true
			}
		}
	}
	return best, ok
}

func mean(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}
