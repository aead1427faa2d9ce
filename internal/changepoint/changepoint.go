// Package changepoint finds where a series of measurements shifted level:
// the E-divisive means method (Matteson and James, "A nonparametric
// approach for multiple change point analysis of multivariate data",
// JASA 2014), as MongoDB's performance CI and Hunter use it on benchmark
// histories.
//
// The series is cut hierarchically. Within each segment the cut (τ) that
// maximizes the divergence statistic
//
//	Q(τ) = m·n/(m+n) · Ê,
//	Ê = 2/(m·n) Σ|xᵢ−yⱼ| − 1/C(m,2) Σ|xᵢ−xₖ| − 1/C(n,2) Σ|yⱼ−yₖ|
//
// (x the m values before τ, y the n values from τ to the segment's end)
// is found; the best cut over all segments is kept if a permutation test
// says a shuffled series seldom scores as high (the values are shuffled
// within their segments, so earlier cuts stay). Each kept cut splits its
// segment and the search goes on until a cut is not significant.
//
// Matteson and James also let y end early, at a κ before the segment's
// end, maximizing over τ and κ; like MongoDB's implementation (and
// Hunter, which uses it), y runs to the segment's end here, and a second
// shift later in the segment is cut in a later round. Over τ alone the
// sums of one univariate segment come from one sort and one sweep with a
// Fenwick tree, O(n log n) a shuffle where τ and κ together cost O(n²),
// so a history of thousands of versions takes milliseconds a shuffle.
// The test stops drawing shuffles once the cut cannot be significant.
//
// Ê is the energy distance between the two samples (exponent α = 1): it
// is zero only when they have the same distribution, and it needs no
// assumption of normality, which benchmark figures seldom meet. The
// permutation test makes the significance exact for any distribution but
// cannot be finer than 1/(permutations+1); its seed is fixed, so a series
// gives the same answer every time.
package changepoint

import (
	"context"
	"math"
	"math/rand/v2"
	"sort"

	"github.com/benchci/benchci/internal/stats"
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
	// Judge, when set, is asked about a best cut the permutation test
	// cannot call significant: whether the values of [lo, tau) and
	// [tau, hi) differ by other evidence than the series itself (the
	// samples behind each value). A short series cannot be significant
	// by permutation (six values split 3/3 have 20 splits, so p cannot go
	// below 1/20), but the samples behind its values can. It returns the
	// test that decided, "" when it could not tell. The search goes on
	// from a judged cut as from a permuted one.
	Judge func(lo, tau, hi int) (test string)
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
	// Test is what Options.Judge said decided the cut where the
	// permutation test could not; "" when the permutation test did.
	Test string
	// Before and After are the means of the segments on either side, as
	// the final cut leaves them.
	Before, After float64
}

// Relative is the shift as a fraction of the level before it (NaN when
// that level is zero).
func (p Point) Relative() float64 {
	if d, ok := stats.RelDelta(p.After, p.Before); ok { // reference: the level before
		return d
	}
	return math.NaN()
}

// EDivisive returns the significant change points of xs in index order.
func EDivisive(xs []float64, opts Options) []Point {
	found, _ := EDivisiveContext(context.Background(), xs, opts)
	return found
}

// EDivisiveContext is EDivisive that gives up when ctx is done, returning
// ctx's error. It checks ctx between permutations, so it returns within
// one evaluation of the statistic (milliseconds for thousands of values).
func EDivisiveContext(ctx context.Context, xs []float64, opts Options) ([]Point, error) {
	o := opts.withDefaults()
	n := len(xs)
	if n < 2*o.MinSize {
		return nil, ctx.Err()
	}
	rng := rand.New(rand.NewPCG(o.Seed, uint64(n)))
	cuts := []int{0, n} // segment bounds, sorted
	var found []Point
	var s scorer
	// The test stops drawing once the p-value cannot come back under
	// Alpha: p is (higher+1)/(Permutations+1) and higher only grows.
	enough := o.Alpha * float64(o.Permutations+1)
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		s.segments(xs, cuts)
		c, ok := s.best(s.rank, cuts, o.MinSize)
		if !ok {
			break
		}
		// Permutation test: shuffle within segments, score the best cut.
		// Shuffling each segment's ranks shuffles its values: the sorted
		// values, and each value's distances to the rest of its segment,
		// stay as they are.
		higher := 0
		for range o.Permutations {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			copy(s.perm, s.rank)
			for i := 0; i+1 < len(cuts); i++ {
				seg := s.perm[cuts[i]:cuts[i+1]]
				rng.Shuffle(len(seg), func(a, b int) { seg[a], seg[b] = seg[b], seg[a] })
			}
			// A shuffle that leaves each side of the cut the same set of
			// values scores the same Q, up to rounding in the last bits:
			// it counts as high.
			if pc, ok := s.best(s.perm, cuts, o.MinSize); ok && pc.q >= c.q-1e-9*math.Abs(c.q) {
				higher++
				if float64(higher+1) > enough {
					break
				}
			}
		}
		p := float64(higher+1) / float64(o.Permutations+1)
		test := ""
		if p > o.Alpha && o.Judge != nil {
			lo, hi := segmentOf(cuts, c.tau)
			test = o.Judge(lo, c.tau, hi)
		}
		if p > o.Alpha && test == "" {
			break
		}
		found = append(found, Point{Index: c.tau, Q: c.q, P: p, Test: test})
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
	return found, nil
}

// segmentOf is the segment of cuts (sorted bounds) that tau falls inside.
func segmentOf(cuts []int, tau int) (lo, hi int) {
	i := sort.SearchInts(cuts, tau) // cuts[i-1] < tau < cuts[i]
	return cuts[i-1], cuts[i]
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

// scorer evaluates Q at every cut of every segment in O(n log n) for n
// values. Within a segment of values sorted as v₀ ≤ … ≤ vₗ₋₁, a value is
// named by its rank; every position holds a rank, and a shuffle of the
// segment is a shuffle of its ranks.
type scorer struct {
	sorted []float64 // per position range of a segment: its values sorted, less the least
	dist   []float64 // per rank: the sum of its distances to every value of its segment
	rank   []int     // per position: the rank of its value in its segment
	perm   []int     // rank, shuffled
	// Scratch: a Fenwick tree over ranks of the count and the sum of the
	// values swept so far; per position, the distance sum to the values
	// before it; per cut, the pairs within y; a sort's order.
	count  []int
	sum    []float64
	before []float64
	after  []float64
	order  []int
}

// segments prepares the sorted values, ranks and distance sums of the
// segments cuts bound.
func (s *scorer) segments(xs []float64, cuts []int) {
	n := len(xs)
	if len(s.rank) != n {
		s.sorted, s.dist = make([]float64, n), make([]float64, n)
		s.rank, s.perm = make([]int, n), make([]int, n)
		s.count, s.sum = make([]int, n+1), make([]float64, n+1)
		s.before, s.after = make([]float64, n), make([]float64, n+1)
		s.order = make([]int, n)
	}
	for i := 0; i+1 < len(cuts); i++ {
		lo, hi := cuts[i], cuts[i+1]
		seg, order := xs[lo:hi], s.order[:hi-lo]
		for j := range order {
			order[j] = j
		}
		sort.SliceStable(order, func(a, b int) bool { return seg[order[a]] < seg[order[b]] })
		sorted, dist, rank := s.sorted[lo:hi], s.dist[lo:hi], s.rank[lo:hi]
		for r, j := range order {
			rank[j] = r
			sorted[r] = seg[j] - seg[order[0]]
		}
		// The distances from the r-th value to the others: r values at
		// or below it, the rest at or above.
		var below float64
		var total float64
		for _, v := range sorted {
			total += v
		}
		l := len(sorted)
		for r, v := range sorted {
			above := total - below - v
			dist[r] = (float64(r)*v - below) + (above - float64(l-r-1)*v)
			below += v
		}
	}
}

// best is the cut with the highest Q over every segment long enough to
// split, its values in the order ranks gives; ok is false when none is.
func (s *scorer) best(ranks []int, cuts []int, minSize int) (cut, bool) {
	best, ok := cut{q: math.Inf(-1)}, false
	for i := 0; i+1 < len(cuts); i++ {
		lo, hi := cuts[i], cuts[i+1]
		if c, found := s.segmentCut(lo, ranks[lo:hi], minSize); found && c.q > best.q {
			best, ok = cut{tau: lo + c.tau, q: c.q}, true
		}
	}
	return best, ok
}

// segmentCut maximizes Q over the cuts τ of one segment, whose values,
// in order, are the ranks given of the segment starting at lo. Sweeping
// left to right, a Fenwick tree over ranks gives each value's distance
// sum to the values before it, aᵢ; its distance sum to those after it is
// cᵢ = dᵢ − aᵢ. Then, for x the τ values before the cut and y the rest,
//
//	Σ|xᵢ−xₖ| = Σ_{i<τ} aᵢ          (pairs within x)
//	Σ|yⱼ−yₖ| = Σ_{i≥τ} cᵢ          (pairs within y)
//	Σ|xᵢ−yⱼ| = Σ_{i<τ} (cᵢ − aᵢ)   (pairs across)
//
// and every τ costs O(1) after the O(n log n) sweep.
func (s *scorer) segmentCut(lo int, ranks []int, minSize int) (cut, bool) {
	n := len(ranks)
	if n < 2*minSize {
		return cut{}, false
	}
	sorted, dist := s.sorted[lo:lo+n], s.dist[lo:lo+n]
	count, sum := s.count[:n+1], s.sum[:n+1]
	clear(count)
	clear(sum)
	before, after := s.before[:n], s.after[:n+1]
	var swept float64 // the sum of the values swept
	for i, r := range ranks {
		v := sorted[r]
		// The count and sum of the values swept so far ranked below r.
		var cl int
		var sl float64
		for k := r; k > 0; k -= k & -k {
			cl += count[k]
			sl += sum[k]
		}
		before[i] = (float64(cl)*v - sl) + ((swept - sl) - float64(i-cl)*v)
		for k := r + 1; k <= n; k += k & -k {
			count[k]++
			sum[k] += v
		}
		swept += v
	}
	// after[τ]: the pairs within y, Σ_{i≥τ} cᵢ.
	after[n] = 0
	for i := n - 1; i >= 0; i-- {
		after[i] = after[i+1] + (dist[ranks[i]] - before[i])
	}
	best, ok := cut{q: math.Inf(-1)}, false
	var within, across float64
	for tau := 1; tau+minSize <= n; tau++ {
		a := before[tau-1]
		within += a
		across += dist[ranks[tau-1]] - 2*a
		if tau < minSize {
			continue
		}
		m, k := float64(tau), float64(n-tau)
		e := 2*across/(m*k) - within/(m*(m-1)/2) - after[tau]/(k*(k-1)/2)
		if q := m * k / (m + k) * e; q > best.q {
			best, ok = cut{tau: tau, q: q}, true
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
