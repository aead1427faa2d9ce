package sim

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// Spec derives a profile from a model card, a GPU card, the tensor-parallel
// degree and the engine's knobs, in the manner of roofline simulators
// (LLM-Viewer, Vidur's analytical mode). Every step of the engine costs,
// per GPU,
//
//	matmuls(weights / bandwidth, layer FLOPs / FLOP/s)
//	+ attention(KV bytes / bandwidth, attention FLOPs / FLOP/s)
//	+ tensor-parallel all-reduces + StepOverhead + SeqOverhead x sequences
//	+ the card's SeqLayerUs x sequences x layers
//
// where each kernel group's memory and compute terms combine as a smooth
// maximum (see overlap) rather than a hard one, and the two groups add:
// attention runs after the matrix products, not beside them, so a large
// decode batch that the matrix products make compute-bound still pays for
// reading its KV cache. The weights are all of a dense model's (the shared
// part and the experts the step's tokens touch of a MoE); the FLOPs are 2 x
// the layers' active parameters per token and the output projection once
// per sequence. Bandwidth and FLOP/s are the datasheet's times what an
// engine achieves of them on that card (see GPUCard.AchievedGBs and
// Engine). The all-reduces follow the card's interconnect (see allReduce).
// The KV cache holds what the memory left over after weights and
// activations allows; when a step needs a block that is not there, the
// engine preempts the newest sequence and later recomputes it, as vLLM
// does, so the knee of a sweep comes from the card's real limits.
type Spec struct {
	Model ModelCard `json:"model"`
	GPU   GPUCard   `json:"gpu"`
	TP    int       `json:"tp"`
	// Weights and KVCache are "bf16" or "fp8".
	Weights string `json:"weights"`
	KVCache string `json:"kv_cache"`
	// GPUMemoryUtilization is the share of device memory the engine may
	// use (vLLM --gpu-memory-utilization); BlockSize the tokens per KV block.
	GPUMemoryUtilization float64 `json:"gpu_memory_utilization"`
	BlockSize            int     `json:"block_size"`
	// Engine names the serving engine whose overheads and kernel
	// efficiencies apply (see Engines); empty is vLLM.
	Engine string `json:"engine,omitempty"`
	// Roofline is the cost model's version (the name predates request
	// paths): 4 is the one described above. 3 did not price a card's
	// SeqLayerUs, so a file fitted under it (on an MI300X, say, whose fit
	// absorbed that cost) replays as fitted. 2 had no engine request path:
	// an engine's RequestOverhead (TensorRT-LLM's 5 ms) is not a default
	// under it, so a file fitted then replays without one unless it names
	// one (files written between that default and version 3 name it, and
	// their whole prefills). 1, what profile files written before version
	// 2 carry, also took the larger of all bytes and all FLOPs, priced
	// every all-reduce alike, and read efficiencies from one engine-wide
	// default. Fitted figures only mean something under the model they
	// were fitted with, so a file keeps its version. 0 is the current one.
	Roofline int `json:"roofline,omitempty"`
	// PCIeAllReduce is PCIeRing for a version-2 profile file fitted before
	// the PCIe all-reduce was NCCL's (GPUCard.allReduce's ring): its efficiencies
	// were fitted under the ring. Reading such a file marks it (its idle
	// step says which it was priced with), and a file written from it
	// keeps the mark. Empty is NCCL's.
	PCIeAllReduce string `json:"pcie_all_reduce,omitempty"`
	Efficiency
}

// PCIeRing is Spec.PCIeAllReduce's one value.
const PCIeRing = "ring"

// Efficiency is what share of a card's peak a serving engine reaches, and
// its fixed costs per step and per request. Zero fields take the engine's
// and the card's defaults (see Engine, GPUCard.AchievedGBs); `benchci sim
// fit` sets them from a team's own measurements.
type Efficiency struct {
	// MemoryEfficiency is achieved over datasheet bandwidth while
	// streaming weights and KV (decode).
	MemoryEfficiency float64 `json:"memory_efficiency"`
	// ComputeEfficiency is achieved over dense datasheet FLOP/s of the
	// weights' compute type (prefill).
	ComputeEfficiency float64 `json:"compute_efficiency"`
	// StepOverhead is the per-step time the GPU is not busy with the
	// model: scheduling, input preparation, sampling, kernel launches.
	StepOverhead time.Duration `json:"step_overhead"`
	// SeqOverhead is what each sequence in the step adds to it.
	SeqOverhead time.Duration `json:"seq_overhead"`
	// RequestOverhead is a request's way from the server's socket to the
	// scheduler's queue: HTTP parsing, chat template and tokenization. It
	// delays every request's admission, so it adds to TTFT and not to ITL.
	RequestOverhead time.Duration `json:"request_overhead,omitempty"`
}

// DefaultEfficiency is the efficiency of roofline version 1, which every
// spec took when it set none. Versions 2 and up derive it per engine and
// card.
var DefaultEfficiency = Efficiency{MemoryEfficiency: 0.8, ComputeEfficiency: 0.5, StepOverhead: 1800 * time.Microsecond, SeqOverhead: 4 * time.Microsecond}

// Engine is what a serving engine adds to the kernels of a card: how close
// its kernels come to the card's best (a copy's bandwidth, a large matrix
// product's FLOP/s), its fixed costs, and its scheduling defaults.
type Engine struct {
	Name string
	// KernelMemory is the share of the card's achieved copy bandwidth the
	// engine's decode matrix products reach (they read each weight once,
	// in tiles, between launches); KernelCompute the share of its
	// achieved matrix-product FLOP/s a whole prefill reaches (norms,
	// activations and attention's softmax are not matrix products).
	KernelMemory, KernelCompute                float64
	StepOverhead, SeqOverhead, RequestOverhead time.Duration
	// Scheduling defaults: the cap on running sequences and on tokens
	// per step (vLLM --max-num-seqs and --max-num-batched-tokens;
	// TensorRT-LLM max_batch_size and max_num_tokens).
	MaxNumSeqs, MaxBatchedTokens int
	// NoChunkedPrefill: the engine prefills a prompt whole unless told to
	// chunk it (TensorRT-LLM's chunked context is off by default).
	NoChunkedPrefill bool
	Source           string
}

// Engines are the engine models a spec can name. The figures each rests
// on are in its Source; docs/simulator.md's tables show them against published
// serving figures.
var Engines = []Engine{
	{
		Name: "vllm", KernelMemory: 0.86, KernelCompute: 0.7,
		StepOverhead: 2147 * time.Microsecond, SeqOverhead: 4 * time.Microsecond,
		MaxNumSeqs: 256, MaxBatchedTokens: 8192,
		Source: "kernel shares: measured/h200-llama-3-8b.json, decode matrix products at batch 1 reach 3.65 of the 4.26 TB/s a copy reaches (0.86) " +
			"and a prefill of 8192 tokens 553 of 787 matmul TFLOPS (0.70); step overhead: fitted on the vLLM rows of References (CrossValidate's fit on all of them); defaults: vLLM's --max-num-seqs and --max-num-batched-tokens",
	},
	{
		Name: "sglang", KernelMemory: 0.86, KernelCompute: 0.7,
		StepOverhead: 400 * time.Microsecond, SeqOverhead: 4 * time.Microsecond,
		MaxNumSeqs: 1024, MaxBatchedTokens: 8192,
		Source: "kernel shares as vLLM's; step overhead: SGLang's published batch-1 Llama-3.1-8B on one H100 (158.34 tokens/s, reference_2026.go), " +
			"6.32 ms a token where the H100's weights stream in 5.9 ms: its overlap scheduler hides most of the CPU's step; defaults: --chunked-prefill-size 8192, and a running-request cap the KV cache sets (1024 here)",
	},
	{
		Name: "trtllm", KernelMemory: 0.86, KernelCompute: 0.7,
		StepOverhead: 1595 * time.Microsecond, SeqOverhead: 4 * time.Microsecond, RequestOverhead: 5 * time.Millisecond,
		MaxNumSeqs: 2048, MaxBatchedTokens: 8192, NoChunkedPrefill: true,
		Source: "kernel shares as vLLM's until a published row tells them apart; step overhead: fitted on the TensorRT-LLM rows of References (CrossValidate's fit on all of them); " +
			"request overhead: TensorRT-LLM 0.14's open-loop rows at 2 req/s with 16 output tokens on H100 (OpenLoopReferences: the engine idle about four fifths of the time on 8B, half on 70B), whose TTFT was 3.7 ms (8B) and 6 ms (70B, TP 4) above the simulated prefill without one; " +
			"defaults: trtllm-serve's max_batch_size 2048 and max_num_tokens 8192, and chunked context off (tensorrt_llm/llmapi/llm_args.py enable_chunked_prefill=False; Triton's tensorrtllm_backend config enable_chunked_context false; trtllm-bench turns it on)",
	},
}

// LookupEngine returns the named engine model; "" is vLLM.
func LookupEngine(name string) (Engine, bool) {
	if name == "" {
		name = "vllm"
	}
	return lookup(Engines, name, func(e Engine) string { return e.Name })
}

// EngineNames lists the engine models.
func EngineNames() []string { return names(Engines, func(e Engine) string { return e.Name }) }

// Engine knobs a derived profile starts from (vLLM's serving defaults).
const (
	DefaultGPUMemoryUtilization = 0.9
	DefaultBlockSize            = 16
	defaultMaxModelLen          = 8192
	// nonTorchBytes is memory outside the engine's tensors (CUDA context,
	// NCCL buffers, CUDA graphs) that the utilization cap also covers.
	nonTorchBytes = 1 << 30
	// rooflineVersion is the cost model Derive uses for a new spec.
	rooflineVersion = 4
)

func dtypeBytes(dt string) (float64, error) {
	switch dt {
	case "bf16", "fp16", "":
		return 2, nil
	case "fp8", "int8":
		return 1, nil
	case "int4": // GPTQ/AWQ weights, computed on in BF16
		return 0.5, nil
	}
	return 0, fmt.Errorf("unknown dtype %q (bf16, fp16, fp8, int8 or int4)", dt)
}

// withDefaults fills what the spec leaves unset.
func (s Spec) withDefaults() Spec {
	if s.TP == 0 {
		s.TP = 1
	}
	if s.Weights == "" {
		s.Weights = "bf16"
	}
	if s.KVCache == "" {
		s.KVCache = "bf16"
	}
	if s.GPUMemoryUtilization == 0 {
		s.GPUMemoryUtilization = DefaultGPUMemoryUtilization
	}
	if s.BlockSize == 0 {
		s.BlockSize = DefaultBlockSize
	}
	if s.Roofline == 0 {
		s.Roofline = rooflineVersion
	}
	d := DefaultEfficiency
	if s.Roofline >= 2 {
		e, _ := LookupEngine(s.Engine) // Derive has refused unknown engines
		d = Efficiency{
			MemoryEfficiency:  e.KernelMemory * s.GPU.memoryCeiling(),
			ComputeEfficiency: e.KernelCompute * s.GPU.computeCeiling(s.computeType()),
			StepOverhead:      e.StepOverhead, SeqOverhead: e.SeqOverhead, RequestOverhead: e.RequestOverhead,
		}
	}
	if s.MemoryEfficiency == 0 {
		s.MemoryEfficiency = d.MemoryEfficiency
	}
	if s.ComputeEfficiency == 0 {
		s.ComputeEfficiency = d.ComputeEfficiency
	}
	if s.StepOverhead == 0 {
		s.StepOverhead = d.StepOverhead
	}
	if s.SeqOverhead == 0 {
		s.SeqOverhead = d.SeqOverhead
	}
	if s.RequestOverhead == 0 && s.Roofline >= 3 {
		s.RequestOverhead = d.RequestOverhead
	}
	return s
}

// CarryEfficiency carries efficiencies fitted on one spec's card to
// another's: from roofline version 2 what an engine reaches is a share of
// what the card's best kernels reach, so the fitted share is kept and the
// new card's ceilings applied (a fit on an H200 carried to an MI300X keeps
// the engine, not the H200's bandwidth efficiency). Version 1 had no
// ceilings: its efficiencies carry as they are. Overheads carry as they are.
func CarryEfficiency(e Efficiency, from, to Spec) Efficiency {
	if from.Roofline == 1 {
		return e
	}
	f, t := from.withDefaults(), to.withDefaults()
	if e.MemoryEfficiency > 0 {
		e.MemoryEfficiency = min(1, e.MemoryEfficiency*t.GPU.memoryCeiling()/f.GPU.memoryCeiling())
	}
	if e.ComputeEfficiency > 0 {
		e.ComputeEfficiency = min(1, e.ComputeEfficiency*t.GPU.computeCeiling(t.computeType())/f.GPU.computeCeiling(f.computeType()))
	}
	return e
}

// computeType is the tensor cores the layers' matrix products run on:
// W8A8 FP8 weights run on FP8 units where the card has them.
func (s Spec) computeType() string {
	if wb, _ := dtypeBytes(s.Weights); wb == 1 && s.GPU.TFLOPS["fp8"] > 0 {
		return "fp8"
	}
	return "bf16"
}

// Knobs are the engine settings a derived profile takes besides the spec;
// zero fields get vLLM's defaults.
type Knobs struct {
	MaxNumSeqs       int
	MaxBatchedTokens int
	MaxModelLen      int
	// ChunkedPrefill turns chunked prefill on or off (nil: the engine's
	// default). Off, a prompt is prefilled in one step, and the step's
	// token budget grows to hold it.
	ChunkedPrefill *bool
}

// Knobs are the profile's own engine settings, for deriving it again
// (on other knobs, or a fitted spec).
func (p Profile) Knobs() Knobs {
	chunked := !p.NoChunkedPrefill
	return Knobs{MaxNumSeqs: p.MaxNumSeqs, MaxBatchedTokens: p.MaxBatchedTokens, MaxModelLen: p.MaxModelLen, ChunkedPrefill: &chunked}
}

// Derive builds the profile of a spec: its step-cost model, its KV-cache
// capacity, and its knobs.
func Derive(s Spec, k Knobs) (Profile, error) {
	eng, ok := LookupEngine(s.Engine)
	if !ok {
		return Profile{}, fmt.Errorf("engine %q: want one of %s", s.Engine, strings.Join(EngineNames(), ", "))
	}
	if s.Roofline < 0 || s.Roofline > rooflineVersion {
		return Profile{}, fmt.Errorf("roofline version %d: this benchci knows 1 to %d", s.Roofline, rooflineVersion)
	}
	if s.PCIeAllReduce != "" && (s.PCIeAllReduce != PCIeRing || s.Roofline != 2) {
		return Profile{}, fmt.Errorf("pcie_all_reduce %q: only %q, and only under roofline version 2", s.PCIeAllReduce, PCIeRing)
	}
	s = s.withDefaults()
	if err := s.check(); err != nil {
		return Profile{}, err
	}
	k, noChunking, err := k.forEngine(eng, s)
	if err != nil {
		return Profile{}, err
	}
	r := newRoofline(s)
	blocks := r.kvTokens(k.MaxBatchedTokens, k.MaxNumSeqs) / int64(s.BlockSize)
	if blocks*int64(s.BlockSize) < int64(k.MaxModelLen) {
		return Profile{}, fmt.Errorf("%s on %d x %s: the KV cache holds %d tokens, less than one request of max_model_len %d: raise tp or gpu_memory_utilization, or use fp8",
			s.Model.Name, s.TP, s.GPU.Name, max(0, blocks*int64(s.BlockSize)), k.MaxModelLen)
	}
	served := s.Model.Served
	if served == "" {
		served = s.Model.Name
	}
	p := Profile{
		Name: SpecName(s), Model: served,
		MaxNumSeqs: k.MaxNumSeqs, MaxBatchedTokens: k.MaxBatchedTokens, MaxModelLen: k.MaxModelLen,
		NoChunkedPrefill: noChunking,
		TokensPerStep:    1, ChatTemplateTokens: 5, PrefixCaching: true,
		KVBlocks: int(blocks), BlockSize: s.BlockSize,
		RequestOverhead: s.RequestOverhead,
		Spec:            &s,
		Source:          fmt.Sprintf("derived: %s x %d %s, weights %s, KV cache %s; model: %s; GPU: %s", s.Model.Name, s.TP, s.GPU.Name, s.Weights, s.KVCache, s.Model.Source, s.GPU.Source),
	}
	// The constant fields describe the derived model at idle, for what
	// reads them (results, the report): a lone decode and one prompt token.
	one := r.step(batch{seqs: 1, decodes: 1, decodeCtx: 1})
	p.StepBase = one
	p.PrefillPerToken = r.step(batch{seqs: 1, prefill: 1024, prefillAttn: 1024 * 1025 / 2})/1024 - one/1024
	// Cards a unit off (a card's figure of 1e-300) price a step in
	// centuries, past which a duration wraps negative: refused, whatever
	// figure did it.
	if !(one > 0 && one <= maxDerivedStep) || !(p.PrefillPerToken >= 0 && p.PrefillPerToken <= maxDerivedStep) {
		return Profile{}, fmt.Errorf("%s: the cards price a lone decode step at %v and a prompt token at %v: want at most %v (a card's figure off by units?)", p.Name, one, p.PrefillPerToken, maxDerivedStep)
	}
	return p, nil
}

// forEngine fills the knobs a spec leaves to its engine, and says
// whether prompts are prefilled whole.
func (k Knobs) forEngine(eng Engine, s Spec) (Knobs, bool, error) {
	if k.MaxNumSeqs == 0 {
		k.MaxNumSeqs = eng.MaxNumSeqs
	}
	if k.MaxBatchedTokens == 0 {
		k.MaxBatchedTokens = eng.MaxBatchedTokens
	}
	if k.MaxModelLen == 0 {
		k.MaxModelLen = min(s.Model.ContextLen, defaultMaxModelLen)
	}
	if k.MaxModelLen > s.Model.ContextLen {
		return k, false, fmt.Errorf("max_model_len %d exceeds the model's context of %d", k.MaxModelLen, s.Model.ContextLen)
	}
	// Version 1 chunked every engine's prefill, as it priced every engine
	// alike. The engine's own default (TensorRT-LLM's whole prefills)
	// applies from version 2: it came after version 2's first files, which
	// chunked, but a file's knobs (Profile.Knobs) always name its mode.
	noChunking := eng.NoChunkedPrefill && s.Roofline >= 2
	if k.ChunkedPrefill != nil {
		noChunking = !*k.ChunkedPrefill
	}
	if noChunking {
		k.MaxBatchedTokens = max(k.MaxBatchedTokens, k.MaxModelLen)
	}
	return k, noChunking, nil
}

// check refuses a defaulted spec's impossible cards, sizes and shares.
func (s Spec) check() error {
	if err := s.Model.Check(); err != nil {
		return err
	}
	if err := s.GPU.Check(); err != nil {
		return err
	}
	if s.TP < 1 || s.TP > 64 {
		return fmt.Errorf("tp %d: want 1 to 64", s.TP)
	}
	if s.Model.Heads%s.TP != 0 {
		return fmt.Errorf("tp %d does not divide the model's %d attention heads", s.TP, s.Model.Heads)
	}
	if s.GPUMemoryUtilization <= 0 || s.GPUMemoryUtilization > 1 {
		return fmt.Errorf("gpu_memory_utilization %g: want above 0 and at most 1", s.GPUMemoryUtilization)
	}
	if s.BlockSize < 1 || s.BlockSize > 1024 {
		return fmt.Errorf("block_size %d: want 1 to 1024", s.BlockSize)
	}
	// Far under what any kernel reaches is a unit off, and prices a step
	// in years (GPUCard.Check allows an achieved figure of 1% of the
	// datasheet, and an engine's share of that is less).
	if !(s.MemoryEfficiency >= MinEfficiency && s.MemoryEfficiency <= 1) || !(s.ComputeEfficiency >= MinEfficiency && s.ComputeEfficiency <= 1) {
		return fmt.Errorf("memory_efficiency %g, compute_efficiency %g: want %g to 1", s.MemoryEfficiency, s.ComputeEfficiency, MinEfficiency)
	}
	if _, err := dtypeBytes(s.Weights); err != nil {
		return fmt.Errorf("weights: %w", err)
	}
	if _, err := dtypeBytes(s.KVCache); err != nil {
		return fmt.Errorf("kv_cache: %w", err)
	}
	return nil
}

// MinEfficiency and maxDerivedStep bound what a spec's cards may make of
// a step: a CPU's memory serving a 70B model takes seconds a token, not
// minutes.
const (
	MinEfficiency  = 0.001
	maxDerivedStep = time.Minute
)

// SpecName names a derived profile: model@gpu, then -tpN and the dtypes
// where they are not the defaults.
func SpecName(s Spec) string {
	s = s.withDefaults()
	var b strings.Builder
	fmt.Fprintf(&b, "%s@%s", s.Model.Name, s.GPU.Name)
	if s.TP > 1 {
		fmt.Fprintf(&b, "-tp%d", s.TP)
	}
	if s.Weights != "bf16" {
		b.WriteString("-" + s.Weights)
	}
	if s.KVCache != "bf16" {
		b.WriteString("-kv" + s.KVCache)
	}
	if s.Engine != "" && s.Engine != "vllm" {
		b.WriteString("-" + s.Engine)
	}
	return b.String()
}

// batch is what one engine step computes.
type batch struct {
	seqs        int   // sequences with work in the step
	decodes     int   // of them, decoding one token each
	prefill     int   // prompt tokens computed (prefill chunks)
	decodeCtx   int64 // context tokens the decodes attend to (KV read)
	prefillCtx  int64 // earlier context the prefill chunks attend to (KV read)
	prefillAttn int64 // (query, key) pairs of the prefill chunks' attention
	// kvInUse is the tokens the running sequences hold in the KV cache
	// once the step has run; set only for a profile with UnifiedKV.
	kvInUse int64
	// sampled is the positions projected to logits, when more than one a
	// sequence (speculative decoding verifies k+1); 0 is one a sequence.
	sampled int
}

// samples is the positions of the step projected to logits.
func (b batch) samples() int { return max(b.seqs, b.sampled) }

// roofline holds a spec's per-GPU constants.
type roofline struct {
	s                 Spec
	denseBytes        float64 // weights every step streams, per GPU
	expertBytes       float64 // all experts' weights, per GPU
	kvBytesPerToken   float64 // per GPU
	flopsPerToken     float64 // 2 x active parameters of the layers, per GPU
	logitFlops        float64 // the output projection, per sampled sequence, per GPU
	attnFlopsPerPair  float64 // per GPU
	bandwidth         float64 // achieved bytes/s
	flops             float64 // achieved FLOP/s of the layers' matrix products
	bf16Flops         float64 // achieved FLOP/s of attention and the output projection
	allReduce         time.Duration
	activationPerTok  float64 // bytes of activations per batched token, per GPU
	weightBytesPerGPU float64
}

func newRoofline(s Spec) roofline {
	m, g, tp := s.Model, s.GPU, float64(s.TP)
	wb, _ := dtypeBytes(s.Weights)
	kb, _ := dtypeBytes(s.KVCache)
	computeType := s.computeType()
	// Cards count the input embedding and an untied output projection of
	// the same size in Params. Quantized checkpoints (FP8 from ModelOpt or
	// LLM Compressor) keep both in BF16 and quantize the layers only; the
	// embedding is a lookup, so its rows are read, not streamed.
	embedding := float64(m.Vocab * m.Hidden)
	layers := math.Max(0, m.Params-m.ExpertParams-2*embedding)
	kvHeadsPerGPU := math.Max(1, float64(m.KVHeads)/tp) // fewer KV heads than GPUs: replicated
	// Attention and the output projection run in BF16 whatever the
	// weights (an FP8 KV cache is stored in FP8 and computed on in BF16).
	// Version 2 scales the layers' efficiency by how the card's BF16
	// matrix products fare against its FP8 ones.
	attnEff := s.ComputeEfficiency
	if s.Roofline >= 2 && computeType != "bf16" {
		attnEff *= g.computeCeiling("bf16") / g.computeCeiling(computeType)
	}
	return roofline{
		s:               s,
		denseBytes:      (layers*wb + embedding*2) / tp,
		expertBytes:     m.ExpertParams * wb / tp,
		kvBytesPerToken: 2 * float64(m.Layers) * kvHeadsPerGPU * float64(m.HeadDim) * kb,
		// The output projection runs only for the last token of each
		// sequence in the step (the one that is sampled), so it is not in
		// every token's FLOPs.
		flopsPerToken:     2 * math.Max(0, m.ActiveParams()-2*embedding) / tp,
		logitFlops:        2 * embedding / tp,
		attnFlopsPerPair:  4 * float64(m.Layers*m.Heads*m.HeadDim) / tp,
		bandwidth:         g.BandwidthGBs * 1e9 * s.MemoryEfficiency,
		flops:             g.TFLOPS[computeType] * 1e12 * s.ComputeEfficiency,
		bf16Flops:         g.TFLOPS["bf16"] * 1e12 * math.Min(1, attnEff),
		allReduce:         time.Duration(g.AllReduceUs * 1e3),
		activationPerTok:  (2*float64(m.Intermediate)/tp + 4*float64(m.Hidden)) * 2,
		weightBytesPerGPU: ((m.Params-2*embedding)*wb + 2*embedding*2) / tp,
	}
}

// kvTokens is how many tokens of KV cache fit on each GPU once weights,
// the activations of a full step, the sampler's logits and non-tensor
// memory are set aside, as vLLM's memory profiling does.
func (r roofline) kvTokens(maxBatchedTokens, maxNumSeqs int) int64 {
	budget := r.s.GPU.MemoryGiB * (1 << 30) * r.s.GPUMemoryUtilization
	reserved := r.weightBytesPerGPU + float64(maxBatchedTokens)*r.activationPerTok +
		float64(maxNumSeqs)*float64(r.s.Model.Vocab)*4 + nonTorchBytes
	return int64(math.Max(0, budget-reserved) / r.kvBytesPerToken)
}

// weightBytes is what a step of so many tokens streams of the weights.
func (r roofline) weightBytes(tokens float64) float64 {
	weights := r.denseBytes
	if r.expertBytes > 0 {
		// Each token routes to k of E experts: the share of experts some
		// token of the step touches is 1 - (1 - k/E)^tokens.
		m := r.s.Model
		touched := 1 - math.Pow(1-float64(m.ExpertsPerToken)/float64(m.Experts), tokens)
		weights += r.expertBytes * touched
	}
	return weights
}

// step is the modelled duration of one engine step.
func (r roofline) step(b batch) time.Duration {
	tokens := float64(b.decodes + b.prefill)
	if tokens == 0 {
		return 0
	}
	if r.s.Roofline < 2 {
		return r.stepV1(b, tokens)
	}
	matmuls := overlap(r.weightBytes(tokens)/r.bandwidth,
		tokens*r.flopsPerToken/r.flops+float64(b.samples())*r.logitFlops/r.bf16Flops)
	attention := overlap(float64(b.decodeCtx+b.prefillCtx)*r.kvBytesPerToken/r.bandwidth,
		float64(b.decodeCtx+b.prefillAttn)*r.attnFlopsPerPair/r.bf16Flops)
	d := time.Duration((matmuls+attention)*1e9) + r.s.StepOverhead + time.Duration(b.seqs)*r.s.SeqOverhead
	if r.s.Roofline >= 4 {
		d += time.Duration(float64(b.seqs*r.s.Model.Layers) * r.s.GPU.SeqLayerUs * 1e3)
	}
	if r.s.TP > 1 {
		// Two all-reduces per layer (after attention and after the MLP)
		// of the step's activations.
		d += time.Duration(2*r.s.Model.Layers) * r.s.GPU.allReduce(r.s.TP, tokens*float64(r.s.Model.Hidden)*2, r.s.PCIeAllReduce == PCIeRing)
	}
	return d
}

// overlapNorm is the exponent of overlap's smooth maximum. Fitted to the
// decode matrix products of measured/h200-llama-3-8b.json, which take 4.11
// ms at batch 1 and 4.88 at batch 128, where their FLOPs would take 90% as
// long as their bytes: a hard maximum prices the latter at the former.
const overlapNorm = 3

// overlap is the time of a kernel group whose memory traffic takes m and
// whose arithmetic takes c alone: a smooth maximum (the overlapNorm-norm),
// since near the ridge point neither unit is busy all the time; far from
// it, the larger term alone.
func overlap(m, c float64) float64 {
	if m == 0 || c == 0 {
		return m + c
	}
	hi, lo := max(m, c), min(m, c)
	return hi * math.Pow(1+math.Pow(lo/hi, overlapNorm), 1.0/overlapNorm)
}

// stepV1 is roofline version 1's step: the larger of all bytes and all
// FLOPs, and a ring all-reduce of one latency on every interconnect.
func (r roofline) stepV1(b batch, tokens float64) time.Duration {
	bytes := r.weightBytes(tokens) + float64(b.decodeCtx+b.prefillCtx)*r.kvBytesPerToken
	compute := tokens*r.flopsPerToken/r.flops +
		(float64(b.samples())*r.logitFlops+float64(b.decodeCtx+b.prefillAttn)*r.attnFlopsPerPair)/r.bf16Flops
	busy := math.Max(bytes/r.bandwidth, compute)
	d := time.Duration(busy*1e9) + r.s.StepOverhead + time.Duration(b.seqs)*r.s.SeqOverhead
	if tp := r.s.TP; tp > 1 {
		msg := tokens * float64(r.s.Model.Hidden) * 2
		each := r.allReduce + time.Duration(2*float64(tp-1)/float64(tp)*msg/(r.s.GPU.LinkGBs*1e9)*1e9)
		d += time.Duration(2*r.s.Model.Layers) * each
	}
	return d
}
