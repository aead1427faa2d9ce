package workload

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image/png"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
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
		// The trace's output lengths: 32, 64 and 128 drawn uniformly.
		{"file", suite.Dist{Kind: "file", Path: "../../suites/data/trace-mini.jsonl", Field: "output_tokens"}, math.NaN(), math.NaN(), math.NaN(), 32, 128},
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
	a, _ := NewGenerator(w, Sources{})
	b, _ := NewGenerator(w, Sources{})
	w.Seed = 8
	c, _ := NewGenerator(w, Sources{})
	differs := false
	for range 100 {
		ra, rb, rc := a.Next(), b.Next(), c.Next()
		if !reflect.DeepEqual(ra, rb) {
			t.Fatalf("same seed, different requests: %+v vs %+v", ra, rb)
		}
		if !reflect.DeepEqual(ra, rc) {
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

// Each point draws its own prompt text (the same in every run) over the
// same lengths, so a prefix cache cannot serve a point from the last one.
func TestPointsDrawTheirOwnPrompts(t *testing.T) {
	t.Parallel()
	w := suite.Workload{InputTokens: suite.Dist{Kind: "fixed", Value: 40}, OutputTokens: suite.Dist{Kind: "fixed", Value: 8}, Seed: 7}
	p0, _ := NewGenerator(w, Sources{Point: 0})
	p1, _ := NewGenerator(w, Sources{Point: 1})
	again, _ := NewGenerator(w, Sources{Point: 1})
	for range 20 {
		a, b, c := p0.Next(), p1.Next(), again.Next()
		if a.Prompt == b.Prompt || a.InputTokens != b.InputTokens || a.OutputTokens != b.OutputTokens {
			t.Fatalf("points 0 and 1: %q and %q (%d, %d tokens)", a.Prompt, b.Prompt, a.InputTokens, b.InputTokens)
		}
		if !reflect.DeepEqual(b, c) {
			t.Fatalf("point 1 drew differently in two runs")
		}
	}
}

// A salt changes every prompt's text and keeps everything else: lengths,
// outputs, which shared prefix a request opens with, think times. The
// same salt draws the same text again, and no salt draws what an
// unsalted run always drew.
func TestSaltKeepsLengths(t *testing.T) {
	t.Parallel()
	base := suite.Workload{InputTokens: suite.Dist{Kind: "lognormal", Median: 60, Sigma: 0.5}, OutputTokens: suite.Dist{Kind: "uniform", Min: 1, Max: 30}, Seed: 7}
	for _, tc := range []struct {
		name    string
		prompts suite.Prompts
	}{
		{"synthetic", suite.Prompts{Kind: suite.PromptSynthetic}},
		{"shared_prefix", suite.Prompts{Kind: suite.PromptSharedPrefix, Prefixes: 3, PrefixTokens: 50}},
		{"multi_turn", suite.Prompts{Kind: suite.PromptMultiTurn, Turns: 3, ThinkTime: suite.Duration(time.Second)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := base
			w.Prompts = tc.prompts
			gen := func(salt string) *Generator {
				g, err := NewGenerator(w, Sources{Point: 2, Salt: salt})
				if err != nil {
					t.Fatal(err)
				}
				return g
			}
			plain, a, again, b := gen(""), gen("run-a"), gen("run-a"), gen("run-b")
			differ := 0
			for range 50 {
				rp, ra, ra2, rb := plain.Next(), a.Next(), again.Next(), b.Next()
				if !reflect.DeepEqual(ra, ra2) {
					t.Fatalf("one salt drew two texts: %q and %q", ra.Prompt, ra2.Prompt)
				}
				for _, r := range []Request{ra, rb} {
					if r.InputTokens != rp.InputTokens || r.OutputTokens != rp.OutputTokens || r.Think != rp.Think || len(r.History) != len(rp.History) {
						t.Fatalf("salt changed a length: %+v against %+v", r, rp)
					}
					if got, want := len(strings.Fields(r.System+" "+r.Prompt)), len(strings.Fields(rp.System+" "+rp.Prompt)); got != want {
						t.Fatalf("salted prompt has %d words, unsalted %d", got, want)
					}
					if (r.System == "") != (rp.System == "") {
						t.Fatalf("salt changed whether a prefix is sent")
					}
				}
				if ra.Prompt != rp.Prompt && ra.Prompt != rb.Prompt {
					differ++
				}
				if rp.System != "" && (ra.System == rp.System || ra.System == rb.System) {
					t.Fatalf("salted runs share a prefix's text: %q", ra.System)
				}
			}
			if differ < 45 {
				t.Errorf("only %d of 50 salted prompts differ from the unsalted and the other salt's", differ)
			}
		})
	}
	// The unsalted sequence is what it always was: salting is opt-in and
	// leaves baselines of unsalted runs comparable request for request.
	w := base
	w.Prompts = suite.Prompts{Kind: suite.PromptSynthetic}
	g0, _ := NewGenerator(w, Sources{Point: 0})
	if got := g0.Next().Prompt; !strings.HasPrefix(got, unsaltedFirstWords) {
		t.Errorf("unsalted point 0 begins %q, want %q", got[:min(len(got), 40)], unsaltedFirstWords)
	}
}

func process(t *testing.T, a suite.Arrival, rate float64, trace *Trace) Process {
	t.Helper()
	p, err := NewProcess(a, rate, rand.NewPCG(3, 4), trace)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// timeline draws a whole schedule, for tests that look at its shape.
func timeline(p Process, end, skip time.Duration, limit int) []time.Duration {
	var out []time.Duration
	s := NewSchedule(p, end, skip, limit)
	for at, ok := s.Next(); ok; at, ok = s.Next() {
		out = append(out, at)
	}
	return out
}

// fixedTimes is a process that draws the given times, then ends.
type fixedTimes []float64

func (f *fixedTimes) Next() float64 {
	if len(*f) == 0 {
		return math.Inf(1)
	}
	t := (*f)[0]
	*f = (*f)[1:]
	return t
}

func gapStats(tl []time.Duration) (mean, cv float64) {
	gaps := make([]float64, len(tl)-1)
	for i := range gaps {
		gaps[i] = (tl[i+1] - tl[i]).Seconds()
	}
	m, s := meanStd(gaps)
	return m, s / m
}

func TestSchedule(t *testing.T) {
	t.Parallel()
	t.Run("constant", func(t *testing.T) {
		tl := timeline(process(t, suite.Arrival{Kind: "constant"}, 4, nil), 10*time.Second, 0, 0)
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
		tl := timeline(process(t, suite.Arrival{Kind: "poisson"}, rate, nil), 200*time.Second, 0, 0)
		// Count ~ Poisson(10000): within 3 sd (300).
		if n := float64(len(tl)); math.Abs(n-rate*200) > 300 {
			t.Errorf("%v arrivals, want about %v", n, rate*200)
		}
		m, cv := gapStats(tl)
		// Exponential gaps: mean 1/rate, coefficient of variation 1.
		if math.Abs(m*rate-1) > 0.03 || math.Abs(cv-1) > 0.03 {
			t.Errorf("gap mean %.5f cv %.3f, want %.5f and 1", m, cv, 1/rate)
		}
		// Memorylessness: P(gap > mean) = 1/e.
		over := 0
		for i := 1; i < len(tl); i++ {
			if (tl[i] - tl[i-1]).Seconds() > 1/rate {
				over++
			}
		}
		if p := float64(over) / float64(len(tl)-1); math.Abs(p-1/math.E) > 0.015 {
			t.Errorf("P(gap > mean) = %.3f, want %.3f", p, 1/math.E)
		}
	})
	t.Run("gamma", func(t *testing.T) {
		for _, k := range []float64{0.25, 1, 4} {
			tl := timeline(process(t, suite.Arrival{Kind: "gamma", Burstiness: k}, 20, nil), 0, 0, 20000)
			m, cv := gapStats(tl)
			// Gamma(k) gaps: mean 1/rate whatever k, cv 1/sqrt(k).
			if math.Abs(m*20-1) > 0.04 || math.Abs(cv-1/math.Sqrt(k)) > 0.05/math.Sqrt(k) {
				t.Errorf("burstiness %v: gap mean %.4f cv %.3f, want %.4f and %.3f", k, m, cv, 1/20.0, 1/math.Sqrt(k))
			}
		}
	})
	t.Run("bursts", func(t *testing.T) {
		// 10/s, x5 during the last 2 s of every 10 s: 8 s x 10 + 2 s x 50 = 180 per period.
		a := suite.Arrival{Kind: "bursts", Factor: 5, On: suite.Duration(2 * time.Second), Period: suite.Duration(10 * time.Second)}
		tl := timeline(process(t, a, 10, nil), 1000*time.Second, 0, 0)
		var in, out int
		for _, at := range tl {
			if math.Mod(at.Seconds(), 10) >= 8 {
				in++
			} else {
				out++
			}
		}
		if math.Abs(float64(in)-10000) > 400 || math.Abs(float64(out)-8000) > 360 {
			t.Errorf("%d arrivals in spikes (want ~10000), %d between (want ~8000)", in, out)
		}
	})
	t.Run("trace rescaled", func(t *testing.T) {
		tr, err := NewTrace([]TraceEntry{{At: 100}, {At: 101}, {At: 102.5}, {At: 103}}) // 3 gaps in 3 s: 1 req/s
		if err != nil {
			t.Fatal(err)
		}
		tl := timeline(process(t, suite.Arrival{Kind: "trace"}, 2, tr), 0, 0, 100)
		want := []time.Duration{0, 500 * time.Millisecond, 1250 * time.Millisecond, 1500 * time.Millisecond}
		if fmt.Sprint(tl) != fmt.Sprint(want) {
			t.Errorf("timeline %v, want %v (the trace at twice its rate, then its end)", tl, want)
		}
	})
	t.Run("limit", func(t *testing.T) {
		if tl := timeline(process(t, suite.Arrival{Kind: "poisson"}, 10, nil), time.Hour, 0, 25); len(tl) != 25 {
			t.Errorf("%d arrivals, want the limit 25", len(tl))
		}
		// A warm-up of 1 s, then exactly 25 measured arrivals.
		tl := timeline(process(t, suite.Arrival{Kind: "poisson"}, 10, nil), 0, time.Second, 25)
		measured := 0
		for _, at := range tl {
			if at >= time.Second {
				measured++
			}
		}
		if measured != 25 || tl[len(tl)-1] < time.Second {
			t.Errorf("%d measured arrivals after the warm-up, want 25", measured)
		}
	})
	t.Run("arrivals repeat", func(t *testing.T) {
		// Counting a point and sending it are two passes over one plan:
		// they must see the same times.
		mk, err := NewArrivals(suite.Arrival{Kind: "gamma", Burstiness: 0.5}, 30, 7, 2, nil)
		if err != nil {
			t.Fatal(err)
		}
		a, b := timeline(mk(), 0, 0, 500), timeline(mk(), 0, 0, 500)
		if fmt.Sprint(a) != fmt.Sprint(b) {
			t.Error("two processes from one Arrivals drew different times")
		}
		other, _ := NewArrivals(suite.Arrival{Kind: "gamma", Burstiness: 0.5}, 30, 7, 3, nil)
		if c := timeline(other(), 0, 0, 500); fmt.Sprint(a) == fmt.Sprint(c) {
			t.Error("another point drew the same times")
		}
	})
	t.Run("past a duration's range", func(t *testing.T) {
		// A process whose times leave what a time.Duration holds has ended;
		// converting them would wrap to negative offsets.
		s := NewSchedule(&fixedTimes{1, 2e9, 1e10, 3e10}, 0, 0, 100)
		var got []time.Duration
		for at, ok := s.Next(); ok; at, ok = s.Next() {
			got = append(got, at)
		}
		if len(got) != 2 || got[1] != 2e9*time.Second {
			t.Errorf("offsets %v, want 1s and 2e9s, then the end", got)
		}
	})
	t.Run("errors", func(t *testing.T) {
		if _, err := NewArrivals(suite.Arrival{Kind: "trace"}, 1, 1, 0, nil); err == nil {
			t.Error("Arrivals for a trace without a trace accepted")
		}
		if _, err := NewProcess(suite.Arrival{Kind: "poisson"}, 0, rand.NewPCG(1, 1), nil); err == nil {
			t.Error("rate 0 accepted")
		}
		if _, err := NewProcess(suite.Arrival{Kind: "zipf"}, 1, rand.NewPCG(1, 1), nil); err == nil {
			t.Error("unknown process accepted")
		}
		if _, err := NewProcess(suite.Arrival{Kind: "trace"}, 1, rand.NewPCG(1, 1), nil); err == nil {
			t.Error("trace without a trace accepted")
		}
	})
}

// A ramp offers, in every one-second slice, what its rate curve says:
// within 5% for constant arrivals (exact but for rounding to whole
// arrivals); for Poisson ones within 4 standard deviations of the count
// (sqrt of its mean), their own noise.
func TestRampOffersItsCurve(t *testing.T) {
	t.Parallel()
	const rate, from, over = 400.0, 40.0, 10.0
	curves := map[suite.RampKind]func(t float64) float64{
		suite.RampLinear:      func(t float64) float64 { return from + (rate-from)*t/over },
		suite.RampExponential: func(t float64) float64 { return from * math.Pow(rate/from, t/over) },
	}
	for kind, curve := range curves {
		for _, tc := range []struct {
			arrival suite.ArrivalKind
			tol     float64
		}{{suite.ArrivalConstant, 0.05}, {suite.ArrivalPoisson, 0}} {
			base, err := NewArrivals(suite.Arrival{Kind: tc.arrival}, rate, 11, 0, nil)
			if err != nil {
				t.Fatal(err)
			}
			mk := Ramped(base, rate, suite.Ramp{Kind: kind, From: from, Over: suite.Duration(over * float64(time.Second))})
			tl := timeline(mk(), 14*time.Second, 0, 0)
			slices := make([]int, 14)
			for _, at := range tl {
				slices[int(at.Seconds())]++
			}
			for s, got := range slices {
				// The curve's integral over the slice, by the midpoint rule
				// on 100 steps; flat after the ramp.
				want := 0.0
				for i := range 100 {
					x := float64(s) + (float64(i)+0.5)/100
					if x >= over {
						want += rate / 100
					} else {
						want += curve(x) / 100
					}
				}
				limit := tc.tol*want + 1
				if tc.arrival == suite.ArrivalPoisson {
					limit = 4 * math.Sqrt(want)
				}
				if math.Abs(float64(got)-want) > limit {
					t.Errorf("%s ramp, %s arrivals, second %d: %d arrivals, want %.1f ±%.1f", kind, tc.arrival, s, got, want, limit)
				}
			}
		}
	}
}

// A share of requests is abandoned, the same ones in every run.
func TestCancelShare(t *testing.T) {
	t.Parallel()
	w := suite.Workload{
		InputTokens: suite.Dist{Kind: "fixed", Value: 10}, OutputTokens: suite.Dist{Kind: "fixed", Value: 100},
		Cancel: &suite.Cancel{Share: 0.3, AfterTokens: suite.Dist{Kind: "uniform", Min: 5, Max: 50}}, Seed: 4,
	}
	draw := func() []int {
		g, err := NewGenerator(w, Sources{})
		if err != nil {
			t.Fatal(err)
		}
		out := make([]int, 4000)
		for i := range out {
			out[i] = g.Next().AbandonAfter
		}
		return out
	}
	a, b := draw(), draw()
	n := 0
	for i, v := range a {
		if v != b[i] {
			t.Fatalf("request %d: abandoned after %d, then %d: not the same in every run", i, v, b[i])
		}
		if v > 0 {
			n++
			if v < 5 || v > 50 {
				t.Errorf("request %d abandoned after %d tokens, outside 5-50", i, v)
			}
		}
	}
	// Binomial(4000, 0.3): sd 29; 4 sd.
	if math.Abs(float64(n)-1200) > 116 {
		t.Errorf("%d of 4000 abandoned, want about 1200", n)
	}
}

func TestParseTrace(t *testing.T) {
	t.Parallel()
	good := "{\"timestamp_ms\": 1000}\n\n{\"timestamp\": 2.5, \"input_tokens\": 10, \"output_tokens\": 5}\n"
	tr, err := ParseTrace(strings.NewReader(good))
	if err != nil {
		t.Fatal(err)
	}
	if tr.Len() != 2 || tr.Entry(0).At != 1 || tr.Entry(1).InputTokens != 10 || tr.Rate() != 1/1.5 {
		t.Errorf("trace %+v %+v rate %v", tr.Entry(0), tr.Entry(1), tr.Rate())
	}
	for in, want := range map[string]string{
		"{\"timestamp\": 1}\n{\"ts\": 2}\n":          "2: json: unknown field",
		"{\"timestamp\": 1, \"timestamp_ms\": 1}\n":  "1: want exactly one",
		"{\"timestamp\": -1}\n":                      "1: timestamp -1",
		"{\"timestamp\": 1, \"input_tokens\": -3}\n": "1: negative",
		"":                               "no entries",
		"{\"timestamp\": 1}\nnot json\n": "2: invalid character",
		"{\"timestamp\": 1, \"hash_ids\": [0, -2]}\n":                    "1: hash_ids: negative block id -2",
		"{\"timestamp\": 1, \"input_length\": 5, \"input_tokens\": 5}\n": "1: mixes the Mooncake fields",
		"{\"timestamp\": 1, \"input_length\": 5, \"hash_id\": [1]}\n":    "1: json: unknown field \"hash_id\"",
		"{\"timestamp_ms\": 1, \"output_length\": 5}\n":                  "1: mixes the Mooncake fields",
	} {
		if _, err := ParseTrace(strings.NewReader(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseTrace(%q) error %v, want %q", in, err, want)
		}
	}
}

// Mooncake's lines: timestamps in milliseconds, lengths and block ids.
func TestParseMooncakeTrace(t *testing.T) {
	t.Parallel()
	in := `{"timestamp": 27482, "input_length": 6955, "output_length": 52, "hash_ids": [46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 2353, 2354]}
{"timestamp": 30535, "input_length": 6472, "output_length": 26, "hash_ids": [46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 2366]}
`
	tr, err := ParseTrace(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	e := []TraceEntry{tr.Entry(0), tr.Entry(1)}
	if tr.Len() != 2 || e[0].At != 27.482 || e[0].InputTokens != 6955 || e[1].OutputTokens != 26 || len(e[1].HashIDs) != 13 || e[1].HashIDs[12] != 2366 {
		t.Errorf("entries %+v", e)
	}
}

func FuzzParseTrace(f *testing.F) {
	f.Add("{\"timestamp\": 2.5, \"input_tokens\": 10, \"output_tokens\": 5}\n")
	f.Add("{\"timestamp\": 27482, \"input_length\": 6955, \"output_length\": 52, \"hash_ids\": [46, 47]}\n")
	f.Add("{\"timestamp_ms\": 1e3}\n\n{\"timestamp_ms\": 0}")
	f.Add("{\"timestamp\": 1e308}\n{\"timestamp\": null}")
	f.Add("{\"timestamp\": 0}\n{\"timestamp\": 1e300}\n{\"timestamp\": 3}\n{\"timestamp\": 2}\n")
	f.Add("{\"timestamp\": 0, \"input_length\": 102400000, \"output_length\": 10, \"hash_ids\": [9223372036854775807]}\n")
	f.Fuzz(func(t *testing.T, in string) {
		tr, err := ParseTrace(strings.NewReader(in))
		// validate's reading agrees with a run's.
		n := 0
		if err2 := ScanTrace(strings.NewReader(in), func(TraceEntry) { n++ }); fmt.Sprint(err) != fmt.Sprint(err2) || (err == nil && n != tr.Len()) {
			t.Fatalf("ParseTrace: %v; ScanTrace: %v after %d entries", err, err2, n)
		}
		if err != nil {
			return
		}
		for i := range tr.Len() {
			e := tr.Entry(i)
			if e.At < 0 || math.IsInf(e.At, 0) || e.InputTokens < 0 || e.OutputTokens < 0 || e.InputTokens > suite.MaxTokens || e.OutputTokens > suite.MaxTokens ||
				len(e.HashIDs) > MaxEntryHashIDs || slices.ContainsFunc(e.HashIDs, func(id int) bool { return id < 0 }) ||
				(i > 0 && e.At < tr.Entry(i-1).At) || e.At-tr.Entry(0).At > MaxTraceSpan.Seconds() {
				t.Fatalf("entry %d %+v of a parsed trace", i, e)
			}
		}
		if r := tr.Rate(); !(r > 0) {
			t.Fatalf("rate %v", r)
		}
	})
}

// A heavy tail never yields a length above the bound, nor one that
// overflows: every sample is between 1 and suite.MaxTokens.
func TestLengthsStayBounded(t *testing.T) {
	t.Parallel()
	for _, d := range []suite.Dist{
		{Kind: suite.DistLognormal, Median: 1000, Sigma: 40},
		{Kind: suite.DistNormal, Mean: 100, Stddev: 1e300},
		{Kind: suite.DistLognormal, Median: 100, Sigma: 3, Max: 500},
	} {
		l, err := NewLength(d, rand.NewPCG(1, 2))
		if err != nil {
			t.Fatal(err)
		}
		hi := suite.MaxTokens
		if d.Max > 0 {
			hi = int(d.Max)
		}
		for range 10000 {
			if v := l.Sample(); v < 1 || v > hi {
				t.Fatalf("%+v: sample %d outside [1, %d]", d, v, hi)
			}
		}
	}
}

// BenchmarkSchedule draws a point's arrivals as the dispatcher does: the
// cost per arrival, and (allocs/op, B/op) the memory a plan of b.N
// arrivals holds, which must not grow with b.N.
func BenchmarkSchedule(b *testing.B) {
	mk, err := NewArrivals(suite.Arrival{Kind: "poisson"}, 1e5, 1, 0, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	s := NewSchedule(mk(), 0, 0, 0) // no end: the loop decides
	for b.Loop() {
		if _, ok := s.Next(); !ok {
			b.Fatal("schedule ended early")
		}
	}
}

// A mix of models draws each request's model by weight from its own
// stream: over 10,000 requests the shares are within 2% of the weights,
// and the lengths and prompts are those of the same workload without a
// mix.
func TestModelMix(t *testing.T) {
	t.Parallel()
	w := suite.Workload{
		InputTokens:  suite.Dist{Kind: "lognormal", Median: 100, Sigma: 0.8},
		OutputTokens: suite.Dist{Kind: "uniform", Min: 1, Max: 50},
		Seed:         7,
	}
	plain, _ := NewGenerator(w, Sources{})
	w.Models = []suite.ModelShare{{Name: "base", Weight: 6}, {Name: "sql-lora", Weight: 3}, {Name: "chat-lora", Weight: 1}, {Name: "retired", Weight: 0}}
	mixed, err := NewGenerator(w, Sources{})
	if err != nil {
		t.Fatal(err)
	}
	const n = 10000
	counts := map[string]int{}
	for range n {
		a, b := plain.Next(), mixed.Next()
		counts[b.Model]++
		b.Model = ""
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("the mix changed a request: %+v vs %+v", a, b)
		}
	}
	for _, m := range w.Models {
		want := m.Weight / 10
		if got := float64(counts[m.Name]) / n; math.Abs(got-want) > 0.02 {
			t.Errorf("%s: share %.4f, want %.2f within 0.02", m.Name, got, want)
		}
	}
	if counts["retired"] != 0 {
		t.Errorf("a model of weight 0 got %d requests", counts["retired"])
	}
	w.Models = []suite.ModelShare{{Name: "a", Weight: 0}}
	if _, err := NewGenerator(w, Sources{}); err == nil || !strings.Contains(err.Error(), "sum to zero") {
		t.Errorf("weights summing to zero: %v", err)
	}
}

// Images are synthesized at the suite's resolutions, decode as what they
// claim, come in the drawn counts, and are the same in every run.
func TestImages(t *testing.T) {
	t.Parallel()
	w := suite.Workload{
		InputTokens: suite.Dist{Kind: "fixed", Value: 20}, OutputTokens: suite.Dist{Kind: "fixed", Value: 5}, Seed: 3,
		Images: &suite.Images{Count: &suite.Dist{Kind: "uniform", Min: 1, Max: 3}, Format: "png",
			Sizes: []suite.ImageSize{{Width: 64, Height: 48, Weight: 3}, {Width: 32, Height: 32, Weight: 1}}},
	}
	a, err := NewGenerator(w, Sources{})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := NewGenerator(w, Sources{})
	sizes, counts := map[[2]int]int{}, map[int]int{}
	for range 400 {
		ra, rb := a.Next(), b.Next()
		if !reflect.DeepEqual(ra.Images, rb.Images) {
			t.Fatal("two runs drew different images")
		}
		counts[len(ra.Images)]++
		for _, u := range ra.Images {
			data, ok := strings.CutPrefix(u, "data:image/png;base64,")
			if !ok {
				t.Fatalf("not a PNG data URL: %.40s", u)
			}
			raw, err := base64.StdEncoding.DecodeString(data)
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := png.DecodeConfig(bytes.NewReader(raw))
			if err != nil {
				t.Fatal(err)
			}
			sizes[[2]int{cfg.Width, cfg.Height}]++
		}
	}
	if len(counts) != 3 || counts[1] == 0 || counts[3] == 0 {
		t.Errorf("images per request %v, want 1 to 3", counts)
	}
	if big, small := sizes[[2]int{64, 48}], sizes[[2]int{32, 32}]; len(sizes) != 2 || big < 2*small {
		t.Errorf("resolutions %v, want 64x48 three times as often as 32x32", sizes)
	}
}

// A data file reports every bad line, each numbered, up to maxLineErrors.
func TestEachLineReportsEveryBadLine(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for i := range 30 {
		if i%5 == 0 {
			b.WriteString("{\"timestamp\": 1, \"input_tokens\": 1, \"output_tokens\": 1}\n")
			continue
		}
		fmt.Fprintf(&b, "{\"timestamp\": %d, \"input_tokens\": -1, \"output_tokens\": 1}\n", i)
	}
	_, err := ParseTrace(strings.NewReader(b.String()))
	msg := atFile("t.jsonl", err).Error()
	lines := strings.Split(msg, "\n")
	if len(lines) != maxLineErrors+1 || lines[0] != "t.jsonl:2: negative token count" ||
		lines[maxLineErrors] != "t.jsonl: more bad lines after the first 20 not shown" {
		t.Errorf("%d lines:\n%s", len(lines), msg)
	}
	// Line 6 is good: not among those reported.
	if strings.Contains(msg, "t.jsonl:6:") {
		t.Errorf("a good line reported:\n%s", msg)
	}
}

// unsaltedFirstWords is how the unsalted point 0 of TestSaltKeepsLengths's
// workload began before salting existed.
const unsaltedFirstWords = "need picture hour image health wife type"
