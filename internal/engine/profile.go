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
	// WaitingBlind says which waiting requests the engine's waiting gauge
	// (waiting_peak) does not count, where it is known to miss some: the
	// report prints it beside the figure, and the queue derived from the
	// client's requests in flight (see Held).
	WaitingBlind string `json:"waiting_blind,omitempty"`
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
		},
		// server.cpp: a task goes to queue_tasks_deferred (the gauge) only
		// when an HTTP thread has taken its request and no slot is free;
		// connections beyond the HTTP threads wait in the HTTP server's own
		// queue, seen by nothing (benchci issue 29: the gauge stayed at 0-1
		// with thousands of requests queued and a TTFT P50 of 32 s).
		WaitingBlind: "llamacpp:requests_deferred counts only requests an HTTP thread has taken while every slot was busy; requests waiting for an HTTP thread (--threads-http) are in no gauge"},
	"ollama": {Name: "ollama", UntextedTokens: true, Quirks: []string{
		"on completions streams, usage with zeros on every chunk and the real counts only in the final usage chunk (chat streams carry usage once)",
		"tokens that are not valid text (partial UTF-8) are dropped from the stream: text-counted output falls short of usage, which is bounded by the stream's time rather than its bytes",
		"prompts are truncated to the model's num_ctx (2048 by default) without an error",
		"no ignore_eos: outputs may stop at the model's end token",
		"tokens arrive in bursts: ITL is bimodal while TPOT averages out",
		"no Prometheus /metrics: its queue (requests beyond OLLAMA_NUM_PARALLEL) shows only in the client's TTFT",
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
