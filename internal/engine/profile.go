package engine

// Profile is what benchci knows of an engine's OpenAI-compatible API.
type Profile struct {
	Name string `json:"name"`
	// IgnoreEOS: the engine accepts ignore_eos/min_tokens, so outputs hold
	// their requested length. Where it does not, they are left out of the
	// body (some servers reject unknown fields) and lengths may vary.
	IgnoreEOS bool `json:"ignore_eos"`
	// ContinuousUsage: the engine can put usage on every chunk
	// (stream_options.continuous_usage_stats), which gives exact tokens per
	// chunk.
	ContinuousUsage bool `json:"continuous_usage"`
	// UntextedTokens: the engine generates tokens it never streams as
	// text (Ollama drops tokens that are not valid UTF-8 on their own), so
	// its usage may far exceed the text's bytes and is bounded by the
	// stream's time instead (client.Options.UntextedTokens).
	UntextedTokens bool `json:"untexted_tokens,omitempty"`
	// Quirks are known deviations, for reports.
	Quirks []string `json:"quirks,omitempty"`
}

// Profiles of the engines benchci recognizes. Sources: each engine's
// OpenAI-compatible server documentation and code; the Ollama entry was
// checked against v0.6.5 in this repository's integration test.
var Profiles = map[string]Profile{
	"vllm": {Name: "vllm", IgnoreEOS: true, ContinuousUsage: true,
		Quirks: []string{"chat streams open with a role-only delta whose content is empty"}},
	"sglang": {Name: "sglang", IgnoreEOS: true},
	"tgi":    {Name: "tgi", Quirks: []string{"no ignore_eos: outputs may stop early"}},
	"llama.cpp": {Name: "llama.cpp", IgnoreEOS: true,
		Quirks: []string{
			"one slot per parallel request (--parallel) bounds concurrency",
			"closes the connection after each streamed response while announcing keep-alive: benchci stops pooling and each request dials",
			"usage and timings (the server's own prompt and generation times) come on the finish chunk; they are recorded as server_timings",
			"a model that chooses its end token first answers one empty chunk with finish_reason: recorded as an empty answer, not an error",
		}},
	"ollama": {Name: "ollama", UntextedTokens: true, Quirks: []string{
		"on completions streams, usage with zeros on every chunk and the real counts only in the final usage chunk (chat streams carry usage once)",
		"tokens that are not valid text (partial UTF-8) are dropped from the stream: text-counted output falls short of usage, which is bounded by the stream's time rather than its bytes",
		"prompts are truncated to the model's num_ctx (2048 by default) without an error",
		"no ignore_eos: outputs may stop at the model's end token",
		"tokens arrive in bursts: ITL is bimodal while TPOT averages out",
	}},
	"benchci-sim": {Name: "benchci-sim", IgnoreEOS: true, ContinuousUsage: true,
		Quirks: []string{"chat streams open with a role-only delta, as vLLM's"}},
}

// Lookup returns the profile of a detected engine; unknown engines get a
// profile that assumes the usual vLLM-style extensions.
func Lookup(name string) (Profile, bool) {
	p, ok := Profiles[name]
	if !ok {
		return Profile{Name: name, IgnoreEOS: true}, false
	}
	return p, true
}
