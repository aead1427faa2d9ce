package sim

import (
	"slices"
	"time"
)

// Profile sets the constants of the simulated engine. One engine step costs
//
//	StepBase + DecodePerSeq*decoding + PrefillPerToken*prefilled_tokens
//
// so a lone request sees TTFT = StepBase + PrefillPerToken*prompt_tokens and
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
	// PrefixCaching skips the prefill of a system prompt the engine has
	// seen before (vLLM's automatic prefix caching, on by default in V1).
	PrefixCaching bool `json:"prefix_caching"`
	// Source says where the constants come from.
	Source string `json:"source"`
}

// IdleTTFT is the TTFT of a lone request with the given prompt length,
// including the template tokens the server adds for chat requests.
func (p Profile) IdleTTFT(promptTokens int) time.Duration {
	return p.StepBase + time.Duration(promptTokens)*p.PrefillPerToken
}

// IdleITL is the gap between chunks of a lone request.
func (p Profile) IdleITL() time.Duration { return p.StepBase + p.DecodePerSeq }

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
