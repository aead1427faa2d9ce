package changepoint

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// noisy makes n values around the levels given per index range, with 1%
// gaussian noise drawn from seed.
func noisy(seed uint64, n int, level func(i int) float64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 99))
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = level(i) * (1 + 0.01*rng.NormFloat64())
	}
	return xs
}

func TestEDivisive(t *testing.T) {
	step := func(at int, from, to float64) func(int) float64 {
		return func(i int) float64 {
			if i < at {
				return from
			}
			return to
		}
	}
	cases := []struct {
		name  string
		n     int
		level func(int) float64
		want  []int // change indexes expected in every seed
	}{
		{"one step up 20%", 16, step(8, 100, 120), []int{8}},
		{"one step down 10% late", 20, step(15, 100, 90), []int{15}},
		{"two steps", 24, func(i int) float64 {
			switch {
			case i < 8:
				return 100
			case i < 16:
				return 130
			}
			return 110
		}, []int{8, 16}},
		{"step after two values", 12, step(2, 50, 70), []int{2}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for seed := range uint64(30) {
				got := EDivisive(noisy(seed, c.n, c.level), Options{MinShift: 0.05})
				if len(got) != len(c.want) {
					t.Fatalf("seed %d: found %+v, want changes at %v", seed, got, c.want)
				}
				for i, p := range got {
					if p.Index != c.want[i] || p.P > 0.05 {
						t.Errorf("seed %d: change %+v, want at %d with p <= 0.05", seed, p, c.want[i])
					}
				}
			}
		})
	}
}

// Without a floor on the shift, the cuts after a large one find the
// noise's wobbles in some seeds: every change found is then at least
// the planted one.
func TestWithoutMinShift(t *testing.T) {
	extra := 0
	for seed := range uint64(30) {
		got := EDivisive(noisy(seed, 16, func(i int) float64 { return 100 + 20*float64(i/8) }), Options{})
		planted := false
		for _, p := range got {
			planted = planted || p.Index == 8
		}
		if !planted {
			t.Errorf("seed %d: %+v lacks the change at 8", seed, got)
		}
		extra += len(got) - 1
	}
	t.Logf("%d extra changes over 30 seeds", extra)
}

// The false alarm rate on flat noisy series is the test's level: at most
// about 5% of series (10 of 100 allowed, ~2.5 standard deviations).
func TestFlatSeriesSeldomAlarm(t *testing.T) {
	alarms := 0
	for seed := range uint64(100) {
		if got := EDivisive(noisy(seed, 20, func(int) float64 { return 100 }), Options{}); len(got) > 0 {
			alarms++
		}
	}
	if alarms > 10 {
		t.Errorf("%d of 100 flat series had a change point", alarms)
	}
	t.Logf("%d of 100 flat series alarmed", alarms)
}

func TestNoChange(t *testing.T) {
	cases := map[string][]float64{
		"constant":        {5, 5, 5, 5, 5, 5, 5, 5},
		"too short":       {1, 1, 9},
		"empty":           nil,
		"last value only": {10, 10.1, 9.9, 10, 10.05, 9.95, 10, 10.1, 9.9, 30},
	}
	for name, xs := range cases {
		if got := EDivisive(xs, Options{}); len(got) != 0 {
			t.Errorf("%s: found %+v", name, got)
		}
	}
}

func TestBeforeAfterAndRelative(t *testing.T) {
	xs := []float64{10, 10, 10, 10, 12, 12, 12, 12}
	got := EDivisive(xs, Options{})
	if len(got) != 1 || got[0].Index != 4 || got[0].Before != 10 || got[0].After != 12 {
		t.Fatalf("got %+v", got)
	}
	if r := got[0].Relative(); math.Abs(r-0.2) > 1e-12 {
		t.Errorf("relative %v, want 0.2", r)
	}
	// Four against four identical values: 1 of C(8,4)=70 orders scores as
	// high, so the p-value is near the test's floor.
	if got[0].P > 0.05 {
		t.Errorf("p %v", got[0].P)
	}
}

func BenchmarkEDivisive(b *testing.B) {
	xs := noisy(1, 100, func(i int) float64 {
		if i < 60 {
			return 100
		}
		return 110
	})
	for b.Loop() {
		EDivisive(xs, Options{})
	}
}

// direct is the best cut of xs from the sums as the package comment
// writes them, O(n²) a cut: the definition the sweep must agree with.
func direct(xs []float64, minSize int) (tau int, q float64, ok bool) {
	q = math.Inf(-1)
	for t := minSize; t+minSize <= len(xs); t++ {
		if v := directAt(xs, t); v > q {
			tau, q, ok = t, v, true
		}
	}
	return tau, q, ok
}

// directAt is Q at the cut tau.
func directAt(xs []float64, tau int) float64 {
	n := len(xs)
	var within, withinY, across float64
	for i := range n {
		for j := i + 1; j < n; j++ {
			d := math.Abs(xs[i] - xs[j])
			switch {
			case j < tau:
				within += d
			case i >= tau:
				withinY += d
			default:
				across += d
			}
		}
	}
	m, k := float64(tau), float64(n-tau)
	e := 2*across/(m*k) - within/(m*(m-1)/2) - withinY/(k*(k-1)/2)
	return m * k / (m + k) * e
}

// The sweep's Q is the direct sums' at every cut of segments of every
// length, with ties (values drawn from a few levels) and without, in
// whatever order a shuffle leaves their ranks.
func TestSweepMatchesDirectSums(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for trial := range 400 {
		n := 2 + rng.IntN(60)
		xs := make([]float64, n)
		for i := range xs {
			if trial%2 == 0 {
				xs[i] = float64(rng.IntN(4)) * 10 // ties
			} else {
				xs[i] = 1e4 + 100*rng.NormFloat64()
			}
		}
		minSize := 2 + rng.IntN(3)
		var s scorer
		cuts := []int{0, n}
		s.segments(xs, cuts)
		got, gotOK := s.best(s.rank, cuts, minSize)
		tau, q, ok := direct(xs, minSize)
		// The cut itself may differ only where two cuts tie.
		if gotOK != ok || ok && (math.Abs(got.q-q) > 1e-9*max(1, math.Abs(q)) || math.Abs(directAt(xs, got.tau)-q) > 1e-9*max(1, math.Abs(q))) {
			t.Fatalf("%v (min %d): sweep cut %d q %v (%v), direct %d q %v (%v)", xs, minSize, got.tau, got.q, gotOK, tau, q, ok)
		}
		// A shuffle of the ranks is the shuffled series.
		copy(s.perm, s.rank)
		rng.Shuffle(n, func(a, b int) { s.perm[a], s.perm[b] = s.perm[b], s.perm[a] })
		shuffled := make([]float64, n)
		sorted := append([]float64(nil), xs...)
		slices.Sort(sorted)
		for i, r := range s.perm {
			shuffled[i] = sorted[r]
		}
		got, gotOK = s.best(s.perm, cuts, minSize)
		if tau, q, ok := direct(shuffled, minSize); gotOK != ok || ok && math.Abs(got.q-q) > 1e-9*max(1, math.Abs(q)) {
			t.Fatalf("shuffled %v: sweep cut %d q %v, direct %d q %v", shuffled, got.tau, got.q, tau, q)
		}
	}
}

// reference is EDivisive as the package comment describes it, plainly:
// the direct sums, every permutation drawn, no early stop.
func reference(xs []float64, o Options) []Point {
	o = o.withDefaults()
	n := len(xs)
	if n < 2*o.MinSize {
		return nil
	}
	rng := rand.New(rand.NewPCG(o.Seed, uint64(n)))
	cuts := []int{0, n}
	bestOf := func(xs []float64) (cut, bool) {
		best, ok := cut{q: math.Inf(-1)}, false
		for i := 0; i+1 < len(cuts); i++ {
			if tau, q, found := direct(xs[cuts[i]:cuts[i+1]], o.MinSize); found && q > best.q {
				best, ok = cut{cuts[i] + tau, q}, true
			}
		}
		return best, ok
	}
	var found []Point
	work := make([]float64, n)
	for {
		c, ok := bestOf(xs)
		if !ok {
			break
		}
		higher := 0
		for range o.Permutations {
			copy(work, xs)
			for i := 0; i+1 < len(cuts); i++ {
				seg := work[cuts[i]:cuts[i+1]]
				rng.Shuffle(len(seg), func(a, b int) { seg[a], seg[b] = seg[b], seg[a] })
			}
			if pc, ok := bestOf(work); ok && pc.q >= c.q-1e-9*math.Abs(c.q) {
				higher++
			}
		}
		p := float64(higher+1) / float64(o.Permutations+1)
		if p > o.Alpha {
			break
		}
		found = append(found, Point{Index: c.tau, Q: c.q, P: p})
		cuts = append(cuts, c.tau)
		slices.Sort(cuts)
	}
	slices.SortFunc(found, func(a, b Point) int { return a.Index - b.Index })
	settle(xs, found)
	return found
}

// EDivisive finds what the plain reference finds, with the same p-values,
// on steps, ramps, spikes and flat noise: the sweep, the shuffled ranks
// and the early stop of a test that cannot pass change nothing.
func TestMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	found := 0
	for trial := range 60 {
		n := 8 + rng.IntN(40)
		at, at2 := rng.IntN(n), rng.IntN(n)
		shape := trial % 4
		xs := noisy(uint64(trial), n, func(i int) float64 {
			switch shape {
			case 0:
				return 100
			case 1:
				return 100 + 20*float64(min(1, i/max(at, 1)))
			case 2:
				if i == at || i == at2 {
					return 150
				}
				return 100
			}
			return 100 + float64(i)
		})
		got, want := EDivisive(xs, Options{}), reference(xs, Options{})
		found += len(got)
		if len(got) != len(want) {
			t.Fatalf("trial %d: %+v, reference %+v", trial, got, want)
		}
		for i := range got {
			if got[i].Index != want[i].Index || got[i].P != want[i].P || math.Abs(got[i].Q-want[i].Q) > 1e-9*math.Abs(want[i].Q) {
				t.Errorf("trial %d: %+v, reference %+v", trial, got[i], want[i])
			}
		}
	}
	if found < 30 {
		t.Errorf("%d change points over 60 series: the comparison says little", found)
	}
	t.Logf("%d change points over 60 series", found)
}

// A shuffle that leaves each side of the cut the same values scores the
// same Q: it counts against the cut whatever rounding says. Eight values
// stepping up at the sixth meet the same shuffles (the seed is fixed), so
// every noise draw gets the same p-value: 1 + the shuffles that restore
// the split, of 200.
func TestTiesCountInPermutationTest(t *testing.T) {
	ps := map[float64]int{}
	for seed := range uint64(30) {
		got := EDivisive(noisy(seed, 8, func(i int) float64 { return 100 + 40*float64(min(1, i/5)) }), Options{})
		if len(got) != 1 || got[0].Index != 5 {
			t.Fatalf("seed %d: %+v", seed, got)
		}
		ps[got[0].P]++
	}
	if len(ps) != 1 {
		t.Errorf("p-values %v, want one", ps)
	}
}

// A long history: the step is found where it is, and a canceled search
// says so.
func TestLongSeriesAndCancel(t *testing.T) {
	xs := noisy(3, 3000, func(i int) float64 { return 100 + 10*float64(min(1, i/1800)) })
	got, err := EDivisiveContext(context.Background(), xs, Options{MinShift: 0.05})
	if err != nil || len(got) != 1 || got[0].Index != 1800 {
		t.Errorf("%+v, %v: want one change at 1800", got, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if got, err := EDivisiveContext(ctx, xs, Options{}); !errors.Is(err, context.Canceled) || got != nil {
		t.Errorf("canceled: %+v, %v", got, err)
	}
}

func BenchmarkEDivisiveN(b *testing.B) {
	for _, n := range []int{250, 1000, 3000} {
		xs := noisy(1, n, func(i int) float64 { return 100 + 10*float64(min(1, i/(n*3/5))) })
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				EDivisive(xs, Options{})
			}
		})
	}
}

// Six values with a clear step cannot be significant by permutation (20
// splits); a Judge that has other evidence keeps the cut E-divisive
// located, is asked about the segment the cut falls in, and is named.
func TestJudgeDecidesWhatPermutationCannot(t *testing.T) {
	xs := []float64{100, 101, 99, 130, 131, 129}
	if got := EDivisive(xs, Options{}); len(got) != 0 {
		t.Fatalf("permutation alone found %+v; the case no longer needs a judge", got)
	}
	var asked [][3]int
	got := EDivisive(xs, Options{Judge: func(lo, tau, hi int) string {
		asked = append(asked, [3]int{lo, tau, hi})
		if lo == 0 && hi == 6 {
			return "samples differ"
		}
		return ""
	}})
	if len(got) != 1 || got[0].Index != 3 || got[0].Test != "samples differ" || got[0].Before != 100 || got[0].After != 130 {
		t.Fatalf("found %+v", got)
	}
	if len(asked) == 0 || asked[0] != [3]int{0, 3, 6} {
		t.Errorf("asked %v", asked)
	}
	if got := EDivisive(xs, Options{Judge: func(lo, tau, hi int) string { return "" }}); len(got) != 0 {
		t.Errorf("a judge that cannot tell still found %+v", got)
	}
}
