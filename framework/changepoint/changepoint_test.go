package changepoint

import (
	"math"
	"math/rand/v2"
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
