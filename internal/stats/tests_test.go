package stats

import (
	"math"
	"testing"
)

// The two tests' p-values: noise is not called a change, a real one is,
// and empty or degenerate inputs give 1.
func TestPValues(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		p    float64
		sig  bool
	}{
		{"2.0 vs 2.25 req/s over 8 s", PoissonRatesP(16, 8, 18, 8), false},
		{"8 vs 10 req/s over 100 s", PoissonRatesP(800, 100, 1000, 100), true},
		{"no events", PoissonRatesP(0, 1, 0, 1), false},
		{"90% vs 92% of 100", TwoProportionsP(90, 100, 92, 100), false},
		{"90% vs 99% of 1000", TwoProportionsP(900, 1000, 990, 1000), true},
		{"all correct both sides", TwoProportionsP(10, 10, 20, 20), false},
		{"an empty side", TwoProportionsP(0, 0, 5, 10), false},
	} {
		if tc.p < 0 || tc.p > 1 || (tc.p < 0.01) != tc.sig {
			t.Errorf("%s: p = %v, significant at 1%% want %v", tc.name, tc.p, tc.sig)
		}
	}
	if p := TwoProportionsP(10, 10, 20, 20); p != 1 {
		t.Errorf("equal shares of 1: p = %v, want 1", p)
	}
}

func TestLogShiftP(t *testing.T) {
	exp := math.Exp
	// Two versions a side (2 degrees of freedom), logs {0, 0.2} and
	// {D, D+0.2}: the pooled standard error is 0.1*sqrt(2), so a gap of
	// one standard error beyond the 5% floor is t=1, whose survival with
	// 2 degrees of freedom is 1/2 - 1/(2*sqrt(3)).
	d := math.Log1p(0.05) + 0.1*math.Sqrt2
	tOne := 0.5 - 1/(2*math.Sqrt(3))
	for _, c := range []struct {
		name   string
		xs, ys []float64
		shift  float64
		want   float64
	}{
		{"t=1 at 2 df", []float64{1, exp(0.2)}, []float64{exp(d), exp(d + 0.2)}, 0.05, tOne},
		{"either direction", []float64{exp(d), exp(d + 0.2)}, []float64{1, exp(0.2)}, 0.05, tOne},
		{"any scale", []float64{3, 3 * exp(0.2)}, []float64{3 * exp(d), 3 * exp(d+0.2)}, 0.05, tOne},
		{"on the floor", []float64{1, exp(0.2)}, []float64{1.05, 1.05 * exp(0.2)}, 0.05, 0.5},
		{"exact, past the floor", []float64{10, 10}, []float64{11, 11}, 0.05, 0},
		{"exact, within the floor", []float64{10, 10}, []float64{10.4, 10.4}, 0.05, 1},
		{"one a side", []float64{10}, []float64{20}, 0.05, 1},
		{"empty", nil, []float64{1, 2, 3}, 0.05, 1},
		{"not positive", []float64{0, 1}, []float64{2, 3}, 0.05, 1},
	} {
		if got := LogShiftP(c.xs, c.ys, c.shift); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s: p=%.6g, want %.6g", c.name, got, c.want)
		}
	}
	// A group of one borrows the other's spread: 2 degrees of freedom.
	if p := LogShiftP([]float64{10}, []float64{20, 21, 19}, 0.05); !(p > 0 && p < 0.01) {
		t.Errorf("one version against three, twice as slow: p=%g, want under 0.01", p)
	}
}
