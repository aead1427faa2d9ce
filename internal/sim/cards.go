package sim

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// ModelCard is what the simulator needs to know of a model: its shapes,
// from the model's config.json, and its parameter count.
type ModelCard struct {
	Name string `json:"name"`
	// Served is the model name the server reports (/v1/models).
	Served string `json:"served,omitempty"`
	// Params is the total parameter count; ExpertParams the part of it in
	// MoE experts (0 for a dense model).
	Params       float64 `json:"params"`
	ExpertParams float64 `json:"expert_params,omitempty"`
	Layers       int     `json:"layers"`
	Hidden       int     `json:"hidden"`
	Heads        int     `json:"heads"`
	KVHeads      int     `json:"kv_heads"`
	HeadDim      int     `json:"head_dim"`
	Intermediate int     `json:"intermediate"`
	Vocab        int     `json:"vocab"`
	// Experts and ExpertsPerToken describe a MoE layer (0 for dense).
	Experts         int `json:"experts,omitempty"`
	ExpertsPerToken int `json:"experts_per_token,omitempty"`
	// ContextLen is the longest context the model takes.
	ContextLen int    `json:"context_len"`
	Source     string `json:"source,omitempty"`
}

// ActiveParams is the parameters one token passes through: the dense
// part and ExpertsPerToken of the experts.
func (m ModelCard) ActiveParams() float64 {
	if m.Experts == 0 {
		return m.Params
	}
	return m.Params - m.ExpertParams + m.ExpertParams*float64(m.ExpertsPerToken)/float64(m.Experts)
}

// Check reports the first missing or impossible field.
func (m ModelCard) Check() error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"params", m.Params}, {"layers", float64(m.Layers)}, {"hidden", float64(m.Hidden)}, {"heads", float64(m.Heads)},
		{"kv_heads", float64(m.KVHeads)}, {"head_dim", float64(m.HeadDim)}, {"context_len", float64(m.ContextLen)}} {
		if f.v <= 0 {
			return fmt.Errorf("model card %q: %s must be positive", m.Name, f.name)
		}
	}
	if m.KVHeads > m.Heads {
		return fmt.Errorf("model card %q: kv_heads (%d) exceeds heads (%d)", m.Name, m.KVHeads, m.Heads)
	}
	if m.ExpertParams < 0 || m.ExpertParams >= m.Params {
		return fmt.Errorf("model card %q: expert_params must be at least 0 and below params", m.Name)
	}
	if (m.Experts > 0) != (m.ExpertParams > 0) || m.ExpertsPerToken > m.Experts || (m.Experts > 0 && m.ExpertsPerToken < 1) {
		return fmt.Errorf("model card %q: a MoE model sets experts, experts_per_token (1..experts) and expert_params together", m.Name)
	}
	return nil
}

// GPUCard is one accelerator's public spec-sheet figures.
type GPUCard struct {
	Name string `json:"name"`
	// MemoryGiB is the device memory as the driver reports it.
	MemoryGiB float64 `json:"memory_gib"`
	// BandwidthGBs is the memory bandwidth in GB/s (10^9 bytes).
	BandwidthGBs float64 `json:"bandwidth_gbs"`
	// TFLOPS are dense (not sparse) tensor-core TFLOP/s by compute type:
	// "bf16", and "fp8" where the chip has FP8 units.
	TFLOPS map[string]float64 `json:"tflops"`
	// LinkGBs is the GPU-to-GPU bandwidth per direction in GB/s (NVLink,
	// Infinity Fabric, or PCIe), and AllReduceLatency the fixed cost of
	// one small all-reduce across the tensor-parallel group, in microseconds
	// (kernel launch and synchronization, as measured by nccl-tests).
	LinkGBs     float64 `json:"link_gbs"`
	AllReduceUs float64 `json:"all_reduce_us"`
	// AllReduceDoublingUs is what each doubling of a switched group beyond
	// two GPUs adds to a small all-reduce's latency: NCCL's rises from
	// about 6 µs between two H100s to 21-24 µs among eight (a tree's
	// depth, and more GPUs to wait for), about 8 µs a doubling.
	AllReduceDoublingUs float64 `json:"all_reduce_doubling_us,omitempty"`
	// Interconnect is how the tensor-parallel group's GPUs reach each
	// other (see allReduce): "nvswitch" (every GPU reaches every other at
	// LinkGBs through switches, as on HGX boards; the default), "mesh"
	// (a direct link to each of PeerLinks peers sharing LinkGBs, as
	// Infinity Fabric on MI300X boards), or "pcie" (through the host's
	// PCIe switches, no peer links: LinkGBs is one GPU's PCIe bandwidth).
	Interconnect string `json:"interconnect,omitempty"`
	PeerLinks    int    `json:"peer_links,omitempty"`
	// AchievedGBs and AchievedTFLOPS are what the best kernels reach on
	// the card: a device-to-device copy, and large dense matrix products
	// by compute type. Engines come within a share of these (Engine), not
	// of the datasheet; where they are unknown, defaultMemoryCeiling and
	// defaultComputeCeiling of the datasheet stand in.
	AchievedGBs    float64            `json:"achieved_gbs,omitempty"`
	AchievedTFLOPS map[string]float64 `json:"achieved_tflops,omitempty"`
	// SeqLayerUs is what each sequence of a step costs per layer on the
	// card's serving stack beyond the roofline, in microseconds: decode
	// work that grows with the batch's sequences, not with their context
	// or their FLOPs. It is fitted on the card's published rows where its
	// batched rows want it (CrossValidate refits it without each source),
	// and 0 elsewhere. Under roofline versions before 4 it is not priced.
	SeqLayerUs float64 `json:"seq_layer_us,omitempty"`
	Source     string  `json:"source,omitempty"`
}

// Interconnects a card can name.
const (
	InterconnectSwitch = "nvswitch"
	InterconnectMesh   = "mesh"
	InterconnectPCIe   = "pcie"
)

// What a card reaches of its datasheet where it has no measurement: the
// H100 and H200 figures below, rounded down.
const (
	defaultMemoryCeiling  = 0.88
	defaultComputeCeiling = 0.78
)

func (g GPUCard) memoryCeiling() float64 {
	if g.AchievedGBs > 0 {
		return min(1, g.AchievedGBs/g.BandwidthGBs)
	}
	return defaultMemoryCeiling
}

func (g GPUCard) computeCeiling(computeType string) float64 {
	if a := g.AchievedTFLOPS[computeType]; a > 0 && g.TFLOPS[computeType] > 0 {
		return min(1, a/g.TFLOPS[computeType])
	}
	return defaultComputeCeiling
}

// allReduce is the time of one all-reduce of msg bytes per GPU across tp
// GPUs. On switches (NVSwitch) every GPU sends at its full link rate
// whatever the group's size, and small messages take one fixed latency
// (one-shot all-reduce kernels, as vLLM's custom all-reduce and NCCL's
// NVLS do), which grows by AllReduceDoublingUs each time the group
// doubles beyond two. A mesh gives a group of tp only tp-1 of its peer links. Over
// PCIe it is NCCL's (custom all-reduces need peer links): a small one
// costs one latency whatever the group (nccl-tests show 40-54 µs for 8
// bytes among eight PCIe GPUs, NVIDIA/nccl#1530 and #1439; that two cost
// as much is this model's assumption), and a large one moves at
// pcieBusShare of the link. pcieRing prices it as roofline version 2 did
// before that (7c1a22c), for the profile files fitted then
// (Spec.PCIeAllReduce): a ring whose 2(tp-1) steps each pay a hop's
// latency, AllReduceUs the two steps of a pair, at the link's full rate.
func (g GPUCard) allReduce(tp int, msg float64, pcieRing bool) time.Duration {
	n := float64(tp)
	bw := g.LinkGBs * 1e9
	latency := g.AllReduceUs
	switch g.Interconnect {
	case "", InterconnectSwitch:
		if n > 2 {
			latency += g.AllReduceDoublingUs * math.Log2(n/2)
		}
	case InterconnectMesh:
		if g.PeerLinks > 0 {
			bw *= min(1, (n-1)/float64(g.PeerLinks))
		}
	case InterconnectPCIe:
		if pcieRing {
			latency *= n - 1
		} else {
			bw *= pcieBusShare
		}
	}
	return time.Duration((latency*1e-6 + 2*(n-1)/n*msg/bw) * 1e9)
}

// maxAllReduceUs bounds a card's all-reduce latencies, in microseconds.
const maxAllReduceUs = 1e6

// maxSeqLayerUs bounds GPUCard.SeqLayerUs: at 100 µs a sequence and a
// layer, a step of 256 sequences of an 80-layer model takes 2 s.
const maxSeqLayerUs = 100

// pcieBusShare is the share of one GPU's PCIe bandwidth a large
// all-reduce's ring reaches through the host. nccl-tests' bus bandwidth
// on PCIe 5 GeForce boxes is 44-55% of the link (28 GB/s among eight,
// 35 among four, NVIDIA/nccl#1639); 0.6, a little above, was set with
// TensorRT-LLM's L40S rows, and SGLang's disaggregation ratio on A10s
// (reference_2026.go) fails its 30% at 0.5, so it holds the value
// too and is not independent evidence of it.
const pcieBusShare = 0.6

// Check reports the first missing or impossible field.
func (g GPUCard) Check() error {
	if g.MemoryGiB <= 0 || g.BandwidthGBs <= 0 || g.TFLOPS["bf16"] <= 0 || g.LinkGBs <= 0 {
		return fmt.Errorf("gpu card %q: memory_gib, bandwidth_gbs, tflops.bf16 and link_gbs must be positive", g.Name)
	}
	switch g.Interconnect {
	case "", InterconnectSwitch, InterconnectMesh, InterconnectPCIe:
	default:
		return fmt.Errorf("gpu card %q: interconnect %q: want %s, %s or %s", g.Name, g.Interconnect, InterconnectSwitch, InterconnectMesh, InterconnectPCIe)
	}
	if g.PeerLinks < 0 || g.AllReduceUs < 0 || g.AllReduceDoublingUs < 0 {
		return fmt.Errorf("gpu card %q: peer_links, all_reduce_us and all_reduce_doubling_us must not be negative", g.Name)
	}
	// A collective of a second (NaN fails too) is a unit off: each step
	// pays two a layer, and would run for minutes.
	for _, f := range []struct {
		name string
		v    float64
	}{{"all_reduce_us", g.AllReduceUs}, {"all_reduce_doubling_us", g.AllReduceDoublingUs}} {
		if !(f.v <= maxAllReduceUs) {
			return fmt.Errorf("gpu card %q: %s %g: want at most %g (a second)", g.Name, f.name, f.v, float64(maxAllReduceUs))
		}
	}
	if !(g.SeqLayerUs >= 0 && g.SeqLayerUs <= maxSeqLayerUs) {
		return fmt.Errorf("gpu card %q: seq_layer_us %g: want 0 to %g", g.Name, g.SeqLayerUs, float64(maxSeqLayerUs))
	}
	// An achieved figure under 1% of the datasheet's is a typo (a unit
	// off), and would price a step in years: refused, as a negative one.
	if g.AchievedGBs != 0 && !(g.AchievedGBs >= g.BandwidthGBs/100) {
		return fmt.Errorf("gpu card %q: achieved_gbs %g: want 0 (unknown) or at least 1%% of bandwidth_gbs", g.Name, g.AchievedGBs)
	}
	for k, v := range g.AchievedTFLOPS {
		if !(g.TFLOPS[k] > 0) || !(v >= g.TFLOPS[k]/100) {
			return fmt.Errorf("gpu card %q: achieved_tflops.%s %g: want at least 1%% of a positive tflops.%s", g.Name, k, v, k)
		}
	}
	return nil
}

// The built-in cards. Shapes are those of each model's config.json on
// Hugging Face; parameter counts those of the model cards. GPU figures are
// the vendors' datasheets: dense tensor throughput (the datasheets' headline
// figures are with 2:4 sparsity, twice these), memory as nvidia-smi or
// rocm-smi report it.
var modelCards = []ModelCard{
	{Name: "llama-3-8b", Served: "meta-llama/Meta-Llama-3-8B-Instruct", Params: 8.03e9, Layers: 32, Hidden: 4096, Heads: 32, KVHeads: 8, HeadDim: 128,
		Intermediate: 14336, Vocab: 128256, ContextLen: 8192,
		Source: "huggingface.co/meta-llama/Meta-Llama-3-8B config.json; 8.03B parameters. Llama 3.1 8B has the same shapes (context 131072)"},
	{Name: "llama-3-70b", Served: "meta-llama/Meta-Llama-3-70B-Instruct", Params: 70.55e9, Layers: 80, Hidden: 8192, Heads: 64, KVHeads: 8, HeadDim: 128,
		Intermediate: 28672, Vocab: 128256, ContextLen: 8192,
		Source: "huggingface.co/meta-llama/Meta-Llama-3-70B config.json; 70.55B parameters. Llama 3.1/3.3 70B have the same shapes (context 131072)"},
	{Name: "llama-2-70b", Served: "meta-llama/Llama-2-70b-chat-hf", Params: 68.98e9, Layers: 80, Hidden: 8192, Heads: 64, KVHeads: 8, HeadDim: 128,
		Intermediate: 28672, Vocab: 32000, ContextLen: 4096,
		Source: "huggingface.co/meta-llama/Llama-2-70b-hf config.json; 68.98B parameters from its shapes (Llama 3 70B's, with a 32,000-token vocabulary)"},
	{Name: "qwen2.5-7b", Served: "Qwen/Qwen2.5-7B-Instruct", Params: 7.62e9, Layers: 28, Hidden: 3584, Heads: 28, KVHeads: 4, HeadDim: 128,
		Intermediate: 18944, Vocab: 152064, ContextLen: 32768,
		Source: "huggingface.co/Qwen/Qwen2.5-7B-Instruct config.json; 7.61B parameters"},
	{Name: "qwen2.5-72b", Served: "Qwen/Qwen2.5-72B-Instruct", Params: 72.7e9, Layers: 80, Hidden: 8192, Heads: 64, KVHeads: 8, HeadDim: 128,
		Intermediate: 29568, Vocab: 152064, ContextLen: 32768,
		Source: "huggingface.co/Qwen/Qwen2.5-72B-Instruct config.json; 72.7B parameters"},
	{Name: "llama-3.1-405b", Served: "meta-llama/Llama-3.1-405B-Instruct", Params: 405.85e9, Layers: 126, Hidden: 16384, Heads: 128, KVHeads: 8, HeadDim: 128,
		Intermediate: 53248, Vocab: 128256, ContextLen: 131072,
		Source: "huggingface.co/meta-llama/Llama-3.1-405B config.json; 405.85B parameters from its shapes (untied embeddings)"},
	{Name: "mixtral-8x7b", Served: "mistralai/Mixtral-8x7B-Instruct-v0.1", Params: 46.7e9, ExpertParams: 45.1e9, Layers: 32, Hidden: 4096, Heads: 32, KVHeads: 8, HeadDim: 128,
		Intermediate: 14336, Vocab: 32000, Experts: 8, ExpertsPerToken: 2, ContextLen: 32768,
		Source: "huggingface.co/mistralai/Mixtral-8x7B-v0.1 config.json; 46.7B parameters, 12.9B active; experts 32 layers x 8 x 3 x 4096 x 14336 = 45.1B"},
}

var gpuCards = []GPUCard{
	{Name: "a100-80gb", MemoryGiB: 80, BandwidthGBs: 2039, TFLOPS: map[string]float64{"bf16": 312},
		LinkGBs: 300, AllReduceUs: 25, AllReduceDoublingUs: 8, Interconnect: InterconnectSwitch,
		AchievedTFLOPS: map[string]float64{"bf16": 271.2},
		Source: "NVIDIA A100 datasheet (SXM4 80GB): 2,039 GB/s HBM2e, 312 TFLOPS BF16 dense, NVLink 600 GB/s both directions; no FP8 units; " +
			"achieved: 271.2 TFLOPS BF16 matrix products, the maximum achievable matmul FLOPS table of github.com/stas00/ml-engineering compute/accelerator/README.md " +
			"(torch.matmul, the mean of 100 iterations at the best shape; the same table's H100 SXM reaches 80.3%, as the H200 measured here does 79.6%)"},
	{Name: "h100-sxm", MemoryGiB: 79.6, BandwidthGBs: 3350, TFLOPS: map[string]float64{"bf16": 989, "fp8": 1979},
		LinkGBs: 450, AllReduceUs: 20, AllReduceDoublingUs: 8, Interconnect: InterconnectSwitch,
		Source: "NVIDIA H100 datasheet (SXM5): 80 GB HBM3 (79.6 GiB usable), 3.35 TB/s, 989 TFLOPS BF16 / 1,979 FP8 dense, NVLink 900 GB/s both directions"},
	{Name: "h200", MemoryGiB: 140.4, BandwidthGBs: 4800, TFLOPS: map[string]float64{"bf16": 989, "fp8": 1979},
		LinkGBs: 450, AllReduceUs: 20, AllReduceDoublingUs: 8, Interconnect: InterconnectSwitch,
		AchievedGBs: 4258, AchievedTFLOPS: map[string]float64{"bf16": 787},
		Source: "NVIDIA H200 datasheet (SXM): 141 GB HBM3e (140.4 GiB usable), 4.8 TB/s, H100's compute, NVLink 900 GB/s both directions; " +
			"achieved: a 4,258 GB/s copy and 787 TFLOPS BF16 matrix products, measured/h200-llama-3-8b.json's ceilings"},
	{Name: "l40s", MemoryGiB: 45, BandwidthGBs: 864, TFLOPS: map[string]float64{"bf16": 362, "fp8": 733},
		LinkGBs: 32, AllReduceUs: 40, Interconnect: InterconnectPCIe,
		Source: "NVIDIA L40S datasheet: 48 GB GDDR6 (45 GiB usable), 864 GB/s, 362 TFLOPS BF16 / 733 FP8 dense, PCIe Gen4 x16 (no NVLink)"},
	{Name: "mi300x", MemoryGiB: 192, BandwidthGBs: 5300, TFLOPS: map[string]float64{"bf16": 1307, "fp8": 2615},
		LinkGBs: 448, AllReduceUs: 25, Interconnect: InterconnectMesh, PeerLinks: 7,
		AchievedGBs: 4293, AchievedTFLOPS: map[string]float64{"bf16": 588, "fp8": 1177}, SeqLayerUs: 1.14,
		Source: "AMD Instinct MI300X datasheet: 192 GB HBM3, 5.3 TB/s, 1,307 TFLOPS BF16 / 2,615 FP8 dense, Infinity Fabric 7 x 128 GB/s links (64 GB/s each way); " +
			"achieved: ~81% of its bandwidth and ~45% of its peak FLOP/s in BF16 and FP8, SemiAnalysis's MI300X vs H100 measurements (Dec 2024) as reported at aiweekly.co/alerts/amd-mi300x-hits-only-45-of-peak-flops-in-practice; " +
			"seq_layer_us: fitted on the MI300X rows of References (CrossValidate's fit on all of them), vLLM on ROCm at batch 64-256 of 70B and 405B: at batch 1 the roofline meets them within 3%, and each added sequence costs 1.0 to 1.5 µs a layer more (70B's rows the least; the long-context 70B row wanted 0.6 while its prompts were priced as prefilled, which the benchmark's warm-up had cached); tried on the H100 and H200 rows too, the held-out median rose from 7% to 8%"},
}

// LookupModel returns the named built-in model card.
func LookupModel(name string) (ModelCard, bool) {
	return lookup(modelCards, name, func(m ModelCard) string { return m.Name })
}

// LookupGPU returns the named built-in GPU card.
func LookupGPU(name string) (GPUCard, bool) {
	return lookup(gpuCards, name, func(g GPUCard) string { return g.Name })
}

// ModelNames and GPUNames list the built-in cards.
func ModelNames() []string { return names(modelCards, func(m ModelCard) string { return m.Name }) }
func GPUNames() []string   { return names(gpuCards, func(g GPUCard) string { return g.Name }) }

func lookup[T any](list []T, name string, key func(T) string) (T, bool) {
	i := slices.IndexFunc(list, func(t T) bool { return key(t) == name })
	if i < 0 {
		var zero T
		return zero, false
	}
	return list[i], true
}

func names[T any](list []T, key func(T) string) []string {
	out := make([]string, len(list))
	for i, t := range list {
		out[i] = key(t)
	}
	return out
}
