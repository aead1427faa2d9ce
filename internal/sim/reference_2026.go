package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"
)

// RatioReference is a published ratio (a speed-up, or one latency over
// another) of speculative decoding or disaggregation beside the
// simulator's, from the same two configurations replayed in virtual time.
type RatioReference struct {
	Test, Figure string
	Published    float64
	Simulated    float64
	// Tolerance bounds |simulated - published| / published; 0 shows the
	// row without holding the simulator to it (an input that was inferred
	// from it, or a figure beyond the model).
	Tolerance float64
	Source    string
	// Note says what is inferred rather than stated.
	Note string
}

// Error is (simulated - published) / published.
func (r RatioReference) Error() float64 { return (r.Simulated - r.Published) / r.Published }

// Within reports whether the row is inside its tolerance (or not gated).
func (r RatioReference) Within() bool {
	return r.Tolerance == 0 || math.Abs(r.Error()) <= r.Tolerance
}

const (
	srcEAGLE3 = "SGLang docs, Speculative Decoding, Performance Highlights (docs.sglang.io/advanced_features/speculative_decoding.html): LLaMA-3.1-8B-Instruct, MT-bench, 1 x H100, batch 1: 158.34 tokens/s without speculation, 373.25 with EAGLE-3 (2.36x); " +
		"EAGLE-3 paper (arxiv.org/abs/2503.01840) abstract: in SGLang, EAGLE-3 gives 1.38x throughput at batch size 64"
	srcMooncakePD = "Mooncake docs, SGLang benchmark results, PD Disaggregation vs. Regular SGLang (github.com/kvcache-ai/Mooncake, docs/source/en/sglang-benchmark-results-v1.md): Qwen2.5-7B-Instruct-GPTQ-Int4 on A10 servers, 1P1D against 2 regular instances"
)

// a10 is the card of the Mooncake benchmark, kept out of the built-in
// list: it prices that reference only.
var a10 = GPUCard{Name: "a10", MemoryGiB: 22.5, BandwidthGBs: 600, TFLOPS: map[string]float64{"bf16": 125}, LinkGBs: 32, AllReduceUs: 40, Interconnect: InterconnectPCIe, // large all-reduces at pcieBusShare of the link: this row's TP 4 ratio depends on it
	Source: "NVIDIA A10 datasheet: 24 GB GDDR6 (22.5 GiB usable), 600 GB/s, 125 TFLOPS BF16 dense, PCIe Gen4 x16 (no NVLink); all-reduce latency as the L40S's"}

// eagle3Llama8B is speculation as the EAGLE-3 figures ran it, as a chain:
// 5 draft steps (SGLang's default speculative_num_steps) over EAGLE-3's
// 32000-token draft vocabulary. The acceptance is inferred (see the rows).
var eagle3Llama8B = Speculative{Method: "eagle", K: 5, Acceptance: 0.72, DraftVocab: 32000}

// RatioReferences replays the published speculative-decoding and
// disaggregation figures on derived profiles.
func RatioReferences() ([]RatioReference, error) {
	var out []RatioReference
	// Speculative decoding: Llama 3.1 8B (the llama-3-8b card's shapes) on one H100.
	m, _ := LookupModel("llama-3-8b")
	h100, _ := LookupGPU("h100-sxm")
	base, err := Derive(Spec{Model: m, GPU: h100, Engine: "sglang"}, Knobs{})
	if err != nil {
		return nil, err
	}
	spec, err := WithSpeculative(base, eagle3Llama8B)
	if err != nil {
		return nil, err
	}
	// MT-bench: short questions, answers of a few hundred tokens (inferred).
	const in, outTok = 128, 256
	run := func(p Profile, c int) float64 {
		return ClosedLoop(p, Load{Concurrency: c, Input: in, Output: outTok, Requests: 4 * c, Staggered: c > 1}).OutputPerSec
	}
	b1, s1 := run(base, 1), run(spec, 1)
	b64, s64 := run(base, 64), run(spec, 64)
	out = append(out,
		RatioReference{Test: "SGLang, Llama-3.1-8B, 1 x H100, batch 1, no speculation", Figure: "output tok/s", Published: 158.34, Simulated: b1, Source: srcEAGLE3,
			Note: "not gated: the sglang engine model's step overhead was set from this figure; MT-bench lengths taken as 128 prompt / 256 output tokens"},
		RatioReference{Test: "SGLang + EAGLE-3, Llama-3.1-8B, 1 x H100, batch 1", Figure: "speed-up", Published: 373.25 / 158.34, Simulated: s1 / b1, Source: srcEAGLE3,
			Note: fmt.Sprintf("not gated: the acceptance rate %.2f per draft token (%.2f tokens per step, k %d) was inferred from this figure, which the tree draft's published acceptance does not give for a chain", eagle3Llama8B.Acceptance, eagle3Llama8B.MeanAccepted(), eagle3Llama8B.K)},
		RatioReference{Test: "SGLang + EAGLE-3, Llama-3.1-8B, 1 x H100, batch 64", Figure: "speed-up", Published: 1.38, Simulated: s64 / b64, Tolerance: ThroughputTolerance, Source: srcEAGLE3,
			Note: "the same speculation settings and acceptance as at batch 1 (the paper's batch-64 settings are not stated)"},
	)

	// Disaggregation: Qwen2.5-7B GPTQ-Int4 on A10s, open-loop Poisson arrivals.
	q, _ := LookupModel("qwen2.5-7b")
	for _, c := range []struct {
		tp, in, out, n, sent int
		rate                 float64
		itlPD, itlReg        float64
		ttftPD, ttReg        float64
	}{
		{tp: 4, in: 8192, out: 512, n: 200, sent: 50, rate: 1, itlPD: 7.23, itlReg: 10.30, ttftPD: 732.54, ttReg: 767.18},
		{tp: 2, in: 2048, out: 512, n: 200, sent: 200, rate: 4, itlPD: 17.06, itlReg: 25.74, ttftPD: 1111.94, ttReg: 310.01},
	} {
		p, err := Derive(Spec{Model: q, GPU: a10, TP: c.tp, Weights: "int4", Engine: "sglang"}, Knobs{MaxModelLen: 16384})
		if err != nil {
			return nil, fmt.Errorf("mooncake reference: %w", err)
		}
		dp, err := WithDisaggregation(p, Disaggregation{LinkGBs: 12.5, LinkLatency: time.Millisecond})
		if err != nil {
			return nil, fmt.Errorf("mooncake reference: %w", err)
		}
		lengths := func(*rand.Rand) (int, int) { return c.in, c.out }
		// Two regular instances share the rate: each sees half of it.
		reg := Simulate(p, Run{Rate: c.rate / 2, Requests: c.n, Lengths: lengths, Seed: 1})
		pd := Simulate(dp, Run{Rate: c.rate, Requests: c.n, Lengths: lengths, Seed: 1})
		ttftReg, itlReg := meanTTFTTPOT(reg)
		ttftPD, itlPD := meanTTFTTPOT(pd)
		name := fmt.Sprintf("SGLang 1P1D vs 2 regular, TP %d each, %d/%d tokens, %g req/s", c.tp, c.in, c.out, c.rate)
		note := "KV link inferred: 12.5 GB/s (100 Gb/s RDMA) + 1 ms; the 2 regular instances as one at half the rate; " + fmt.Sprintf("%d requests replayed where the source sent %d", c.n, c.sent)
		out = append(out,
			RatioReference{Test: name, Figure: "mean ITL, 1P1D / regular", Published: c.itlPD / c.itlReg, Simulated: itlPD / itlReg, Tolerance: ThroughputTolerance, Source: srcMooncakePD, Note: note},
			RatioReference{Test: name, Figure: "mean TTFT, 1P1D / regular", Published: c.ttftPD / c.ttReg, Simulated: ttftPD / ttftReg, Tolerance: LatencyTolerance, Source: srcMooncakePD, Note: note},
		)
	}
	return out, nil
}

// meanTTFTTPOT is a run's mean TTFT and mean time per output token, in ms.
func meanTTFTTPOT(r RunResult) (ttft, tpot float64) {
	if len(r.Samples) == 0 {
		return 0, 0
	}
	for _, s := range r.Samples {
		ttft += float64(s.TTFT)
		tpot += float64(s.TPOT())
	}
	n := float64(len(r.Samples)) * float64(time.Millisecond)
	return ttft / n, tpot / n
}

// RatioMarkdown renders the ratio checks as docs/simulator.md's third table.
func RatioMarkdown(rs []RatioReference) string {
	var b strings.Builder
	b.WriteString("| test | figure | published | simulated | error | tolerance |\n|---|---|---|---|---|---|\n")
	for _, r := range rs {
		mark := ""
		switch {
		case r.Tolerance == 0:
			mark = " (not gated)"
		case !r.Within():
			mark = " ✗"
		}
		tol := "-"
		if r.Tolerance > 0 {
			tol = fmt.Sprintf("±%.0f%%", 100*r.Tolerance)
		}
		fmt.Fprintf(&b, "| %s | %s | %.2f | %.2f | %+.0f%%%s | %s |\n", r.Test, r.Figure, r.Published, r.Simulated, 100*r.Error(), mark, tol)
	}
	return b.String()
}
