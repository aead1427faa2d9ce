package sim

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func fixed(in, out int) func(*rand.Rand) (int, int) {
	return func(*rand.Rand) (int, int) { return in, out }
}

// TestSimulate checks the replay against what the step costs make of
// simple loads, figure by figure.
func TestSimulate(t *testing.T) {
	t.Parallel()
	p, _ := Lookup("tiny") // 2 ms a step, 0.5 ms a decode, 10 µs a prompt token; 4 sequences
	t.Run("a lone request", func(t *testing.T) {
		r := Simulate(p, Run{Concurrency: 1, Requests: 3, Lengths: fixed(100, 11)})
		if len(r.Samples) != 3 {
			t.Fatalf("%d samples", len(r.Samples))
		}
		s := r.Samples[0]
		if want := 2*time.Millisecond + 100*10*time.Microsecond; s.TTFT != want {
			t.Errorf("TTFT %v, want one prefill step, %v", s.TTFT, want)
		}
		if want := 2500 * time.Microsecond; s.TPOT() != want {
			t.Errorf("TPOT %v, want one decode step, %v", s.TPOT(), want)
		}
	})
	t.Run("a turnaround misses the next step", func(t *testing.T) {
		// Two clients: the second's next request lands while the first
		// decodes. Without a turnaround it joins the step that starts as
		// its answer ends; with one, it waits for that step to end.
		// Lengths of their own keep the two clients out of step.
		lengths := func(r *rand.Rand) (int, int) { return 100, 5 + r.IntN(20) }
		without := Simulate(p, Run{Concurrency: 2, Warmup: 4, Requests: 40, Lengths: lengths})
		with := Simulate(p, Run{Concurrency: 2, Warmup: 4, Requests: 40, Lengths: lengths, Turnaround: 10 * time.Microsecond})
		a, b := median(ttfts(without)), median(ttfts(with))
		if b-a < 2*time.Millisecond {
			t.Errorf("TTFT %v with a turnaround, %v without: want a step's wait more", b, a)
		}
	})
	t.Run("an open loop at its rate", func(t *testing.T) {
		r := Simulate(p, Run{Rate: 20, Warmup: 10, Requests: 400, Lengths: fixed(50, 5), Seed: 3})
		if len(r.Samples) != 400 || r.Unserved != 0 {
			t.Fatalf("%d samples, %d unserved", len(r.Samples), r.Unserved)
		}
		// 400 arrivals at 20/s span about 20 s, and every request's 5
		// tokens come out in them: 100 tokens/s.
		if w := r.Window.Seconds(); math.Abs(w-20) > 3 {
			t.Errorf("window %.1f s, want about 20", w)
		}
		if tp := r.OutputPerSec(); math.Abs(tp-100) > 10 {
			t.Errorf("output %.1f tok/s, want about 100", tp)
		}
		again := Simulate(p, Run{Rate: 20, Warmup: 10, Requests: 400, Lengths: fixed(50, 5), Seed: 3})
		if again.Window != r.Window || again.Samples[7] != r.Samples[7] {
			t.Error("the same seed replayed differently")
		}
	})
	t.Run("a request longer than the cache ends unserved", func(t *testing.T) {
		q := p
		q.KVBlocks, q.BlockSize = 4, 16 // 64 tokens: less than one request
		r := Simulate(q, Run{Concurrency: 2, Requests: 4, Lengths: fixed(60, 20)})
		if r.Unserved == 0 || len(r.Samples) == 4 {
			t.Errorf("%d served, %d unserved: want the requests left unserved", len(r.Samples), r.Unserved)
		}
	})
}

func ttfts(r RunResult) []time.Duration {
	var out []time.Duration
	for _, s := range r.Samples {
		out = append(out, s.TTFT)
	}
	return out
}

// A latency benchmark's repeated batch: after the warm-up batch each
// request finds its own prompt cached (but its last block) and prefills
// little, where fresh prompts prefill whole; requests of one batch send
// different prompts, so they share nothing with each other.
func TestRepeatPromptsHitTheirOwnPrefix(t *testing.T) {
	t.Parallel()
	p := derive(t, "llama-3-8b", "h100-sxm", Spec{}, Knobs{})
	lengths := func(*rand.Rand) (int, int) { return 4096, 8 }
	ttft := func(repeat bool, warmup int) time.Duration {
		run := Simulate(p, Run{Concurrency: 8, Warmup: warmup, Requests: 8, RepeatPrompts: repeat, Seed: 1, Lengths: lengths})
		if len(run.Samples) != 8 {
			t.Fatalf("%d samples, want 8", len(run.Samples))
		}
		var sum time.Duration
		for _, s := range run.Samples {
			sum += s.TTFT
		}
		return sum / 8
	}
	// The first batch finds nothing cached; the second, its own prompts.
	if fresh, first := ttft(false, 0), ttft(true, 0); first != fresh {
		t.Errorf("first batch of repeated prompts: TTFT %v, want a fresh batch's %v (nothing is cached yet)", first, fresh)
	}
	if fresh, warm := ttft(false, 8), ttft(true, 8); warm > fresh/5 {
		t.Errorf("second batch of repeated prompts: TTFT %v, want under a fifth of fresh prompts' %v", warm, fresh)
	}

	// A profile without a prefix cache prefills every prompt whole.
	noCache := p
	noCache.PrefixCaching = false
	run := func(p Profile, repeat bool) time.Duration {
		r := Simulate(p, Run{Concurrency: 8, Warmup: 8, Requests: 8, RepeatPrompts: repeat, Seed: 1, Lengths: lengths})
		return r.Samples[0].TTFT
	}
	if got, want := run(noCache, true), run(noCache, false); got != want {
		t.Errorf("no prefix cache: repeated prompts' TTFT %v, fresh %v: want them equal", got, want)
	}
	// A repeated prompt has its first sending's lengths too.
	next := 0
	counted := func(*rand.Rand) (int, int) { next++; return 100 * next, next }
	r := Simulate(p, Run{Concurrency: 4, Warmup: 4, Requests: 4, RepeatPrompts: true, Seed: 1, Lengths: counted})
	var got []int
	for _, s := range r.Samples {
		got = append(got, s.Prompt)
	}
	slices.Sort(got)
	if !slices.Equal(got, []int{100, 200, 300, 400}) || next != 4 {
		t.Errorf("measured prompts %v after %d draws, want the warm-up's 100-400 after 4", got, next)
	}

	a, b := repeatedPromptHashes(0, 64, 16), repeatedPromptHashes(1, 64, 16)
	if len(a) != 4 || slices.Equal(a, b) || !slices.Equal(a, repeatedPromptHashes(0, 64, 16)) {
		t.Errorf("hashes %v and %v: want four a prompt, the same for the same prompt, apart for another", a, b)
	}
	seen := map[uint64]bool{}
	for prompt := range 64 {
		for _, h := range repeatedPromptHashes(prompt, 1024, 16) {
			if seen[h] {
				t.Fatalf("prompt %d: hash %x seen before", prompt, h)
			}
			seen[h] = true
		}
	}
}
