package sim

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/benchci/benchci/internal/didyoumean"
)

// Profile sets the constants of the simulated engine. One engine step costs
//
//	StepBase + DecodePerSeq*decoding + PrefillPerToken*prefilled_tokens
//
// plus AttendNsPerPair for each (token, cached token) pair the step's
// attention reads (0 in the built-in constant profiles), so a lone request
// sees TTFT = StepBase + PrefillPerToken*prompt_tokens (and its prompt's
// pairs) and
// ITL = StepBase + DecodePerSeq, while a full batch amortizes StepBase over
// MaxNumSeqs sequences: throughput rises with load, then flattens once the
// batch is full and requests queue, and TTFT climbs. That is the knee a sweep
// is meant to find.
type Profile struct {
	Name string `json:"name"`
	// Model is the served model name (/v1/models).
	Model string `json:"model"`
	// MaxNumSeqs caps running sequences (vLLM --max-num-seqs).
	MaxNumSeqs int `json:"max_num_seqs"`
	// MaxBatchedTokens caps tokens per step, prefill chunks included
	// (vLLM --max-num-batched-tokens with chunked prefill).
	MaxBatchedTokens int           `json:"max_batched_tokens"`
	StepBase         time.Duration `json:"step_base"`
	DecodePerSeq     time.Duration `json:"decode_per_seq"`
	PrefillPerToken  time.Duration `json:"prefill_per_token"`
	// TokensPerStep is how many tokens one decode step emits per sequence;
	// above 1 it models speculative decoding, where a chunk carries several tokens.
	TokensPerStep int `json:"tokens_per_step"`
	// ChatTemplateTokens is what the chat template adds per message, so the
	// server's prompt_tokens exceed the words the client sent, as on real servers.
	ChatTemplateTokens int `json:"chat_template_tokens"`
	MaxModelLen        int `json:"max_model_len"`
	// PrefixCaching skips the prefill of the leading blocks of a prompt
	// whose KV is still cached, and shares those blocks (vLLM's automatic
	// prefix caching, on by default in V1).
	PrefixCaching bool `json:"prefix_caching"`
	// Source says where the constants come from.
	Source string `json:"source"`

	// Spec, when set, prices steps from model and GPU cards (see Spec)
	// instead of the three constants above, which then only describe it.
	Spec *Spec `json:"spec,omitempty"`
	// KVBlocks is the KV cache's size in blocks of BlockSize tokens; 0 is
	// unlimited (the constant profiles). A step that needs a block when
	// none is free preempts the newest sequence.
	KVBlocks  int `json:"kv_blocks,omitempty"`
	BlockSize int `json:"block_size,omitempty"`
	// MaxPrefillChunk caps the prompt tokens one sequence prefills in a
	// step, below the step's MaxBatchedTokens (vLLM's
	// --long-prefill-token-threshold; Ollama's batch size, which it
	// applies to each sequence, so that prompts sent together prefill
	// together); 0 is no cap of its own.
	MaxPrefillChunk int `json:"max_prefill_chunk,omitempty"`
	// NoChunkedPrefill prefills a prompt in one step or not at all.
	NoChunkedPrefill bool `json:"no_chunked_prefill,omitempty"`
	// AttendNsPerPair prices a constant profile's attention: nanoseconds
	// for each pair of a token the step computes and a cached token it
	// attends to. It is what makes a long prompt's prefill cost more per
	// token than a short one's on a small model, where attention is not
	// negligible beside the weights (profiles from cards price it from the
	// model instead).
	AttendNsPerPair float64 `json:"attend_ns_per_pair,omitempty"`
	// UnifiedKV makes every token of a step attend to every cached token,
	// its sequence's or not, as llama.cpp's single KV cache does (masked:
	// the work is done and thrown away): there, concurrent requests slow
	// each other's prefills by their contexts. Off, a token attends to
	// its own sequence's context (paged attention, as vLLM). The cache
	// also keeps a finished request's context in its slot until another
	// request takes the slot, so after a burst the slots it filled stay
	// in every step's attention (see takeSlot).
	UnifiedKV bool `json:"unified_kv,omitempty"`
	// RequestOverhead delays each request's arrival at the scheduler: the
	// engine's HTTP, chat template and tokenizer (see Efficiency), on
	// average; each request's delay is spread about it (requestDelay).
	RequestOverhead time.Duration `json:"request_overhead,omitempty"`
	// Speculative, when set (WithSpeculative), prices decode steps as a
	// draft and a verification and draws the tokens each emits.
	Speculative *Speculative `json:"speculative,omitempty"`
	// Disagg, when set (WithDisaggregation), serves prefill and decode on
	// separate pools of instances.
	Disagg *Disaggregation `json:"disaggregated,omitempty"`
}

// stepCost returns the function that prices a step.
func (p Profile) stepCost() func(batch) time.Duration {
	if p.Spec != nil {
		r := newRoofline(p.Spec.withDefaults())
		if p.Speculative != nil {
			return p.Speculative.cost(r)
		}
		return r.step
	}
	return func(b batch) time.Duration {
		c := p.StepBase + time.Duration(b.decodes)*p.DecodePerSeq + time.Duration(b.prefill)*p.PrefillPerToken
		if p.AttendNsPerPair > 0 {
			pairs := b.decodeCtx + b.prefillAttn
			if p.UnifiedKV {
				pairs = int64(b.decodes+b.prefill) * b.kvInUse
			}
			// Saturated: a hostile file's price times a huge cache
			// would wrap a step's duration negative.
			c += time.Duration(min(float64(pairs)*p.AttendNsPerPair, maxAttendNs))
		}
		return c
	}
}

// maxAttendNs caps a step's attention at a day: past it a step is
// already absurd, and a time.Duration would wrap.
const maxAttendNs = float64(24 * time.Hour)

// IdleTTFT is the TTFT of a lone request with the given prompt length,
// including the template tokens the server adds for chat requests.
func (p Profile) IdleTTFT(promptTokens int) time.Duration {
	pairs := float64(promptTokens) * float64(promptTokens+1) / 2
	if p.UnifiedKV {
		pairs = float64(promptTokens) * float64(promptTokens) // the whole cache, masked
	}
	return p.RequestOverhead + p.StepBase + time.Duration(promptTokens)*p.PrefillPerToken + time.Duration(pairs*p.AttendNsPerPair)
}

// IdleITL is the gap between chunks of a lone request.
func (p Profile) IdleITL() time.Duration { return p.StepBase + p.DecodePerSeq }

// MinChatPromptTokens is the fewest prompt tokens a chat request can have
// here: one message of one word in the chat template, with the assistant
// header (see promptTokens).
func (p Profile) MinChatPromptTokens() int { return p.ChatTemplateTokens + 1 + 3 }

// KVTokens is the KV cache's capacity in tokens; 0 is unlimited.
func (p Profile) KVTokens() int { return p.KVBlocks * p.BlockSize }

// blockSize is the tokens per KV block: the profile's, else vLLM's default.
func (p Profile) blockSize() int {
	if p.BlockSize > 0 {
		return p.BlockSize
	}
	return BlockTokens
}

var profiles = []Profile{
	{
		Name: "llama3-8b-h100", Model: "meta-llama/Meta-Llama-3-8B-Instruct",
		MaxNumSeqs: 256, MaxBatchedTokens: 8192,
		StepBase: 6 * time.Millisecond, DecodePerSeq: 60 * time.Microsecond, PrefillPerToken: 45 * time.Microsecond,
		TokensPerStep: 1, ChatTemplateTokens: 5, MaxModelLen: 8192, PrefixCaching: true,
		Source: "order of magnitude from public vLLM serving benchmarks of Llama-3-8B BF16 on one H100: " +
			"~7 ms ITL alone, ~20 ms at a full batch of 256, ~20k prefill tokens/s; not a calibration",
	},
	{
		Name: "llama3-70b-h100x4", Model: "meta-llama/Meta-Llama-3-70B-Instruct",
		MaxNumSeqs: 256, MaxBatchedTokens: 8192,
		StepBase: 18 * time.Millisecond, DecodePerSeq: 150 * time.Microsecond, PrefillPerToken: 110 * time.Microsecond,
		TokensPerStep: 1, ChatTemplateTokens: 5, MaxModelLen: 8192, PrefixCaching: true,
		Source: "order of magnitude from public vLLM benchmarks of Llama-3-70B BF16 with tensor parallel 4 on H100: " +
			"~20 ms ITL alone, ~55 ms at a full batch, ~9k prefill tokens/s; not a calibration",
	},
	{
		Name: "llama3-8b-h100-spec", Model: "meta-llama/Meta-Llama-3-8B-Instruct",
		MaxNumSeqs: 256, MaxBatchedTokens: 8192,
		StepBase: 8 * time.Millisecond, DecodePerSeq: 90 * time.Microsecond, PrefillPerToken: 45 * time.Microsecond,
		TokensPerStep: 3, ChatTemplateTokens: 5, MaxModelLen: 8192, PrefixCaching: true,
		Source: "llama3-8b-h100 with speculative decoding accepting ~3 tokens per step: chunks carry several tokens",
	},
	{
		Name: "tiny", Model: "benchci/tiny",
		MaxNumSeqs: 4, MaxBatchedTokens: 2048,
		StepBase: 2 * time.Millisecond, DecodePerSeq: 500 * time.Microsecond, PrefillPerToken: 10 * time.Microsecond,
		TokensPerStep: 1, ChatTemplateTokens: 5, MaxModelLen: 4096,
		Source: "made up for tests: saturates at a few requests in flight so a short sweep shows the knee",
	},
}

// Lookup returns the named profile.
func Lookup(name string) (Profile, bool) {
	i := slices.IndexFunc(profiles, func(p Profile) bool { return p.Name == name })
	if i < 0 {
		return Profile{}, false
	}
	return profiles[i], true
}

// ProfileNames lists the known profiles.
func ProfileNames() []string {
	names := make([]string, len(profiles))
	for i, p := range profiles {
		names[i] = p.Name
	}
	return names
}

// Resolve returns the named profile: a constant profile's name, or a
// derived one's, model@gpu with optional suffixes -tpN, -fp8 (weights),
// -kvfp8 (KV cache) and an engine model (-trtllm), e.g.
// llama-3-70b@h100-sxm-tp4-fp8.
func Resolve(name string) (Profile, error) {
	if p, ok := Lookup(name); ok {
		return p, nil
	}
	s, err := ParseSpecName(name)
	if err != nil {
		return Profile{}, err
	}
	return Derive(s, Knobs{})
}

// ParseSpecName parses a derived profile's name (see Resolve).
func ParseSpecName(name string) (Spec, error) {
	model, rest, ok := strings.Cut(name, "@")
	if !ok {
		if hint := didyoumean.Hint(name, ProfileNames()); hint != "" {
			return Spec{}, fmt.Errorf("unknown simulator profile %q%s", name, hint)
		}
		return Spec{}, fmt.Errorf("unknown simulator profile %q (known: %s; or model@gpu from the cards: models %s; GPUs %s)",
			name, strings.Join(ProfileNames(), ", "), strings.Join(ModelNames(), ", "), strings.Join(GPUNames(), ", "))
	}
	var s Spec
	if s.Model, ok = LookupModel(model); !ok {
		return Spec{}, fmt.Errorf("profile %q: unknown model card %q%s (known: %s)", name, model, didyoumean.Hint(model, ModelNames()), strings.Join(ModelNames(), ", "))
	}
	// GPU names hold dashes; the longest card name that prefixes the rest wins.
	for _, g := range gpuCards {
		if (rest == g.Name || strings.HasPrefix(rest, g.Name+"-")) && len(g.Name) > len(s.GPU.Name) {
			s.GPU = g
		}
	}
	if s.GPU.Name == "" {
		return Spec{}, fmt.Errorf("profile %q: unknown GPU card in %q (known: %s)", name, rest, strings.Join(GPUNames(), ", "))
	}
	for _, suf := range strings.Split(strings.TrimPrefix(rest, s.GPU.Name), "-")[1:] {
		switch {
		case strings.HasPrefix(suf, "tp"):
			tp, err := strconv.Atoi(suf[2:])
			if err != nil || tp < 1 {
				return Spec{}, fmt.Errorf("profile %q: %q is not a tensor-parallel degree (tp2, tp4, ...)", name, suf)
			}
			s.TP = tp
		case strings.HasPrefix(suf, "kv"):
			s.KVCache = suf[2:]
		case slices.Contains(EngineNames(), suf):
			s.Engine = suf
		default:
			s.Weights = suf
		}
	}
	return s, nil
}

// requestDelay is one request's way through the request path, given u
// drawn uniformly from [0, 1): RequestOverhead spread evenly over half to
// one and a half of it. A real request path (HTTP, the tokenizer, a queue
// between them) takes longer for one request than another, and that
// spread is what keeps a closed loop's clients from locking into a phase:
// with one fixed delay, clients that finished in one step came back in
// one step and queued behind each other's prefills, every time.
func (p Profile) requestDelay(u float64) time.Duration {
	return time.Duration(float64(p.RequestOverhead) * (0.5 + u))
}
