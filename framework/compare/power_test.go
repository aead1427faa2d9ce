package compare

import (
	"math"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

func TestMinSamples(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		q    float64
		want int
	}{{50, 8}, {90, 51}, {99, 528}} {
		if got := MinSamples(tc.q); got != tc.want {
			t.Errorf("MinSamples(%g) = %d, want %d", tc.q, got, tc.want)
		}
		// The definition: with want samples the top one bounds the
		// percentile; with one fewer it does not.
		h := histogramOf(tc.want)
		if _, hi := quantileCI(h, tc.q, int64(tc.want)); hi == inf {
			t.Errorf("p%g of %d samples: no upper bound", tc.q, tc.want)
		}
		h = histogramOf(tc.want - 1)
		if _, hi := quantileCI(h, tc.q, int64(tc.want-1)); hi != inf {
			t.Errorf("p%g of %d samples: upper bound %v, want none", tc.q, tc.want-1, hi)
		}
	}
}

func TestPower(t *testing.T) {
	t.Parallel()
	rates := func(trials int, dur time.Duration, requests int, r ...float64) Plan {
		return Plan{Trials: trials, Rates: r, Duration: dur, Requests: requests}
	}
	tests := []struct {
		name string
		s    Plan
		want []string
	}{
		// The quickstart's shape: 6 req/s for 8 s is 48 requests.
		{"short", rates(1, 8*time.Second, 0, 6), []string{"ttft.p99, tpot.p99, itl.p99, e2e.p99 at rate=6: about 48 requests planned; a 99% interval of a P99 needs at least 528, so there they cannot fail the gate: use trials: 4 or duration >= 88s"}},
		// One line for all the points a quantile cannot be bounded at; the
		// duration that fixes the slowest fixes them all.
		{"several points", rates(1, 8*time.Second, 0, 2, 6, 100), []string{"e2e.p99 at rate=2, 6: about 16, 48 requests planned", "duration >= 264s"}},
		{"long enough", rates(1, 90*time.Second, 0, 6), nil},
		{"merged trials count", rates(2, 45*time.Second, 0, 6), nil},
		{"enough trials for the U test", rates(4, time.Second, 0, 6), nil},
		{"request bound", rates(1, 0, 100, 50), []string{"ttft.p99, tpot.p99, itl.p99, e2e.p99 at rate=50: about 100 requests planned", "or requests >= 528"}},
		{"tiny: the p90 too", rates(1, 5*time.Second, 0, 2), []string{"ttft.p90 at rate=2: about 10 requests", "ttft.p99, tpot.p99"}},
		// A retrying suite also measures the latencies from a request's
		// first attempt.
		{"retry", Plan{Trials: 1, Rates: []float64{6}, Duration: 8 * time.Second, Retry: true}, []string{"e2e_user.p99"}},
		// Figures the suite turns off are not gated: no warning for them,
		// by key or by metric; the others still warn.
		{"turned off", Plan{Trials: 1, Rates: []float64{6}, Duration: 8 * time.Second,
			Tolerance: map[string]string{"ttft.p99": "off", "tpot": "off", "itl.p99": "off", "e2e.p99": "5%"}}, []string{"e2e.p99 at rate=6: about 48"}},
		{"all tails off", Plan{Trials: 1, Rates: []float64{6}, Duration: 9 * time.Second,
			Tolerance: map[string]string{"ttft.p99": "off", "tpot.p99": "off", "itl.p99": "off", "e2e.p99": "off"}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := strings.Join(Power(tt.s), "\n")
			if len(tt.want) == 0 && got != "" {
				t.Fatalf("warned %q", got)
			}
			if tt.name == "turned off" && (strings.Contains(got, "ttft.p99") || strings.Contains(got, "tpot")) {
				t.Errorf("warned of figures turned off: %q", got)
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("warnings %q\nwant them to say %q", got, w)
				}
			}
		})
	}
}

// An embeddings answer has no first token: its warnings name end-to-end
// latencies only.
func TestPowerEmbeddingsNamesEndToEndOnly(t *testing.T) {
	t.Parallel()
	got := strings.Join(Power(Plan{Trials: 1, Rates: []float64{6}, Duration: 8 * time.Second, Embeddings: true}), "\n")
	if !strings.HasPrefix(got, "e2e.p99 at rate=6") || strings.Contains(got, "ttft") || strings.Contains(got, "tpot") {
		t.Errorf("warnings %q, want e2e.p99 alone", got)
	}
}

var inf = math.Inf(1)

// histogramOf holds n distinct latencies, 1..n ms.
func histogramOf(n int) *hdrhistogram.Histogram {
	h := hdrhistogram.New(1, 3_600_000_000, 3)
	for i := 1; i <= n; i++ {
		h.RecordValue(int64(i) * 1000)
	}
	return h
}
