package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestRelDeltaProperties: for any reference and candidate, the delta
// rebuilds the candidate from the reference (ref + d*|ref| == cand, so
// ref*(1+d) == cand for a positive reference), its sign follows the
// direction of the move, and swapping the sides gives another number
// (the bug this guards: a headline divided by the wrong side).
func TestRelDeltaProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(30, 1)) // seeded: the same cases every run
	for i := range 100000 {
		ref := math.Exp(r.Float64()*20-10) * sign(r)
		cand := math.Exp(r.Float64()*20-10) * sign(r)
		if i%10 == 0 {
			cand = ref // no move at all
		}
		d, ok := RelDelta(cand, ref)
		if !ok {
			t.Fatalf("RelDelta(%g, %g) refused a nonzero reference", cand, ref)
		}
		if back := ref + d*math.Abs(ref); math.Abs(back-cand) > 1e-9*math.Max(math.Abs(cand), math.Abs(ref)) {
			t.Fatalf("RelDelta(%g, %g) = %g: ref + d|ref| = %g, not the candidate", cand, ref, d, back)
		}
		if ref > 0 && math.Abs(ref*(1+d)-cand) > 1e-9*math.Max(math.Abs(cand), ref) {
			t.Fatalf("RelDelta(%g, %g) = %g: ref(1+d) = %g, not the candidate", cand, ref, d, ref*(1+d))
		}
		switch {
		case cand > ref && d <= 0, cand < ref && d >= 0, cand == ref && d != 0:
			t.Fatalf("RelDelta(%g, %g) = %g: the sign does not follow the move", cand, ref, d)
		}
	}
}

func sign(r *rand.Rand) float64 {
	if r.IntN(4) == 0 {
		return -1
	}
	return 1
}

func TestRelDeltaRefusesZeroReference(t *testing.T) {
	for _, c := range [][2]float64{{1, 0}, {0, 0}, {1, math.NaN()}, {math.Inf(1), 1}, {1, math.Inf(-1)}} {
		if d, ok := RelDelta(c[0], c[1]); ok {
			t.Errorf("RelDelta(%g, %g) = %g, true; want refused", c[0], c[1], d)
		}
	}
	// The three headlines, each against its reference.
	for _, c := range []struct{ cand, ref, want float64 }{{0.776, 1.91, -0.59}, {33.4, 22.8, 0.46}, {0.763, 1, -0.24}} {
		if d, _ := RelDelta(c.cand, c.ref); math.Round(d*100) != math.Round(c.want*100) {
			t.Errorf("RelDelta(%g, %g) = %+.1f%%, want %+.0f%%", c.cand, c.ref, d*100, c.want*100)
		}
	}
}
