package metric

// Token histogram names: counts of tokens per measured answer, recorded
// beside the latency histograms (which bear their metrics' names). The
// recorder writes them, the results format verifies them, and a shard
// merge summarizes them again.
const (
	PromptTokensHistogram = "prompt_tokens"
	OutputTokensHistogram = "output_tokens"
	// PromptTokensAskedHistogram holds the prompt lengths the requests
	// asked for, beside the server's counts of what it was sent
	// (PromptTokensHistogram): the two differ where a chat template
	// outgrows the prompts asked for.
	PromptTokensAskedHistogram = "prompt_tokens_asked"
)
