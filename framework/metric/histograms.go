package metric

// Token histogram names: counts of tokens per measured answer, recorded
// beside the latency histograms (which bear their metrics' names). The
// recorder writes them, the results format verifies them, and a shard
// merge summarizes them again.
const (
	PromptTokensHistogram = "prompt_tokens"
	OutputTokensHistogram = "output_tokens"
)
