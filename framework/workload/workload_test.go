package workload

import (
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/benchci/benchci/framework/suite"
)

func samples(t *testing.T, d suite.Dist, n int) []float64 {
	t.Helper()
	l, err := NewLength(d, rand.NewPCG(1, 2))
	if err != nil {
		t.Fatal(err)
	}
	out := make([]float64, n)
	for i := range out {
		out[i] = float64(l.Sample())
	}
	return out
}

func meanStd(xs []float64) (float64, float64) {
	var s, s2 float64
	for _, x := range xs {
		s += x
	}
	m := s / float64(len(xs))
	for _, x := range xs {
		s2 += (x - m) * (x - m)
	}
	return m, math.Sqrt(s2 / float64(len(xs)-1))
}

func median(xs []float64) float64 {
	c := append([]float64(nil), xs...)
	sort.Float64s(c)
	return c[len(c)/2]
}

func TestLengthDistributions(t *testing.T) {
	t.Parallel()
	const n = 20000
	tests := []struct {
		name           string
		d              suite.Dist
		mean, std, med float64 // NaN: not checked
		min, max       float64
	}{
		{"fixed", suite.Dist{Kind: "fixed", Value: 128}, 128, 0, 128, 128, 128},
		// Discrete uniform on [64, 512]: mean 288, sd sqrt((449^2-1)/12).
		{"uniform", suite.Dist{Kind: "uniform", Min: 64, Max: 512}, 288, math.Sqrt((449*449 - 1) / 12.0), math.NaN(), 64, 512},
		{"normal", suite.Dist{Kind: "normal", Mean: 300, Stddev: 50}, 300, 50, 300, 1, math.Inf(1)},
		{"normal clipped", suite.Dist{Kind: "normal", Mean: 100, Stddev: 100, Min: 50, Max: 150}, math.NaN(), math.NaN(), 100, 50, 150},
		// Lognormal: median e^mu, mean e^(mu + sigma^2/2).
		{"lognormal", suite.Dist{Kind: "lognormal", Median: 512, Sigma: 0.5}, 512 * math.Exp(0.125), math.NaN(), 512, 1, math.Inf(1)},
		{"empirical weighted", suite.Dist{Kind: "empirical", Values: []float64{10, 20, 30}, Weights: []float64{1, 2, 1}}, 20, math.Sqrt(50), 20, 10, 30},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			xs := samples(t, tt.d, n)
			m, s := meanStd(xs)
			near := func(what string, got, want, tol float64) {
				if !math.IsNaN(want) && math.Abs(got-want) > tol*math.Max(1, math.Abs(want)) {
					t.Errorf("%s = %.3f, want %.3f ±%.1f%%", what, got, want, tol*100)
				}
			}
			near("mean", m, tt.mean, 0.02)
			near("stddev", s, tt.std, 0.05)
			near("median", median(xs), tt.med, 0.03)
			for _, x := range xs {
				if x < tt.min || x > tt.max || x != math.Trunc(x) {
					t.Fatalf("sample %v outside [%v, %v] or not whole", x, tt.min, tt.max)
				}
			}
		})
	}
}

func TestGeneratorIsReproducible(t *testing.T) {
	t.Parallel()
	w := suite.Workload{
		InputTokens:  suite.Dist{Kind: "lognormal", Median: 100, Sigma: 0.8},
		OutputTokens: suite.Dist{Kind: "uniform", Min: 1, Max: 50},
		Seed:         7,
	}
	a, _ := NewGenerator(w)
	b, _ := NewGenerator(w)
	w.Seed = 8
	c, _ := NewGenerator(w)
	differs := false
	for range 100 {
		ra, rb, rc := a.Next(), b.Next(), c.Next()
		if ra != rb {
			t.Fatalf("same seed, different requests: %+v vs %+v", ra, rb)
		}
		if ra != rc {
			differs = true
		}
		if got := len(strings.Fields(ra.Prompt)); got != ra.InputTokens {
			t.Fatalf("prompt has %d words, want %d", got, ra.InputTokens)
		}
	}
	if !differs {
		t.Error("another seed gave the same requests")
	}
}

func TestTimeline(t *testing.T) {
	t.Parallel()
	t.Run("constant", func(t *testing.T) {
		tl, err := Timeline("constant", 4, 10*time.Second, 0, rand.NewPCG(1, 1))
		if err != nil {
			t.Fatal(err)
		}
		if len(tl) != 40 {
			t.Fatalf("%d arrivals in 10s at 4/s, want 40", len(tl))
		}
		for i, at := range tl {
			if want := time.Duration(i) * 250 * time.Millisecond; at != want {
				t.Fatalf("arrival %d at %v, want %v", i, at, want)
			}
		}
	})
	t.Run("poisson", func(t *testing.T) {
		const rate = 50.0
		tl, err := Timeline("poisson", rate, 200*time.Second, 0, rand.NewPCG(3, 4))
		if err != nil {
			t.Fatal(err)
		}
		// Count ~ Poisson(10000): within 3 sd (300).
		if n := float64(len(tl)); math.Abs(n-rate*200) > 300 {
			t.Errorf("%v arrivals, want about %v", n, rate*200)
		}
		gaps := make([]float64, len(tl)-1)
		for i := range gaps {
			gaps[i] = (tl[i+1] - tl[i]).Seconds()
		}
		m, s := meanStd(gaps)
		// Exponential gaps: mean = sd = 1/rate; coefficient of variation 1.
		if math.Abs(m*rate-1) > 0.03 || math.Abs(s/m-1) > 0.03 {
			t.Errorf("gap mean %.5f sd %.5f, want both %.5f", m, s, 1/rate)
		}
		// Memorylessness: P(gap > mean) = 1/e.
		over := 0
		for _, g := range gaps {
			if g > 1/rate {
				over++
			}
		}
		if p := float64(over) / float64(len(gaps)); math.Abs(p-1/math.E) > 0.015 {
			t.Errorf("P(gap > mean) = %.3f, want %.3f", p, 1/math.E)
		}
	})
	t.Run("limit", func(t *testing.T) {
		tl, _ := Timeline("poisson", 10, time.Hour, 25, rand.NewPCG(1, 1))
		if len(tl) != 25 {
			t.Errorf("%d arrivals, want the limit 25", len(tl))
		}
	})
	t.Run("errors", func(t *testing.T) {
		if _, err := Timeline("poisson", 0, time.Second, 0, rand.NewPCG(1, 1)); err == nil {
			t.Error("rate 0 accepted")
		}
		if _, err := Timeline("zipf", 1, time.Second, 0, rand.NewPCG(1, 1)); err == nil {
			t.Error("unknown process accepted")
		}
	})
}
