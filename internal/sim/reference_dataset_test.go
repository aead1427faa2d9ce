package sim

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// The embedded ShareGPT shape reads, and has the shape the rows rest
// on: many short requests and a long tail, which is what makes a burst
// of them end long after its typical request.
func TestShareGPTLengths(t *testing.T) {
	t.Parallel()
	all, err := datasetPairs()
	if err != nil {
		t.Fatal(err)
	}
	l := all[datasetShareGPT]
	if len(l.pairs) != 879 {
		t.Fatalf("%d pairs, want the 879 the file's header counts", len(l.pairs))
	}
	outs := make([]int, len(l.pairs))
	for i, p := range l.pairs {
		outs[i] = p[1]
	}
	slices.Sort(outs)
	median, p99 := float64(outs[len(outs)/2]), float64(outs[len(outs)*99/100])
	if r := median / l.meanOutput; r < 0.6 || r > 0.8 {
		t.Errorf("completions' median %.0f is %.2f of their mean %.0f, want 0.6-0.8", median, r, l.meanOutput)
	}
	if r := p99 / l.meanOutput; r < 3 || r > 5 {
		t.Errorf("completions' 99th percentile %.0f is %.2f times their mean, want 3-5", p99, r)
	}
	if _, ok := datasetNames[datasetShareGPT]; !ok {
		t.Error("ShareGPT has no printed name")
	}
}

func TestParseLengthPairs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, text string
		pairs      int
		err        string // a fragment; "" for none
	}{
		{"pairs and comments", "# header\n\n10 20\n 30 40 \n", 2, ""},
		{"one field", "10\n", 0, "line 1: want two token counts"},
		{"three fields", "# h\n1 2 3\n", 0, "line 2: want two token counts"},
		{"zero", "0 5\n", 0, "want a whole number from 1 to 2048"},
		{"over the bound", "5 2049\n", 0, "token count \"2049\""},
		{"not a number", "5 x\n", 0, "token count \"x\""},
		{"negative", "-1 5\n", 0, "token count \"-1\""},
		{"nothing", "# only a header\n", 0, "no length pairs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := parseLengthPairs(tc.text)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one with %q", err, tc.err)
				}
				return
			}
			if err != nil || len(l.pairs) != tc.pairs {
				t.Fatalf("%d pairs, error %v; want %d and none", len(l.pairs), err, tc.pairs)
			}
		})
	}
}

func FuzzParseLengthPairs(f *testing.F) {
	f.Add("# h\n10 20\n30 40\n")
	f.Add("1 2048\n")
	f.Add("5 x\n")
	f.Fuzz(func(t *testing.T, text string) {
		l, err := parseLengthPairs(text)
		if err != nil {
			return
		}
		for _, p := range l.pairs {
			if p[0] < 1 || p[1] < 1 || p[0] > maxDatasetTokens || p[1] > maxDatasetTokens {
				t.Fatalf("pair %v out of bounds", p)
			}
		}
		if !(l.meanPrompt >= 1) || !(l.meanOutput >= 1) {
			t.Fatalf("means %v %v", l.meanPrompt, l.meanOutput)
		}
	})
}

// A row's drawn lengths keep the means its source states.
func TestDatasetDrawKeepsTheMeans(t *testing.T) {
	t.Parallel()
	lengths, err := rowLengths(Reference{Dataset: datasetShareGPT, Input: 202, Output: 214})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 20000
	var in, out float64
	for range n {
		i, o := lengths(rng)
		if i < 1 || o < 1 {
			t.Fatalf("drew %d/%d", i, o)
		}
		in, out = in+float64(i), out+float64(o)
	}
	if math.Abs(in/n/202-1) > 0.03 || math.Abs(out/n/214-1) > 0.03 {
		t.Errorf("mean lengths %.1f/%.1f, want 202/214 within 3%%", in/n, out/n)
	}
	if _, err := rowLengths(Reference{Dataset: "nope"}); err == nil || !strings.Contains(err.Error(), `unknown dataset "nope"`) {
		t.Errorf("unknown dataset: error %v", err)
	}
}

// benchmark_serving's figures: the mean ITL pools every gap, so a long
// request weighs more than a short one, and throughput is over the whole
// run; where every request is alike the pooled ITL is the mean TPOT.
func TestBenchmarkServingFigures(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	run := RunResult{Samples: []Sample{
		{Output: 11, Sent: 0, TTFT: 10 * ms, E2E: 110 * ms},        // 10 gaps of 10 ms
		{Output: 101, Sent: 50 * ms, TTFT: 20 * ms, E2E: 520 * ms}, // 100 gaps of 5 ms
	}}
	pooled := figuresOf(run, Reference{BenchmarkServing: true})
	perRequest := figuresOf(run, Reference{})
	if got, want := pooled.Mean.TPOT, (100*ms+500*ms)/110; got != want {
		t.Errorf("pooled ITL %v, want %v (every gap alike)", got, want)
	}
	if got, want := perRequest.Mean.TPOT, (10*ms+5*ms)/2; got != want {
		t.Errorf("mean TPOT %v, want %v (each request alike)", got, want)
	}
	// 112 tokens from the first send (0) to the last end (50+520 ms).
	if got, want := spanThroughput(run), 112/0.570; math.Abs(got-want) > 1e-9 {
		t.Errorf("throughput over the run %.3f tok/s, want %.3f", got, want)
	}
	if got := spanThroughput(RunResult{}); got != 0 {
		t.Errorf("no samples: throughput %v, want 0", got)
	}

	p := derive(t, "llama-3-8b", "h100-sxm", Spec{}, Knobs{})
	fixed := Simulate(p, Run{Rate: 8, Requests: 200, Seed: 3, Lengths: func(*rand.Rand) (int, int) { return 300, 100 }})
	a, b := figuresOf(fixed, Reference{BenchmarkServing: true}).Mean.TPOT, figuresOf(fixed, Reference{}).Mean.TPOT
	if d := a - b; d < -time.Microsecond || d > time.Microsecond {
		t.Errorf("fixed lengths: pooled ITL %v, mean TPOT %v, want them equal", a, b)
	}
}

// A burst of ShareGPT's lengths ends when its longest requests do, long
// after a burst of requests at its means: the reason its rows' throughput
// is lower and their ITL shorter than fixed lengths say.
func TestShareGPTBurstOutlastsItsMeans(t *testing.T) {
	t.Parallel()
	p := derive(t, "llama-3-8b", "h100-sxm", Spec{Engine: "trtllm"}, Knobs{})
	r := Reference{Concurrency: 500, Requests: 500, Input: 202, Output: 214, BenchmarkServing: true}
	fixed := ClosedLoop(p, Load{Concurrency: 500, Requests: 500, Input: 202, Output: 214})
	r.Dataset = datasetShareGPT
	lengths, err := rowLengths(r)
	if err != nil {
		t.Fatal(err)
	}
	varied := burst(p, r, lengths)
	if ratio := varied.OutputPerSec / fixed.OutputPerSec; ratio > 0.8 {
		t.Errorf("ShareGPT burst %.0f tok/s, fixed lengths %.0f: ratio %.2f, want under 0.8", varied.OutputPerSec, fixed.OutputPerSec, ratio)
	}
	if varied.Mean.TPOT >= fixed.Mean.TPOT {
		t.Errorf("ShareGPT burst's pooled ITL %v, fixed lengths' %v: want it shorter (the long requests decode as the batch empties)", varied.Mean.TPOT, fixed.Mean.TPOT)
	}
}

// The client samples a dataset without replacement: each run of as many
// draws as there are pairs takes every pair once, and the next run starts
// a new order.
func TestDatasetSamplerDrawsWithoutReplacement(t *testing.T) {
	t.Parallel()
	l, err := parseLengthPairs("1 10\n2 10\n3 10\n4 10\n5 10\n")
	if err != nil {
		t.Fatal(err)
	}
	draw := l.sampler(3, 10) // mean prompt 3: tokens as written
	rng := rand.New(rand.NewPCG(1, 2))
	var orders [][]int
	for range 4 {
		var got []int
		for range 5 {
			in, out := draw(rng)
			if out != 10 {
				t.Fatalf("output %d, want 10", out)
			}
			got = append(got, in)
		}
		orders = append(orders, slices.Clone(got))
		slices.Sort(got)
		if !slices.Equal(got, []int{1, 2, 3, 4, 5}) {
			t.Fatalf("five draws %v, want each pair once", got)
		}
	}
	if slices.Equal(orders[0], orders[1]) && slices.Equal(orders[1], orders[2]) && slices.Equal(orders[2], orders[3]) {
		t.Errorf("every run drew the pairs in one order %v, want a new order each", orders[0])
	}
}
