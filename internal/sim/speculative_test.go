package sim

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// The drawn tokens per step follow the truncated geometric distribution:
// the mean matches (1 - a^(k+1)) / (1 - a) within sampling error, every
// draw is 1..k+1, and a seed gives the same draws every time.
func TestAcceptanceDistribution(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		k     int
		alpha float64
	}{{1, 0.5}, {3, 0.7}, {5, 0.8}, {4, 0}, {4, 1}} {
		sp := Speculative{K: c.k, Acceptance: c.alpha, Seed: 7}
		a, b := newAcceptor(sp), newAcceptor(sp)
		const n = 200000
		var sum, sq float64
		counts := make([]int, c.k+2)
		for range n {
			x := a.draw()
			if x != b.draw() {
				t.Fatalf("k %d a %g: two acceptors of one seed drew differently", c.k, c.alpha)
			}
			if x < 1 || x > c.k+1 {
				t.Fatalf("k %d a %g: drew %d", c.k, c.alpha, x)
			}
			counts[x]++
			sum += float64(x)
			sq += float64(x * x)
		}
		mean := sum / n
		sd := math.Sqrt(sq/n - mean*mean)
		if want := sp.MeanAccepted(); math.Abs(mean-want) > 4*sd/math.Sqrt(n)+1e-9 {
			t.Errorf("k %d a %g: mean %.4f, want %.4f", c.k, c.alpha, mean, want)
		}
		// P(k+1) = a^k: the chain accepted every draft.
		if want, got := math.Pow(c.alpha, float64(c.k)), float64(counts[c.k+1])/n; math.Abs(got-want) > 0.005 {
			t.Errorf("k %d a %g: P(all accepted) %.4f, want %.4f", c.k, c.alpha, got, want)
		}
	}
}

func specProfile(t *testing.T, model, gpu string, tp int, sp Speculative) (base, spec Profile) {
	t.Helper()
	base = derive(t, model, gpu, Spec{TP: tp}, Knobs{})
	spec, err := WithSpeculative(base, sp)
	if err != nil {
		t.Fatal(err)
	}
	return base, spec
}

// Speculation speeds a lone request up (the verify step streams the
// weights once for k+1 tokens) and speeds a large batch up less or slows
// it down (the verify step is compute-bound there).
func TestSpeculationHelpsAloneNotInABatch(t *testing.T) {
	t.Parallel()
	d, _ := LookupModel("llama-3-8b")
	for _, c := range []struct {
		name          string
		model, gpu    string
		tp            int
		sp            Speculative
		bigBatchSlows bool
	}{
		{"eagle 8B", "llama-3-8b", "h100-sxm", 1, Speculative{Method: "eagle", K: 4, Acceptance: 0.7}, false},
		{"draft 8B for 70B", "llama-3-70b", "h100-sxm", 4, Speculative{Method: "draft", Draft: &d, K: 4, Acceptance: 0.7}, false},
		{"eagle poor acceptance", "llama-3-8b", "h100-sxm", 1, Speculative{Method: "eagle", K: 4, Acceptance: 0.3}, true},
	} {
		base, spec := specProfile(t, c.model, c.gpu, c.tp, c.sp)
		speedup := func(conc int) float64 {
			l := Load{Concurrency: conc, Input: 256, Output: 256, Requests: 3 * conc, Staggered: conc > 1}
			return ClosedLoop(spec, l).OutputPerSec / ClosedLoop(base, l).OutputPerSec
		}
		alone, batch := speedup(1), speedup(128)
		if !c.bigBatchSlows && alone <= 1.2 {
			t.Errorf("%s: a lone request sped up %.2fx, want above 1.2", c.name, alone)
		}
		if batch >= alone {
			t.Errorf("%s: batch of 128 sped up %.2fx, no less than alone (%.2fx)", c.name, batch, alone)
		}
		if c.bigBatchSlows && batch >= 1 {
			t.Errorf("%s: batch of 128 sped up %.2fx, want a slow-down", c.name, batch)
		}
	}
}

// The verify step streams the weights once: at one sequence it costs
// about a decode step, far less than k+1 of them, while the draft adds k
// forwards of the draft.
func TestVerifyStepCost(t *testing.T) {
	t.Parallel()
	base, spec := specProfile(t, "llama-3-8b", "h100-sxm", 1, Speculative{Method: "eagle", K: 4, Acceptance: 0.5})
	b := batch{seqs: 1, decodes: 1, decodeCtx: 500}
	one, sp := base.stepCost()(b), spec.stepCost()(b)
	draft := spec.Speculative.draft.step(b)
	if sp < one+4*DefaultDraftOverhead || sp > one+5*draft {
		t.Errorf("speculative step %v: want a decode step (%v) plus 4 draft forwards (%v each)", sp, one, draft)
	}
	if sp > 2*one {
		t.Errorf("speculative step %v costs twice a decode step (%v) at one sequence", sp, one)
	}
}

// Chunks carry varying token counts: a lone request's steps emit 1..k+1
// tokens, on average the formula's.
func TestSpeculativeChunksVary(t *testing.T) {
	t.Parallel()
	_, spec := specProfile(t, "llama-3-8b", "h100-sxm", 1, Speculative{Method: "eagle", K: 3, Acceptance: 0.6, Seed: 3})
	res := Simulate(spec, Run{Concurrency: 1, Requests: 20, Lengths: func(*rand.Rand) (int, int) { return 100, 400 }, Seed: 1})
	if len(res.Samples) != 20 {
		t.Fatalf("%d samples", len(res.Samples))
	}
	// Steps: 20 prefills and the decode steps; 399 tokens a request after the first.
	perStep := float64(20*399) / float64(res.Steps-20)
	if want := spec.Speculative.MeanAccepted(); math.Abs(perStep-want) > 0.1 {
		t.Errorf("%.3f tokens per decode step, want about %.3f", perStep, want)
	}
	again := Simulate(spec, Run{Concurrency: 1, Requests: 20, Lengths: func(*rand.Rand) (int, int) { return 100, 400 }, Seed: 1})
	if again.Steps != res.Steps || again.Samples[5] != res.Samples[5] {
		t.Error("the same run replayed differently")
	}
}

// The draft takes memory from the KV cache.
func TestDraftTakesKVCache(t *testing.T) {
	t.Parallel()
	d, _ := LookupModel("llama-3-8b")
	base, spec := specProfile(t, "llama-3-70b", "h100-sxm", 4, Speculative{Method: "draft", Draft: &d, K: 4, Acceptance: 0.7})
	if spec.KVBlocks >= base.KVBlocks {
		t.Errorf("KV blocks %d with a draft model, %d without", spec.KVBlocks, base.KVBlocks)
	}
}

func TestSpeculativeErrors(t *testing.T) {
	t.Parallel()
	base := derive(t, "llama-3-8b", "h100-sxm", Spec{}, Knobs{})
	m70, _ := LookupModel("llama-3-70b")
	mix, _ := LookupModel("mixtral-8x7b")
	constant, _ := Lookup("llama3-8b-h100")
	for _, c := range []struct {
		p    Profile
		sp   Speculative
		want string
	}{
		{constant, Speculative{Method: "eagle", K: 3, Acceptance: 0.5}, "derived from cards"},
		{base, Speculative{Method: "medusa", K: 3, Acceptance: 0.5}, `method "medusa"`},
		{base, Speculative{Method: "eagle", K: 0, Acceptance: 0.5}, "k 0"},
		{base, Speculative{Method: "eagle", K: 17, Acceptance: 0.5}, "k 17"},
		{base, Speculative{Method: "eagle", K: 3, Acceptance: 1.5}, "acceptance 1.5"},
		{base, Speculative{Method: "eagle", K: 3, Acceptance: math.NaN()}, "acceptance NaN"},
		{base, Speculative{Method: "draft", K: 3, Acceptance: 0.5}, "needs a draft model"},
		{base, Speculative{Method: "draft", Draft: &mix, K: 3, Acceptance: 0.5}, "tokenizer"},
		{base, Speculative{Method: "eagle", Draft: &m70, K: 3, Acceptance: 0.5}, "draft_model is for method draft"},
		{base, Speculative{Method: "eagle", K: 3, Acceptance: 0.5, DraftTP: 2}, "draft_tp 2"},
		{base, Speculative{Method: "eagle", K: 3, Acceptance: 0.5, DraftOverhead: -time.Millisecond}, "draft_overhead"},
		{func() Profile { p := base; p.TokensPerStep = 3; return p }(), Speculative{Method: "eagle", K: 3, Acceptance: 0.5}, "tokens_per_step 3"},
	} {
		_, err := WithSpeculative(c.p, c.sp)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want one saying %q", c.sp, err, c.want)
		}
	}
}

// Verification computes k+1 positions a sequence: they count against the
// step's token budget, as vLLM counts speculative tokens, and each is
// projected to logits.
func TestVerificationCountsItsPositions(t *testing.T) {
	t.Parallel()
	const k = 3
	_, spec := specProfile(t, "llama-3-8b", "h100-sxm", 1, Speculative{Method: "eagle", K: k, Acceptance: 0.5})
	spec.MaxBatchedTokens = 64
	e := newEngine(spec)
	for range 16 { // 16 decodes of k+1 positions fill a budget of 64
		s := newSeq(10, 100, nil)
		s.prefillLeft, s.computed = 0, 10
		if !e.alloc(s, 10) {
			t.Fatal("no KV for the running sequences")
		}
		e.running = append(e.running, s)
	}
	e.waiting = append(e.waiting, newSeq(32, 8, nil))
	if b := e.schedule(time.Unix(0, 0)); b.decodes != 16 || b.prefill != 0 {
		t.Errorf("step of %d decodes and %d prompt tokens: want the 16 decodes alone, their 64 positions the whole budget", b.decodes, b.prefill)
	}
	// The logits of all k+1 positions: the output projection adds more
	// than one position a sequence could (the smooth maximum with the
	// weights' stream hides some of either).
	b := batch{seqs: 64, decodes: 64, decodeCtx: 64 * 500}
	r := newRoofline(spec.Spec.withDefaults())
	once := r
	once.logitFlops = 0
	full, none := spec.Speculative.cost(r)(b), spec.Speculative.cost(once)(b)
	onePerSeq := time.Duration(64 * r.logitFlops / r.bf16Flops * 1e9)
	if d := full - none; d < 2*onePerSeq {
		t.Errorf("the output projection adds %v to a verify step of 64 sequences, no more than one position a sequence would (%v)", d, onePerSeq)
	}
}
