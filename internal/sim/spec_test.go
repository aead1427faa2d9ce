package sim

import (
	"bufio"
	"hash/maphash"
	"io"
	"math"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

func derive(t *testing.T, model, gpu string, s Spec, k Knobs) Profile {
	t.Helper()
	m, ok := LookupModel(model)
	if !ok {
		t.Fatalf("no model card %q", model)
	}
	g, ok := LookupGPU(gpu)
	if !ok {
		t.Fatalf("no GPU card %q", gpu)
	}
	s.Model, s.GPU = m, g
	p, err := Derive(s, k)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// smoothMax is overlap written out: the cube root of the sum of cubes.
func smoothMax(m, c float64) float64 { return math.Cbrt(m*m*m + c*c*c) }

// Roofline version 2's efficiencies on an H100 or H200: vLLM's kernel
// shares of the card's copy and matrix-product ceilings.
const (
	h100Mem     = 0.86 * 0.88
	h100Compute = 0.70 * 0.78
	h200Mem     = 0.86 * 4258 / 4800
	h200Compute = 0.70 * 787 / 989
	vllmStep    = 2147 * time.Microsecond
)

// A decode step of Llama-3-8B on one H100 is its matrix products (the
// weights streamed, against the FLOPs of one token) plus its attention
// (the KV cache read, against its FLOPs) plus the fixed costs, written
// out by hand here.
func TestDecodeStepFormula(t *testing.T) {
	t.Parallel()
	const ctx = 1000
	const embedding = 128256 * 4096
	weights := (8.03e9 - embedding) * 2.0 // the embedding table is looked up, not streamed
	kvPerToken := 2.0 * 32 * 8 * 128 * 2  // K and V, 32 layers, 8 KV heads of 128, BF16
	flops := 2*(8.03e9-2*embedding) + 2*embedding
	attn := float64(ctx) * 4 * 32 * 32 * 128
	for _, tc := range []struct {
		gpu          string
		bw, peak     float64
		mem, compute float64
	}{{"h100-sxm", 3350e9, 989e12, h100Mem, h100Compute}, {"h200", 4800e9, 989e12, h200Mem, h200Compute}} {
		p := derive(t, "llama-3-8b", tc.gpu, Spec{}, Knobs{})
		bw, fl := tc.bw*tc.mem, tc.peak*tc.compute
		busy := smoothMax(weights/bw, flops/fl) + smoothMax(ctx*kvPerToken/bw, attn/fl)
		want := time.Duration(busy*1e9) + vllmStep + 4*time.Microsecond
		got := p.stepCost()(batch{seqs: 1, decodes: 1, decodeCtx: ctx})
		if d := got - want; d < -time.Microsecond || d > time.Microsecond {
			t.Errorf("%s decode step %v, want %v", tc.gpu, got, want)
		}
	}
}

// At a large batch the matrix products turn compute-bound, and the KV
// cache's read still adds to them: attention runs after the matrix
// products, not beside them. Roofline version 1 hid it in a maximum.
func TestLargeBatchPaysForItsKVCache(t *testing.T) {
	t.Parallel()
	p := derive(t, "llama-3-8b", "h100-sxm", Spec{}, Knobs{})
	b := batch{seqs: 512, decodes: 512, decodeCtx: 512 * 2000}
	without := b
	without.decodeCtx = 0
	kv := float64(b.decodeCtx) * 2 * 32 * 8 * 128 * 2 / (3350e9 * h100Mem)
	if got := (p.stepCost()(b) - p.stepCost()(without)).Seconds(); got < kv {
		t.Errorf("2000 tokens of context for 512 sequences add %.2f ms to a step, want at least the %.2f ms their KV cache takes to read", 1e3*got, 1e3*kv)
	}
	v1 := derive(t, "llama-3-8b", "h100-sxm", Spec{Roofline: 1}, Knobs{})
	if got := (v1.stepCost()(b) - v1.stepCost()(without)).Seconds(); got >= kv {
		t.Errorf("roofline 1 added %.2f ms: the test no longer shows what version 2 changed", 1e3*got)
	}
}

// A long prefill is compute-bound: 2 x the layers' parameters per token,
// the output projection once (only the last token is sampled), plus
// attention, each smoothly over its memory traffic.
func TestPrefillStepIsComputeBound(t *testing.T) {
	t.Parallel()
	p := derive(t, "llama-3-8b", "h100-sxm", Spec{}, Knobs{})
	const n = 4096
	pairs := int64(n) * (n + 1) / 2
	const embedding = 128256 * 4096 // the input embedding and the untied output projection are each this size
	fl := 989e12 * h100Compute
	matmuls := smoothMax((8.03e9-embedding)*2/(3350e9*h100Mem), (n*2*(8.03e9-2*embedding)+2*embedding)/fl)
	want := time.Duration((matmuls+float64(pairs)*4*32*32*128/fl)*1e9) + vllmStep + 4*time.Microsecond
	got := p.stepCost()(batch{seqs: 1, prefill: n, prefillAttn: pairs})
	if (got - want).Abs() > time.Microsecond {
		t.Errorf("prefill step %v, want %v", got, want)
	}
}

// With FP8 weights the layers stream one byte a parameter and multiply on
// the FP8 tensor cores; the output projection stays BF16 (as quantized
// checkpoints keep it) and attention runs at the BF16 rate.
func TestFP8StepFormula(t *testing.T) {
	t.Parallel()
	p := derive(t, "llama-3-70b", "h200", Spec{Weights: "fp8"}, Knobs{})
	const embedding = 128256 * 8192
	layers := 70.55e9 - 2*embedding
	const ctx = 2000
	kvPerToken := 2.0 * 80 * 8 * 128 * 2
	bw := 4800e9 * h200Mem
	// The H200 card has no FP8 ceiling of its own: the default share.
	fp8, bf16 := 1979e12*0.70*0.78, 989e12*h200Compute
	weights := layers*1 + embedding*2
	decode := smoothMax(weights/bw, 2*layers/fp8+2*embedding/bf16) + smoothMax(ctx*kvPerToken/bw, ctx*4*80*64*128/bf16)
	want := time.Duration(decode*1e9) + vllmStep + 4*time.Microsecond
	if got := p.stepCost()(batch{seqs: 1, decodes: 1, decodeCtx: ctx}); (got - want).Abs() > time.Microsecond {
		t.Errorf("FP8 decode step %v, want %v", got, want)
	}
	const n = 4096
	pairs := int64(n) * (n + 1) / 2
	prefill := smoothMax(weights/bw, n*2*layers/fp8+2*embedding/bf16) + float64(pairs)*4*80*64*128/bf16
	want = time.Duration(prefill*1e9) + vllmStep + 4*time.Microsecond
	if got := p.stepCost()(batch{seqs: 1, prefill: n, prefillAttn: pairs}); (got - want).Abs() > time.Microsecond {
		t.Errorf("FP8 prefill step %v, want %v", got, want)
	}
}

// Tensor parallelism's all-reduces follow the interconnect: over NVSwitch
// a small one costs one latency at two GPUs and AllReduceDoublingUs more
// each time the group doubles (NCCL's 6 to 21-24 µs), over PCIe one
// latency at any group size and a ring at 60% of the link, and a mesh gives a group of n only
// n-1 of its links.
func TestAllReduceByInterconnect(t *testing.T) {
	t.Parallel()
	const small = 8 * 8192 * 2 // a decode step of 8 sequences of Llama-3-70B
	h100, _ := LookupGPU("h100-sxm")
	l40s, _ := LookupGPU("l40s")
	mi, _ := LookupGPU("mi300x")
	us := func(d time.Duration) float64 { return float64(d) / 1e3 }
	a, b, c := us(h100.allReduce(2, small, false)), us(h100.allReduce(4, small, false)), us(h100.allReduce(8, small, false))
	if math.Abs(b-a-h100.AllReduceDoublingUs) > 1 || math.Abs(c-b-h100.AllReduceDoublingUs) > 1 || h100.AllReduceDoublingUs <= 0 {
		t.Errorf("NVSwitch: %.1f µs at TP2, %.1f at TP4, %.1f at TP8: want %.0f µs more a doubling", a, b, c, h100.AllReduceDoublingUs)
	}
	custom := h100
	custom.AllReduceDoublingUs = 0 // a card file written before the field
	if a, b := us(custom.allReduce(2, small, false)), us(custom.allReduce(8, small, false)); b-a > 1 {
		t.Errorf("NVSwitch without a doubling cost: %.1f µs at TP2, %.1f at TP8: want the same latency", a, b)
	}
	if a, b := us(l40s.allReduce(2, small, false)), us(l40s.allReduce(8, small, false)); a < l40s.AllReduceUs || b > 1.2*a {
		t.Errorf("PCIe: %.1f µs at TP2, %.1f at TP8: want NCCL's one latency (%.0f µs) among two GPUs or eight", a, b, l40s.AllReduceUs)
	}
	// A large one moves at pcieBusShare of the link: 60% of 32 GB/s.
	const prefill = 2048 * 8192 * 2
	want := l40s.AllReduceUs + 2*7.0/8*prefill/(pcieBusShare*l40s.LinkGBs*1e9)*1e6
	if got := us(l40s.allReduce(8, prefill, false)); math.Abs(got-want) > 1 {
		t.Errorf("PCIe: a %d-byte all-reduce among eight takes %.0f µs, want %.0f", prefill, got, want)
	}
	const big = 64 << 20
	two, eight := mi.allReduce(2, big, false), mi.allReduce(8, big, false)
	// Per GPU a ring moves 2(n-1)/n of the message: 1x at TP2, 1.75x at
	// TP8, over 1 link against 7.
	if r := float64(two) / float64(eight); r < 3.5 || r > 4.5 {
		t.Errorf("mesh: TP2 all-reduce %v, TP8 %v: want TP2 about 4x slower on its one link", two, eight)
	}
}

// The KV cache holds what is left of 90% of memory after weights,
// activations of a full step, the sampler's logits and non-tensor memory.
func TestKVCapacityFormula(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		model, gpu string
		spec       Spec
		params     float64
		kvPerTok   float64 // per GPU
		inter      float64
		hidden     float64
		vocab      float64
		memGiB     float64
		weightB    float64
	}{
		{"llama-3-8b", "h100-sxm", Spec{}, 8.03e9, 2 * 32 * 8 * 128 * 2, 14336, 4096, 128256, 79.6, 2},
		{"llama-3-70b", "h200", Spec{TP: 4}, 70.55e9 / 4, 2 * 80 * 2 * 128 * 2, 28672.0 / 4, 8192, 128256, 140.4, 2},
		{"llama-3-70b", "h100-sxm", Spec{TP: 2, Weights: "fp8", KVCache: "fp8"}, 70.55e9 / 2, 2 * 80 * 4 * 128 * 1, 28672.0 / 2, 8192, 128256, 79.6, 1},
	} {
		p := derive(t, tc.model, tc.gpu, tc.spec, Knobs{})
		tp := float64(max(tc.spec.TP, 1))
		// The embedding and the output projection stay BF16 in quantized checkpoints.
		emb := tc.vocab * tc.hidden / tp
		weights := (tc.params-2*emb)*tc.weightB + 2*emb*2
		free := tc.memGiB*(1<<30)*0.9 - weights - 8192*(2*tc.inter+4*tc.hidden)*2 - 256*tc.vocab*4 - (1 << 30)
		want := int(free/tc.kvPerTok) / 16 * 16
		if got := p.KVTokens(); got != want {
			t.Errorf("%s: KV capacity %d tokens, want %d", p.Name, got, want)
		}
	}
}

// Preemption begins exactly when the cache is full: four requests of 128
// tokens fill 32 blocks of 16; a fifth makes the engine preempt, and every
// request still gets all its tokens.
func TestPreemptionBeginsWhenCacheIsFull(t *testing.T) {
	t.Parallel()
	p := Profile{Name: "kv", MaxNumSeqs: 64, MaxBatchedTokens: 4096, StepBase: time.Millisecond, TokensPerStep: 1,
		KVBlocks: 32, BlockSize: 16}
	for _, tc := range []struct {
		clients int
		preempt bool
	}{{1, false}, {4, false}, {5, true}, {8, true}} {
		r := ClosedLoop(p, Load{Concurrency: tc.clients, Input: 64, Output: 64, Requests: tc.clients})
		if (r.Preemptions > 0) != tc.preempt {
			t.Errorf("%d requests: %d preemptions, want some: %v", tc.clients, r.Preemptions, tc.preempt)
		}
		if r.Requests != tc.clients {
			t.Errorf("%d requests: %d finished", tc.clients, r.Requests)
		}
	}
	// A preempted request recomputes: the run takes longer than the same
	// work would without the cap.
	capped := ClosedLoop(p, Load{Concurrency: 8, Input: 64, Output: 64, Requests: 8})
	p.KVBlocks = 0
	free := ClosedLoop(p, Load{Concurrency: 8, Input: 64, Output: 64, Requests: 8})
	if capped.Steps <= free.Steps {
		t.Errorf("capped cache took %d steps, uncapped %d: recompute should cost steps", capped.Steps, free.Steps)
	}
}

// The server reports preemptions and KV usage with vLLM's names. The
// first request alone fits the cache; a second sent while the first is
// still decoding (it has 2,000 steps to go) makes them outgrow it.
func TestServerReportsPreemptions(t *testing.T) {
	t.Parallel()
	p := Profile{Name: "kv", Model: "m", MaxNumSeqs: 64, MaxBatchedTokens: 4096, StepBase: 200 * time.Microsecond, TokensPerStep: 1,
		MaxModelLen: 4096, KVBlocks: 130, BlockSize: 16}
	_, u := startServer(t, p)
	body := `{"prompt": "` + strings.Repeat("w ", 40) + `", "max_tokens": 2000, "stream": true}`
	resp, err := http.Post(u+"/v1/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	if _, err := r.ReadString('\n'); err != nil { // the first token is out: it is decoding
		t.Fatal(err)
	}
	if code, out := post(t, u+"/v1/completions", `{"prompt": "`+strings.Repeat("v ", 40)+`", "max_tokens": 2000}`); code != 200 {
		t.Fatalf("second request: %d %s", code, out)
	}
	if _, err := io.Copy(io.Discard, r); err != nil {
		t.Fatal(err)
	}
	_, metrics := get(t, u+"/metrics")
	if !strings.Contains(metrics, "vllm:num_preemptions_total ") || strings.Contains(metrics, "vllm:num_preemptions_total 0\n") {
		t.Errorf("two 2,040-token requests in a 2,080-token cache should preempt; /metrics:\n%s", metrics)
	}
	if !strings.Contains(metrics, "vllm:kv_cache_usage_perc 0\n") {
		t.Errorf("an idle engine's cache should be empty; /metrics:\n%s", metrics)
	}
}

// Moving from H100 to H200 moves a decode-bound knee (the saturated
// throughput a rate sweep flattens at) up, but by less than the bandwidth
// ratio (1.43): the fixed per-step costs do not scale. The published rows
// put it at 1.07-1.20 (vLLM's batch-8 latency rows of Llama-3-8B: 1.20;
// TensorRT-LLM's 500-request burst: 1.07).
func TestKneeFollowsBandwidth(t *testing.T) {
	t.Parallel()
	load := Load{Concurrency: 256, Input: 128, Output: 1024, Requests: 1024, Staggered: true}
	h100 := ClosedLoop(derive(t, "llama-3-8b", "h100-sxm", Spec{}, Knobs{}), load)
	h200 := ClosedLoop(derive(t, "llama-3-8b", "h200", Spec{}, Knobs{}), load)
	got, bw := h200.OutputPerSec/h100.OutputPerSec, 4800.0/3350
	if got < 1.07 || got >= bw {
		t.Errorf("H200/H100 saturated throughput %.3f (%.0f / %.0f tok/s), want from the published 1.07 up to the bandwidth ratio %.3f",
			got, h200.OutputPerSec, h100.OutputPerSec, bw)
	}
	t.Logf("H200/H100 knee ratio %.3f, bandwidth ratio %.3f", got, bw)
}

// The published figures docs/simulator.md's table shows are met within the
// stated tolerances, and docs/simulator.md shows what the command prints.
func TestReferencesWithinTolerance(t *testing.T) {
	t.Parallel()
	cs, err := Check(References)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		if !c.Within() {
			t.Errorf("%s %s on %s: errors %v beyond ±%.0f%% throughput / ±%.0f%% latency",
				c.Engine, c.Test, c.Profile, c.Errors, 100*ThroughputTolerance, 100*LatencyTolerance)
		}
		// A known miss that no longer misses must lose its label, so the
		// label cannot hide a row the model now meets, or outlive its cause.
		if (c.KnownMiss != "") != (len(c.Missing) > 0) {
			t.Errorf("%s %s on %s: a known miss names its reason and its missing figures (%q, %v)", c.Engine, c.Test, c.Profile, c.KnownMiss, c.Missing)
		}
		if got, want := c.missed(true), slices.Sorted(slices.Values(c.Missing)); len(want) > 0 && !slices.Equal(intersect(got, want), want) {
			t.Errorf("%s %s on %s: known to miss %v, but only %v miss (errors %v): take the met ones out of Missing", c.Engine, c.Test, c.Profile, want, got, c.Errors)
		}
	}
	before, err := CheckVersion(References, 1)
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("../../docs/simulator.md")
	if err != nil {
		t.Fatal(err)
	}
	rs, err := RatioReferences()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), RatioMarkdown(rs)) {
		t.Errorf("docs/simulator.md's table of published ratios is stale: regenerate it with `go run ./cmd/benchci sim check --markdown`")
	}
	if !strings.Contains(string(readme), SummaryMarkdown(before, cs)) {
		t.Errorf("docs/simulator.md's summary of published figures is stale: regenerate it with `go run ./cmd/benchci sim check --markdown`")
	}
	if !strings.Contains(string(readme), Markdown(cs)) {
		t.Errorf("docs/simulator.md's table of published figures is stale: regenerate it with `go run ./cmd/benchci sim check --markdown`")
	}
}

func TestDeriveErrors(t *testing.T) {
	t.Parallel()
	m8, _ := LookupModel("llama-3-8b")
	m70, _ := LookupModel("llama-3-70b")
	h100, _ := LookupGPU("h100-sxm")
	l40s, _ := LookupGPU("l40s")
	bad := m8
	bad.KVHeads = 0
	badLink := h100
	badLink.Interconnect = "infiniband"
	slowCopy := h100
	slowCopy.AchievedGBs = 3 // TB/s, written where GB/s are asked
	fp4 := h100
	fp4.AchievedTFLOPS = map[string]float64{"fp4": 1000}
	slowReduce, nanDoubling := h100, h100
	slowReduce.AllReduceUs = 2e6 // seconds written where µs are asked
	nanDoubling.AllReduceDoublingUs = math.NaN()
	tinyCard := h100 // every figure 1e-300: a step of centuries wraps negative
	tinyCard.BandwidthGBs, tinyCard.TFLOPS = 1e-300, map[string]float64{"bf16": 1e-300, "fp8": 1e-300}
	for _, tc := range []struct {
		name string
		s    Spec
		k    Knobs
		want string
	}{
		{"tp not dividing heads", Spec{Model: m8, GPU: h100, TP: 3}, Knobs{}, "does not divide"},
		{"dtype", Spec{Model: m8, GPU: h100, Weights: "fp4"}, Knobs{}, "unknown dtype"},
		{"no room", Spec{Model: m70, GPU: l40s}, Knobs{}, "KV cache holds"},
		{"card", Spec{Model: bad, GPU: h100}, Knobs{}, "kv_heads must be positive"},
		{"context", Spec{Model: m8, GPU: h100}, Knobs{MaxModelLen: 100000}, "exceeds the model's context"},
		{"utilization", Spec{Model: m8, GPU: h100, GPUMemoryUtilization: 1.5}, Knobs{}, "gpu_memory_utilization"},
		{"interconnect", Spec{Model: m8, GPU: badLink}, Knobs{}, `interconnect "infiniband"`},
		{"achieved bandwidth a unit off", Spec{Model: m8, GPU: slowCopy}, Knobs{}, "achieved_gbs 3"},
		{"achieved FLOP/s without a datasheet figure", Spec{Model: m8, GPU: fp4}, Knobs{}, "achieved_tflops.fp4"},
		{"an all-reduce of seconds", Spec{Model: m8, GPU: slowReduce, TP: 2}, Knobs{}, "all_reduce_us 2e+06"},
		{"a doubling cost that is not a number", Spec{Model: m8, GPU: nanDoubling, TP: 2}, Knobs{}, "all_reduce_doubling_us NaN"},
		{"engine", Spec{Model: m8, GPU: h100, Engine: "tgi"}, Knobs{}, `engine "tgi": want one of vllm, sglang, trtllm`},
		{"roofline", Spec{Model: m8, GPU: h100, Roofline: 5}, Knobs{}, "roofline version 5"},
		{"a PCIe ring under the current version", Spec{Model: m8, GPU: l40s, TP: 2, PCIeAllReduce: PCIeRing}, Knobs{}, "only under roofline version 2"},
		{"an all-reduce not known", Spec{Model: m8, GPU: l40s, TP: 2, Roofline: 2, PCIeAllReduce: "tree"}, Knobs{}, `pcie_all_reduce "tree"`},
		{"an efficiency of 1e-300", Spec{Model: m8, GPU: h100, Efficiency: Efficiency{MemoryEfficiency: 1e-300, ComputeEfficiency: 0.5}}, Knobs{}, "memory_efficiency 1e-300"},
		{"an efficiency under 0.1%", Spec{Model: m8, GPU: h100, Efficiency: Efficiency{MemoryEfficiency: 0.5, ComputeEfficiency: 0.0009}}, Knobs{}, "compute_efficiency 0.0009"},
		{"a card of 1e-300", Spec{Model: m8, GPU: tinyCard}, Knobs{}, "the cards price a lone decode step at"},
	} {
		_, err := Derive(tc.s, tc.k)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want one with %q", tc.name, err, tc.want)
		}
	}
}

func TestBuiltinCardsDerive(t *testing.T) {
	t.Parallel()
	for _, m := range ModelNames() {
		for _, g := range GPUNames() {
			mc, _ := LookupModel(m)
			gc, _ := LookupGPU(g)
			if err := mc.Check(); err != nil {
				t.Error(err)
			}
			if err := gc.Check(); err != nil {
				t.Error(err)
			}
			// Some pairs need tensor parallelism, and the largest models
			// FP8 weights; find the least that fits.
			var err error
			for _, tp := range []int{1, 2, 4, 8, -8, -16} {
				var p Profile
				s := Spec{Model: mc, GPU: gc, TP: tp}
				if tp < 0 {
					s.TP, s.Weights, s.KVCache = -tp, "fp8", "fp8"
				}
				if p, err = Derive(s, Knobs{}); err == nil {
					if p.KVTokens() < p.MaxModelLen || p.StepBase <= 0 || p.PrefillPerToken <= 0 {
						t.Errorf("%s: KV %d tokens, idle step %v, prefill %v per token", p.Name, p.KVTokens(), p.StepBase, p.PrefillPerToken)
					}
					break
				}
			}
			if err != nil {
				t.Errorf("%s on %s does not fit on 16 GPUs: %v", m, g, err)
			}
		}
	}
}

// A request overhead delays a request's arrival at the scheduler: a lone
// request's TTFT and E2E grow by its spread delay (half to one and a half
// of it, the same for both), its TPOT not at all.
func TestRequestOverheadDelaysTheFirstToken(t *testing.T) {
	t.Parallel()
	p := derive(t, "llama-3-8b", "h100-sxm", Spec{}, Knobs{})
	load := Load{Concurrency: 1, Input: 512, Output: 64, Requests: 3}
	without := ClosedLoop(p, load)
	p.RequestOverhead = 30 * time.Millisecond
	with := ClosedLoop(p, load)
	d := with.TTFT - without.TTFT
	if d < 15*time.Millisecond || d >= 45*time.Millisecond {
		t.Errorf("TTFT grew by %v, want 15-45 ms", d)
	}
	if e := with.E2E - without.E2E; e != d {
		t.Errorf("E2E grew by %v, want the TTFT's %v", e, d)
	}
	if with.TPOT != without.TPOT {
		t.Errorf("TPOT %v, want %v as without", with.TPOT, without.TPOT)
	}
	if got, want := p.IdleTTFT(512), 30*time.Millisecond+p.StepBase+512*p.PrefillPerToken; got != want {
		t.Errorf("IdleTTFT %v, want %v", got, want)
	}
}

// An engine model brings its scheduling defaults and names its profile.
func TestEngineModels(t *testing.T) {
	t.Parallel()
	v := derive(t, "llama-3-8b", "h100-sxm", Spec{}, Knobs{})
	trt := derive(t, "llama-3-8b", "h100-sxm", Spec{Engine: "trtllm"}, Knobs{})
	if v.MaxNumSeqs != 256 || trt.MaxNumSeqs != 2048 {
		t.Errorf("max_num_seqs vLLM %d, TensorRT-LLM %d: want 256 and 2048", v.MaxNumSeqs, trt.MaxNumSeqs)
	}
	if trt.Name != "llama-3-8b@h100-sxm-trtllm" {
		t.Errorf("name %q", trt.Name)
	}
	back, err := ParseSpecName(trt.Name)
	if err != nil || back.Engine != "trtllm" {
		t.Errorf("parse %q: engine %q, err %v", trt.Name, back.Engine, err)
	}
}

func intersect(a, b []string) []string {
	var out []string
	for _, x := range b {
		if slices.Contains(a, x) {
			out = append(out, x)
		}
	}
	return out
}

// Fitted efficiencies carry to another card as the engine's share of that
// card's ceilings; version 1's carry as they are.
func TestCarryEfficiency(t *testing.T) {
	t.Parallel()
	m, _ := LookupModel("llama-3-70b")
	h200, _ := LookupGPU("h200")
	mi, _ := LookupGPU("mi300x")
	fit := Efficiency{MemoryEfficiency: 0.7, ComputeEfficiency: 0.5, StepOverhead: 2 * time.Millisecond}
	from := Spec{Model: m, GPU: h200, TP: 2}
	to := Spec{Model: m, GPU: mi, TP: 2}
	got := CarryEfficiency(fit, from, to)
	wantMem := 0.7 * (4293.0 / 5300) / (4258.0 / 4800)
	wantCompute := 0.5 * (588.0 / 1307) / (787.0 / 989)
	if math.Abs(got.MemoryEfficiency-wantMem) > 1e-9 || math.Abs(got.ComputeEfficiency-wantCompute) > 1e-9 || got.StepOverhead != fit.StepOverhead {
		t.Errorf("carried %+v, want memory %.4f, compute %.4f, the same overheads", got, wantMem, wantCompute)
	}
	if same := CarryEfficiency(fit, from, Spec{Model: m, GPU: h200, TP: 4}); same != fit {
		t.Errorf("the same card: %+v, want %+v", same, fit)
	}
	from.Roofline = 1
	if old := CarryEfficiency(fit, from, to); old != fit {
		t.Errorf("version 1: %+v, want them as fitted", old)
	}
}

// A constant profile's attention prices each (token, cached token) pair:
// its own sequence's context (paged, as vLLM), or every cached token of
// the step when the cache is one for all (llama.cpp), so there a second
// request's context slows the first's prefill, and a lone prompt pays
// its whole square, masked.
func TestConstantProfileAttention(t *testing.T) {
	t.Parallel()
	p := Profile{Name: "attn", Model: "m", MaxNumSeqs: 8, MaxBatchedTokens: 512, StepBase: time.Millisecond,
		DecodePerSeq: 100 * time.Microsecond, PrefillPerToken: 40 * time.Microsecond, TokensPerStep: 1, MaxModelLen: 4096, AttendNsPerPair: 100}
	b := batch{seqs: 2, decodes: 1, prefill: 200, decodeCtx: 1000, prefillAttn: 200 * 201 / 2, kvInUse: 3000}
	flat := time.Millisecond + 100*time.Microsecond + 200*40*time.Microsecond
	if got, want := p.stepCost()(b), flat+time.Duration(100*(1000+200*201/2)); got != want {
		t.Errorf("paged: step %v, want %v", got, want)
	}
	u := p
	u.UnifiedKV = true
	if got, want := u.stepCost()(b), flat+time.Duration(100*201*3000); got != want {
		t.Errorf("unified: step %v, want %v (201 tokens x 3,000 cached)", got, want)
	}
	// A hostile price on a huge cache saturates; it does not wrap negative.
	h := u
	h.AttendNsPerPair = 1000
	if got := h.stepCost()(batch{decodes: 1 << 16, prefill: 1 << 22, kvInUse: 1 << 38}); got < 24*time.Hour {
		t.Errorf("a step of 2^22 tokens over 2^38 cached at 1000 ns a pair: %v, want at least a day", got)
	}
	// A lone request of 300 prompt tokens: one prefill step, as IdleTTFT says.
	lone := Load{Concurrency: 1, Input: 300, Output: 2, Requests: 3}
	for _, q := range []Profile{p, u} {
		got := ClosedLoop(q, lone).TTFT
		if want := q.IdleTTFT(300); (got - want).Abs() > time.Microsecond {
			t.Errorf("unified %v: a lone request's TTFT %v, IdleTTFT %v", q.UnifiedKV, got, want)
		}
	}
	// Four clients: with one cache their prefills pay for each other's
	// contexts, so TTFT rises above the paged engine's.
	four := Load{Concurrency: 4, Input: 400, Output: 50, Requests: 40, Staggered: true}
	if pg, un := ClosedLoop(p, four).TTFT, ClosedLoop(u, four).TTFT; un <= pg*11/10 {
		t.Errorf("four clients: unified TTFT %v, paged %v: the others' contexts cost nothing", un, pg)
	}
}

// slotsProfile is a constant profile of four slots and one cache for all
// (UnifiedKV).
func slotsProfile() Profile {
	return Profile{Name: "slots", Model: "m", MaxNumSeqs: 4, MaxBatchedTokens: 2048, StepBase: time.Millisecond,
		DecodePerSeq: 100 * time.Microsecond, PrefillPerToken: 10 * time.Microsecond, TokensPerStep: 1, MaxModelLen: 4096,
		AttendNsPerPair: 10, UnifiedKV: true}
}

// stepper drives e a step at a time: step admits arrivals and runs one
// step, checking that no more contexts are cached than there are slots;
// drain steps until nothing is left to run.
func stepper(t *testing.T, e *engine) (step func(arrivals ...*seq) batch, drain func()) {
	step = func(arrivals ...*seq) batch {
		t.Helper()
		e.waiting = append(e.waiting, arrivals...)
		b := e.schedule(time.Now())
		e.emit()
		if n := len(e.running) + len(e.stale); n > e.p.MaxNumSeqs {
			t.Fatalf("%d running and %d old contexts in %d slots", len(e.running), len(e.stale), e.p.MaxNumSeqs)
		}
		return b
	}
	drain = func() {
		for len(e.running) > 0 || len(e.waiting) > 0 {
			step()
		}
	}
	return step, drain
}

// A unified cache keeps a finished request's context in its slot until
// a new request takes the slot, and a request takes a slot a request left
// before an empty one (Ollama's runner): in a steady loop nothing
// lingers, but after a burst of four the lone request that follows
// attends to the three contexts the burst left behind. Measured on the
// Ollama .ci/run builds (512-token prompts, 4 slots): one conversation
// after four waited 173 ms for its first token, one from a fresh start
// 43 ms (BenchmarkOllamaTwin's sweep coming down).
func TestUnifiedCacheKeepsFinishedContexts(t *testing.T) {
	t.Parallel()
	p := slotsProfile()
	step, drain := stepper(t, newEngine(p))
	// Two requests one after the other: the second takes the first's slot.
	step(newSeq(100, 3, nil))
	drain()
	if b := step(newSeq(100, 3, nil)); b.kvInUse != 100 {
		t.Errorf("a lone request after a lone request: %d tokens cached, want its own 100", b.kvInUse)
	}
	drain()
	// A burst of four (100 prompt and 3 output tokens each, 102 cached
	// once the last is sampled), then one request: three old contexts.
	step(newSeq(100, 3, nil), newSeq(100, 3, nil), newSeq(100, 3, nil), newSeq(100, 3, nil))
	drain()
	if b := step(newSeq(100, 3, nil)); b.kvInUse != 100+3*102 {
		t.Errorf("a lone request after a burst of four: %d tokens cached, want its own 100 and 3 x 102 left by the burst", b.kvInUse)
	}
	drain()
	// Four again take every slot: nothing old is left.
	if b := step(newSeq(100, 3, nil), newSeq(100, 3, nil), newSeq(100, 3, nil), newSeq(100, 3, nil)); b.kvInUse != 4*100 {
		t.Errorf("four requests in four slots: %d tokens cached, want their own 400", b.kvInUse)
	}
	// A paged engine's sequences keep nothing of the others'.
	p.UnifiedKV = false
	paged := newEngine(p)
	paged.waiting = append(paged.waiting, newSeq(100, 1, nil))
	paged.schedule(time.Now())
	paged.emit()
	if len(paged.stale) != 0 {
		t.Errorf("a paged engine kept %d finished contexts", len(paged.stale))
	}
}

// A request that never held a slot leaves no context behind: here the
// second of two (a shared prefix of 6 blocks, 7 blocks in all) is turned
// away each step after its prefix matched, until the first is done and
// it takes the first's slot.
func TestUnifiedCacheTurnedAwayLeavesNothing(t *testing.T) {
	t.Parallel()
	full := slotsProfile()
	full.PrefixCaching, full.KVBlocks, full.BlockSize = true, 7, BlockTokens
	e := newEngine(full)
	step, drain := stepper(t, e)
	seed := maphash.MakeSeed()
	shared := tokens("p", 96)
	first := newSeq(100, 10, blockHashes(seed, append(shared[:96:96], tokens("a", 4)...), BlockTokens))
	second := newSeq(100, 10, blockHashes(seed, append(shared[:96:96], tokens("b", 4)...), BlockTokens))
	step(first, second)
	if len(e.waiting) != 1 {
		t.Fatalf("%d waiting after the first step, want the second turned away", len(e.waiting))
	}
	drain()
	if len(e.stale) != 1 || e.stale[0] != 109 {
		t.Errorf("both done: old contexts of %v tokens, want the second's alone, 109 tokens (it took the first's slot)", e.stale)
	}
}

// A per-request prefill cap splits a long prompt over steps (so prompts
// sent together prefill together), and gives way where prompts are not
// chunked at all: there it would keep a longer prompt out for ever.
func TestMaxPrefillChunk(t *testing.T) {
	t.Parallel()
	p := Profile{Name: "chunk", Model: "m", MaxNumSeqs: 8, MaxBatchedTokens: 2048, StepBase: time.Millisecond,
		DecodePerSeq: 100 * time.Microsecond, PrefillPerToken: 10 * time.Microsecond, TokensPerStep: 1, MaxModelLen: 4096}
	lone := Load{Concurrency: 1, Input: 1000, Output: 2, Requests: 3}
	whole := ClosedLoop(p, lone).TTFT
	capped := p
	capped.MaxPrefillChunk = 300
	// 1,000 tokens in four steps of at most 300: three more step bases.
	if got, want := ClosedLoop(capped, lone).TTFT, whole+3*time.Millisecond; (got - want).Abs() > time.Microsecond {
		t.Errorf("capped at 300: TTFT %v, want %v (uncapped %v plus three steps' base)", got, want, whole)
	}
	capped.NoChunkedPrefill = true
	if got := ClosedLoop(capped, lone); got.TTFT != whole {
		t.Errorf("unchunked, capped at 300: TTFT %v, want the uncapped %v (the cap gives way)", got.TTFT, whole)
	}
}

// Chunked prefill follows the engine unless the knobs say otherwise:
// TensorRT-LLM prefills whole prompts by default (roofline version 2; the
// first chunked every engine's), vLLM and SGLang chunk them; whole, a
// step's budget grows to a whole prompt (16,384 tokens here). A profile's
// own Knobs derive it again as it was.
func TestChunkedPrefillDefaultsToTheEngine(t *testing.T) {
	t.Parallel()
	on, off := true, false
	for _, c := range []struct {
		engine    string
		roofline  int
		chunked   *bool
		wantWhole bool
	}{
		{"vllm", 0, nil, false}, {"sglang", 0, nil, false}, {"trtllm", 0, nil, true},
		{"trtllm", 0, &on, false}, {"vllm", 0, &off, true}, {"trtllm", 1, nil, false},
	} {
		p := derive(t, "qwen2.5-7b", "h100-sxm", Spec{Engine: c.engine, Roofline: c.roofline}, Knobs{ChunkedPrefill: c.chunked, MaxModelLen: 16384})
		wantTokens := map[bool]int{false: 8192, true: 16384}[c.wantWhole]
		if p.NoChunkedPrefill != c.wantWhole || p.MaxBatchedTokens != wantTokens {
			t.Errorf("%s (roofline %d), chunked_prefill %v: whole prompts %v and %d tokens a step, want %v and %d",
				c.engine, c.roofline, c.chunked, p.NoChunkedPrefill, p.MaxBatchedTokens, c.wantWhole, wantTokens)
		}
		again, err := Derive(*p.Spec, p.Knobs())
		if err != nil {
			t.Fatal(err)
		}
		if again.NoChunkedPrefill != p.NoChunkedPrefill || again.MaxBatchedTokens != p.MaxBatchedTokens || again.MaxModelLen != p.MaxModelLen {
			t.Errorf("%s, chunked_prefill %v: derived again from its knobs, whole prompts %v, %d tokens a step, max_model_len %d; was %v, %d, %d",
				c.engine, c.chunked, again.NoChunkedPrefill, again.MaxBatchedTokens, again.MaxModelLen, p.NoChunkedPrefill, p.MaxBatchedTokens, p.MaxModelLen)
		}
	}
}

// A card's SeqLayerUs is priced from roofline version 4 on, each
// sequence of a step paying it in every layer: a file fitted under
// version 3 replays as it was fitted. A card past its bound is refused.
func TestSeqLayerFromVersion4(t *testing.T) {
	t.Parallel()
	g, _ := LookupGPU("mi300x")
	m, _ := LookupModel("llama-3-70b")
	b := batch{seqs: 128, decodes: 128, decodeCtx: 128 * 1024}
	step := func(v int) time.Duration {
		return newRoofline(Spec{Model: m, GPU: g, TP: 8, Weights: "fp8", Roofline: v}.withDefaults()).step(b)
	}
	want := time.Duration(128 * 80 * g.SeqLayerUs * 1e3)
	if g.SeqLayerUs <= 0 {
		t.Fatal("the mi300x card has no seq_layer_us")
	}
	if got := step(4) - step(3); got < want-time.Microsecond || got > want+time.Microsecond {
		t.Errorf("version 4 adds %v to a step of 128 sequences of an 80-layer model, want %v", got, want)
	}
	for _, us := range []float64{-1, 101, math.NaN()} {
		bad := g
		bad.SeqLayerUs = us
		if err := bad.Check(); err == nil || !strings.Contains(err.Error(), "seq_layer_us") {
			t.Errorf("seq_layer_us %v: %v", us, err)
		}
	}
}
