package stats

import "testing"

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
