package sim

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// Reference is a published serving measurement with its settings, for
// checking derived profiles against the real world.
type Reference struct {
	// Test names the measurement as its source does.
	Test   string
	Engine string
	Model  string // model card
	GPU    string // GPU card
	TP     int
	// Weights and KVCache as the measurement ran them.
	Weights, KVCache string
	// A closed loop of Concurrency clients sending Input/Output-token
	// requests (vLLM's latency test is one batch: Requests = Concurrency).
	Concurrency, Input, Output, Requests int
	// Published figures; zero where the source gives none.
	E2EMs, TTFTMs, TPOTMs, OutputPerSec float64
	Source                              string
	// Note says what is inferred rather than stated.
	Note string
	// PastKnee marks a point beyond the knee, shown for the knee's place
	// but not held to the tolerances: there, queueing amplifies any error.
	PastKnee bool
}

const (
	srcVLLMH100 = "vLLM performance benchmark, latency tests (benchmark_latency: batch 8, 32 in, 128 out, BF16), 8xH100 run: buildkite.com/vllm/performance-benchmark (build published as buildkite.com/elastic/enterprise-search-ruby/builds/571)"
	srcVLLMH200 = "vLLM performance benchmark, latency tests, H200 run: buildkite.com/vllm/performance-benchmark/builds/9515"
	srcVLLMA100 = "vLLM performance benchmark, latency tests, A100-SXM4-80GB run: published as buildkite.com/julialang/opencl-dot-jl/builds/306"
	srcNIM      = "NVIDIA NIM LLM benchmarking guide 1.0.0, Performance: Llama-3.3-70b-instruct, NIM 1.8.0, 2 x H100 80G, fp8 TP2, 5000 in / 500 out: docs.nvidia.com/nim/benchmarking/llm/1.0.0/performance"
)

// References are the published figures the derived profiles are checked
// against (the README's table, `benchci sim check`).
var References = []Reference{
	{Test: "latency_llama8B_tp1", Engine: "vLLM", Model: "llama-3-8b", GPU: "h100-sxm", TP: 1, Concurrency: 8, Input: 32, Output: 128, Requests: 8, E2EMs: 997.5, Source: srcVLLMH100},
	{Test: "latency_llama70B_tp4", Engine: "vLLM", Model: "llama-3-70b", GPU: "h100-sxm", TP: 4, Concurrency: 8, Input: 32, Output: 128, Requests: 8, E2EMs: 2444.5, Source: srcVLLMH100},
	{Test: "latency_mixtral8x7B_tp2", Engine: "vLLM", Model: "mixtral-8x7b", GPU: "h100-sxm", TP: 2, Concurrency: 8, Input: 32, Output: 128, Requests: 8, E2EMs: 2327.0, Source: srcVLLMH100},
	{Test: "latency_llama8B_tp1", Engine: "vLLM", Model: "llama-3-8b", GPU: "h200", TP: 1, Concurrency: 8, Input: 32, Output: 128, Requests: 8, E2EMs: 833.4, Source: srcVLLMH200},
	{Test: "latency_llama70B_tp4", Engine: "vLLM", Model: "llama-3-70b", GPU: "h200", TP: 4, Concurrency: 8, Input: 32, Output: 128, Requests: 8, E2EMs: 2077.5, Source: srcVLLMH200},
	{Test: "latency_mixtral8x7B_tp2", Engine: "vLLM", Model: "mixtral-8x7b", GPU: "h200", TP: 2, Concurrency: 8, Input: 32, Output: 128, Requests: 8, E2EMs: 1917.4, Source: srcVLLMH200},
	{Test: "latency_llama8B_tp1", Engine: "vLLM", Model: "llama-3-8b", GPU: "a100-80gb", TP: 1, Concurrency: 8, Input: 32, Output: 128, Requests: 8, E2EMs: 1585.4, Source: srcVLLMA100},
	{Test: "concurrency 1", Engine: "TensorRT-LLM (NIM)", Model: "llama-3-70b", GPU: "h100-sxm", TP: 2, Weights: "fp8", KVCache: "fp8", Concurrency: 1, Input: 5000, Output: 500, Requests: 8,
		TTFTMs: 406.77, TPOTMs: 18.58, OutputPerSec: 51.67, Source: srcNIM, Note: "FP8 KV cache inferred: with BF16 KV the published knee (between 50 and 100) could not hold 50 requests"},
	{Test: "concurrency 5", Engine: "TensorRT-LLM (NIM)", Model: "llama-3-70b", GPU: "h100-sxm", TP: 2, Weights: "fp8", KVCache: "fp8", Concurrency: 5, Input: 5000, Output: 500, Requests: 40,
		TTFTMs: 546.7, TPOTMs: 21.83, OutputPerSec: 218.48, Source: srcNIM},
	{Test: "concurrency 25", Engine: "TensorRT-LLM (NIM)", Model: "llama-3-70b", GPU: "h100-sxm", TP: 2, Weights: "fp8", KVCache: "fp8", Concurrency: 25, Input: 5000, Output: 500, Requests: 200,
		TTFTMs: 688.69, TPOTMs: 38.75, OutputPerSec: 623.4, Source: srcNIM},
	{Test: "concurrency 50", Engine: "TensorRT-LLM (NIM)", Model: "llama-3-70b", GPU: "h100-sxm", TP: 2, Weights: "fp8", KVCache: "fp8", Concurrency: 50, Input: 5000, Output: 500, Requests: 400,
		TTFTMs: 834.51, TPOTMs: 59.73, OutputPerSec: 814.37, Source: srcNIM},
	{Test: "concurrency 100", Engine: "TensorRT-LLM (NIM)", Model: "llama-3-70b", GPU: "h100-sxm", TP: 2, Weights: "fp8", KVCache: "fp8", Concurrency: 100, Input: 5000, Output: 500, Requests: 800,
		TTFTMs: 7996.25, TPOTMs: 92.91, OutputPerSec: 917.26, Source: srcNIM, PastKnee: true},
}

// Tolerances the check holds the simulator to, below the knee.
const (
	ThroughputTolerance = 0.25
	LatencyTolerance    = 0.30
)

// Checked is a reference next to the simulator's figures.
type Checked struct {
	Reference
	Profile string
	Sim     ClosedLoopResult
	// Errors are (simulated - published) / published for each published
	// figure, by name: "e2e", "ttft", "tpot", "throughput".
	Errors map[string]float64
}

// Figure is one published figure of a check beside the simulator's.
type Figure struct {
	Name                 string // "e2e", "ttft", "tpot", "throughput"
	Unit                 string
	Published, Simulated float64
	// Error is (simulated - published) / published; Missed is set when it
	// is beyond the figure's tolerance on a gated (below the knee) row.
	Error  float64
	Missed bool
}

// Figures lists the check's published figures in report order: a
// latency-test row's E2E and the throughput it implies, else TTFT, TPOT
// and output throughput where published.
func (c Checked) Figures() []Figure {
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	var out []Figure
	add := func(name string, pub, sim float64, unit string) {
		tol := LatencyTolerance
		if name == "throughput" {
			tol = ThroughputTolerance
		}
		e := c.Errors[name]
		out = append(out, Figure{Name: name, Unit: unit, Published: pub, Simulated: sim, Error: e, Missed: math.Abs(e) > tol && !c.PastKnee})
	}
	if c.E2EMs > 0 {
		add("e2e", c.E2EMs, ms(c.Sim.E2E), "ms")
		add("throughput", float64(c.Requests*c.Output)/c.E2EMs*1000, float64(c.Requests*c.Output)/ms(c.Sim.E2E)*1000, "tok/s")
		return out
	}
	if c.TTFTMs > 0 {
		add("ttft", c.TTFTMs, ms(c.Sim.TTFT), "ms")
	}
	if c.TPOTMs > 0 {
		add("tpot", c.TPOTMs, ms(c.Sim.TPOT), "ms")
	}
	if c.OutputPerSec > 0 {
		add("throughput", c.OutputPerSec, c.Sim.OutputPerSec, "tok/s")
	}
	return out
}

// Within reports whether every figure is inside its tolerance (points
// past the knee always are).
func (c Checked) Within() bool {
	if c.PastKnee {
		return true
	}
	for k, e := range c.Errors {
		tol := LatencyTolerance
		if k == "throughput" {
			tol = ThroughputTolerance
		}
		if math.Abs(e) > tol {
			return false
		}
	}
	return true
}

// Check runs each reference's workload on its derived profile.
func Check(refs []Reference) ([]Checked, error) {
	out := make([]Checked, 0, len(refs))
	for _, r := range refs {
		m, ok := LookupModel(r.Model)
		if !ok {
			return nil, fmt.Errorf("reference %s: unknown model card %q", r.Test, r.Model)
		}
		g, ok := LookupGPU(r.GPU)
		if !ok {
			return nil, fmt.Errorf("reference %s: unknown GPU card %q", r.Test, r.GPU)
		}
		p, err := Derive(Spec{Model: m, GPU: g, TP: r.TP, Weights: r.Weights, KVCache: r.KVCache}, Knobs{MaxModelLen: m.ContextLen})
		if err != nil {
			return nil, fmt.Errorf("reference %s: %w", r.Test, err)
		}
		res := ClosedLoop(p, Load{Concurrency: r.Concurrency, Input: r.Input, Output: r.Output, Requests: r.Requests, Staggered: r.Requests > r.Concurrency})
		c := Checked{Reference: r, Profile: p.Name, Sim: res, Errors: map[string]float64{}}
		rel := func(sim, pub float64) float64 { return (sim - pub) / pub }
		ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
		if r.E2EMs > 0 {
			c.Errors["e2e"] = rel(ms(res.E2E), r.E2EMs)
			// One batch: its output throughput is the batch's tokens over its latency.
			c.Errors["throughput"] = rel(float64(r.Requests*r.Output)/ms(res.E2E), float64(r.Requests*r.Output)/r.E2EMs)
		}
		if r.TTFTMs > 0 {
			c.Errors["ttft"] = rel(ms(res.TTFT), r.TTFTMs)
		}
		if r.TPOTMs > 0 {
			c.Errors["tpot"] = rel(ms(res.TPOT), r.TPOTMs)
		}
		if r.OutputPerSec > 0 {
			c.Errors["throughput"] = rel(res.OutputPerSec, r.OutputPerSec)
		}
		out = append(out, c)
	}
	return out, nil
}

// Markdown renders checked references as the README's table.
func Markdown(cs []Checked) string {
	var b strings.Builder
	b.WriteString("| engine, test | GPU | model | TP, dtype | load (in/out tokens) | figure | published | simulated | error |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|\n")
	for _, c := range cs {
		dtype := "bf16"
		if c.Weights != "" {
			dtype = c.Weights
		}
		if c.KVCache != "" {
			dtype += ", KV " + c.KVCache
		}
		load := fmt.Sprintf("%d clients, %d/%d", c.Concurrency, c.Input, c.Output)
		if c.PastKnee {
			load += " (past the knee, not gated)"
		}
		if c.Requests == c.Concurrency {
			load = fmt.Sprintf("batch of %d, %d/%d", c.Concurrency, c.Input, c.Output)
		}
		for _, f := range c.Figures() {
			mark := ""
			if f.Missed {
				mark = " ✗"
			}
			fmt.Fprintf(&b, "| %s, %s | %s | %s | %d, %s | %s | %s | %.1f %s | %.1f %s | %+.0f%%%s |\n",
				c.Engine, c.Test, c.GPU, c.Model, c.TP, dtype, load, f.Name, f.Published, f.Unit, f.Simulated, f.Unit, 100*f.Error, mark)
		}
	}
	return b.String()
}
