// Package suite is the typed benchmark suite: its plain types, defaults,
// decoding from evaluated JSON and validation, reporting every problem at
// once. It imports nothing of benchci's but the metric catalogue: the
// Jsonnet evaluation and source positions live in package suitefile, and
// the names a running binary provides (simulator profiles, tokenizers) are
// checked only when given (see Known), so a suite recorded in an old results
// file still decodes after a profile is renamed.
package suite

import "github.com/benchci/benchci/framework/metric"

// SweepKind names a sweep's plan.
type SweepKind string

// Sweep kinds.
const (
	SweepRate        SweepKind = "rate"
	SweepConcurrency SweepKind = "concurrency"
	SweepCapacity    SweepKind = "capacity"
	SweepAuto        SweepKind = "auto"
	// SweepThroughput sends Requests all at once (vLLM's --request-rate
	// inf, the offline throughput test), at most MaxConcurrency in flight,
	// and measures until the last one ends.
	SweepThroughput SweepKind = "throughput"
)

// ArrivalKind names an arrival process.
type ArrivalKind string

// Arrival processes.
const (
	ArrivalPoisson  ArrivalKind = "poisson"
	ArrivalConstant ArrivalKind = "constant"
	ArrivalGamma    ArrivalKind = "gamma"
	ArrivalBursts   ArrivalKind = "bursts"
	ArrivalTrace    ArrivalKind = "trace"
)

// DistKind names a length distribution.
type DistKind string

// Length distributions.
const (
	DistFixed     DistKind = "fixed"
	DistUniform   DistKind = "uniform"
	DistNormal    DistKind = "normal"
	DistLognormal DistKind = "lognormal"
	DistEmpirical DistKind = "empirical"
	DistFile      DistKind = "file"
)

// PromptKind names a prompt source.
type PromptKind string

// Prompt sources.
const (
	PromptSynthetic    PromptKind = "synthetic"
	PromptSharedPrefix PromptKind = "shared_prefix"
	PromptMultiTurn    PromptKind = "multi_turn"
	PromptShareGPT     PromptKind = "sharegpt"
	PromptJSONL        PromptKind = "jsonl"
)

// Dataset reports whether prompts come from a dataset file.
func (k PromptKind) Dataset() bool { return k == PromptShareGPT || k == PromptJSONL }

// Synthetic reports whether prompts are made to a length, so calibration
// against the server's tokenizer applies.
func (k PromptKind) Synthetic() bool { return k == PromptSynthetic || k == PromptSharedPrefix }

// TargetKind names where requests go.
type TargetKind string

// The target kinds.
const (
	TargetSim    TargetKind = "sim"
	TargetURL    TargetKind = "url"
	TargetLaunch TargetKind = "launch"
)

// API names the OpenAI-compatible API requests are sent to.
type API string

// The APIs.
const (
	APIChat        API = "chat"
	APICompletions API = "completions"
	// APIEmbeddings is not streamed: its answers are vectors, not tokens.
	APIEmbeddings API = "embeddings"
)

// Suite is one evaluated, decoded and defaulted benchmark suite.
type Suite struct {
	// Name identifies the suite; results go to results/<name>.json.
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Target      Target `json:"target"`
	// API is "chat" (/v1/chat/completions), "completions" (/v1/completions)
	// or "embeddings" (/v1/embeddings, not streamed).
	API      API      `json:"api"`
	Request  Request  `json:"request"`
	Workload Workload `json:"workload"`
	Sweep    Sweep    `json:"sweep"`
	SLOs     []SLO    `json:"slos,omitempty"`
	// Goodput sets per-request SLOs (ttft, tpot, e2e as durations): a
	// request is good when it succeeded and met every one (DistServe), and
	// goodput is good requests per second.
	Goodput map[string]Duration `json:"goodput,omitempty"`
	// Telemetry are hardware exporters scraped through every point (for
	// example NVIDIA's DCGM exporter): GPU utilization, memory and power
	// land in each point, and measured power prices the cost's energy.
	Telemetry []Telemetry `json:"telemetry,omitempty"`
	// Tolerance maps a metric key ("default", "ttft.p99", "output_throughput")
	// to a band such as "10%", "20ms" or "10%|20ms".
	Tolerance map[string]string `json:"tolerance,omitempty"`
	Cost      *Cost             `json:"cost,omitempty"`
	// Trials repeats each sweep point so that comparisons can test significance.
	Trials int `json:"trials"`
	// Sanity is the gate every run passes, SLOs or not: a point where no
	// request completed, or where more than MaxErrorRate failed, fails the
	// run. Off turns it off (a suite that tests failures on purpose).
	Sanity *Sanity `json:"sanity,omitempty"`
	// Variants are configurations run on this suite's workload, sweep and
	// SLOs, each with its own target (engine, quantization, flags,
	// hardware): a suite with variants answers "which one", per variant
	// and across them. See Expand.
	Variants map[string]Variant `json:"variants,omitempty"`
	// Order is how variants share the machine: "sequential" (each runs its
	// whole sweep in turn; the default) or "interleaved" (point by point,
	// round robin, so slow drift of shared hardware falls on all alike).
	Order string `json:"order,omitempty"`
	// Variant names the variant an expanded suite is (see Expand): it is
	// written into a variant's recorded definition, not into suite files.
	Variant string `json:"variant,omitempty"`
	// Tokenizer counts tokens when the server reports no usage: "words"
	// (default) or a tiktoken encoding such as "cl100k_base". It also sizes
	// synthetic prompts when the server cannot be calibrated.
	Tokenizer string `json:"tokenizer,omitempty"`
}

// Variant is one configuration of a suite with variants. Everything it
// leaves out is the suite's; it cannot change the workload, so every
// variant is sent the same requests.
type Variant struct {
	// Target replaces the suite's target.
	Target *Target `json:"target,omitempty"`
	// Request changes what is asked beyond the workload: the model name
	// (engines name one model differently) and extra body fields.
	Request *VariantRequest `json:"request,omitempty"`
	// Cost replaces the suite's cost inputs (other hardware).
	Cost *Cost `json:"cost,omitempty"`
	// Sim overrides the simulator profile's constants (simulated targets).
	Sim *SimOverrides `json:"sim,omitempty"`
}

// VariantRequest is what a variant changes in its requests.
type VariantRequest struct {
	Model string         `json:"model,omitempty"`
	Extra map[string]any `json:"extra,omitempty"`
}

// Variant orders.
const (
	OrderSequential  = "sequential"
	OrderInterleaved = "interleaved"
)

// Target says where requests go.
type Target struct {
	// Kind is "sim" (the embedded simulator), "url" (a running server) or
	// "launch" (a server benchci starts, waits for, and always stops).
	Kind TargetKind `json:"kind"`
	// Launch describes the server to start (Kind "launch"); URL is where
	// it will listen.
	Launch *Launch `json:"launch,omitempty"`
	// Profile names the simulator profile (Kind "sim"): a constant one
	// (llama3-8b-h100), one derived from cards (llama-3-70b@h100-sxm-tp4),
	// or a profile file that benchci sim fit wrote, file:PATH (relative
	// to the suite's directory).
	Profile string `json:"profile,omitempty"`
	// Spec derives the simulator from model and GPU cards, built-in or
	// written out, and engine knobs (Kind "sim", instead of Profile).
	Spec *SimSpec `json:"spec,omitempty"`
	// URL is the server's base URL, e.g. http://127.0.0.1:8000 (Kind "url").
	URL string `json:"url,omitempty"`
	// Model is sent as the request's "model"; empty asks the server's /v1/models.
	Model string `json:"model,omitempty"`
	// APIKeyEnv names the environment variable holding a bearer token.
	APIKeyEnv string `json:"api_key_env,omitempty"`
	// Sim overrides the simulator profile's constants (Kind "sim"), to model
	// a configuration change such as a smaller --max-num-seqs.
	Sim *SimOverrides `json:"sim,omitempty"`
	// Faults make the simulator misbehave (Kind "sim"), to test error
	// handling and error-rate SLOs.
	Faults *SimFaults `json:"faults,omitempty"`
	// Proxy puts benchci's fault proxy in front of a real server (Kind
	// "url" or "launch"): requests go through it.
	Proxy *ProxyFaults `json:"proxy,omitempty"`
}

// ProxyFaults configure the fault proxy (see package faultproxy): rates
// are per completion and add up to at most 1.
type ProxyFaults struct {
	Latency       Duration `json:"latency,omitempty"`
	Rate429       float64  `json:"rate_429,omitempty"`
	Rate503       float64  `json:"rate_503,omitempty"`
	RetryAfter    Duration `json:"retry_after,omitempty"`
	ResetRate     float64  `json:"reset_rate,omitempty"`
	StallRate     float64  `json:"stall_rate,omitempty"`
	Stall         Duration `json:"stall,omitempty"`
	SlowFirstByte Duration `json:"slow_first_byte,omitempty"`
	Seed          int64    `json:"seed,omitempty"`
}

// SimFaults are per-request probabilities of simulated failures.
type SimFaults struct {
	ErrorRate      float64  `json:"error_rate,omitempty"`
	ResetRate      float64  `json:"reset_rate,omitempty"`
	StallRate      float64  `json:"stall_rate,omitempty"`
	Stall          Duration `json:"stall,omitempty"`
	SlowFirstByte  Duration `json:"slow_first_byte,omitempty"`
	MalformedRate  float64  `json:"malformed_rate,omitempty"`
	WrongUsageRate float64  `json:"wrong_usage_rate,omitempty"`
	// WrongStructuredRate spoils that share of structured answers (see
	// workload.structured), drawn apart from the other faults.
	WrongStructuredRate float64 `json:"wrong_structured_rate,omitempty"`
}

// Launch is a server process benchci starts for a run.
type Launch struct {
	// Command is the argv, e.g. ["vllm", "serve", "meta-llama/...", "--port", "8000"].
	Command []string `json:"command"`
	// Env adds environment variables; Dir is the working directory,
	// relative to the suite (default: the suite's directory).
	Env map[string]string `json:"env,omitempty"`
	Dir string            `json:"dir,omitempty"`
	// Health is the readiness probe: a path answering 2xx (default
	// /v1/models, which also proves the model is loaded).
	Health string `json:"health,omitempty"`
	// StartTimeout bounds the wait for readiness (default 10m: large models
	// load slowly); StopGrace is how long SIGTERM has before SIGKILL.
	StartTimeout Duration `json:"start_timeout"`
	StopGrace    Duration `json:"stop_grace"`
	// WarmupRequests are sent once the server is ready, before any point,
	// and not measured: the first requests after a start are outliers.
	WarmupRequests int `json:"warmup_requests,omitempty"`
	// Per is "suite" (one server for the whole run, default) or "point" (a
	// fresh server for every point).
	Per string `json:"per,omitempty"`
}

// SimSpec derives a simulator profile from cards (see package sim's Spec).
type SimSpec struct {
	// Model and GPU are a built-in card's name or a card written out
	// (sim.ModelCard and sim.GPUCard fields).
	Model any `json:"model"`
	GPU   any `json:"gpu"`
	TP    int `json:"tp,omitempty"`
	// Weights and KVCache are bf16 (default) or fp8.
	Weights              string  `json:"weights,omitempty"`
	KVCache              string  `json:"kv_cache,omitempty"`
	GPUMemoryUtilization float64 `json:"gpu_memory_utilization,omitempty"`
	BlockSize            int     `json:"block_size,omitempty"`
	MaxModelLen          int     `json:"max_model_len,omitempty"`
	// ChunkedPrefill defaults to the engine's: on for vllm and sglang,
	// off for trtllm (its chunked context is off unless asked for).
	ChunkedPrefill *bool `json:"chunked_prefill,omitempty"`
	// Engine names the engine model whose overheads, kernel shares and
	// scheduling defaults apply ("vllm", the default, "sglang" or "trtllm").
	Engine string `json:"engine,omitempty"`
	// Efficiency overrides the engine's achieved shares of the card's
	// peaks; zero keeps the engine's and the card's.
	MemoryEfficiency  float64  `json:"memory_efficiency,omitempty"`
	ComputeEfficiency float64  `json:"compute_efficiency,omitempty"`
	StepOverhead      Duration `json:"step_overhead,omitempty"`
	// Fitted names a profile file that benchci sim fit wrote from a
	// profile derived from cards (relative to the suite's directory): its
	// fitted efficiencies and overheads are the spec's, unless the spec
	// sets them, so a what-if on other cards starts from a measured engine.
	Fitted string `json:"fitted,omitempty"`
	// Speculative turns speculative decoding on (see package sim's
	// Speculative); Disaggregated splits prefill and decode into pools.
	Speculative   *SimSpeculative `json:"speculative,omitempty"`
	Disaggregated *SimDisagg      `json:"disaggregated,omitempty"`
}

// SimSpeculative is speculative decoding: method 'draft' with a draft
// model (a built-in card's name or a card), or 'eagle' heads; k draft
// tokens per step, each accepted with probability acceptance.
type SimSpeculative struct {
	Method        string   `json:"method"`
	DraftModel    any      `json:"draft_model,omitempty"`
	DraftTP       int      `json:"draft_tp,omitempty"`
	DraftVocab    int      `json:"draft_vocab,omitempty"`
	K             int      `json:"k"`
	Acceptance    float64  `json:"acceptance"`
	DraftOverhead Duration `json:"draft_overhead,omitempty"`
	Seed          uint64   `json:"seed,omitempty"`
}

// SimDisagg is prefill/decode disaggregation: each pool's GPU card
// (default the spec's), TP (default the spec's) and instances (default
// 1), and the KV cache's link from prefill to decode.
type SimDisagg struct {
	Prefill     SimPool  `json:"prefill"`
	Decode      SimPool  `json:"decode"`
	LinkGBs     float64  `json:"link_gbs"`
	LinkLatency Duration `json:"link_latency,omitempty"`
}

// SimPool is one side of a disaggregated simulator.
type SimPool struct {
	GPU       any `json:"gpu,omitempty"`
	TP        int `json:"tp,omitempty"`
	Instances int `json:"instances,omitempty"`
}

// ProfileFilePrefix marks a sim target's profile that names a file.
const ProfileFilePrefix = "file:"

// SimOverrides replace simulator profile constants; zero keeps the profile's.
type SimOverrides struct {
	MaxNumSeqs       int      `json:"max_num_seqs,omitempty"`
	MaxBatchedTokens int      `json:"max_batched_tokens,omitempty"`
	StepBase         Duration `json:"step_base,omitempty"`
	DecodePerSeq     Duration `json:"decode_per_seq,omitempty"`
	PrefillPerToken  Duration `json:"prefill_per_token,omitempty"`
	TokensPerStep    int      `json:"tokens_per_step,omitempty"`
}

// Request holds per-request settings.
type Request struct {
	// Timeout bounds one request from send to the end of its stream.
	Timeout Duration `json:"timeout"`
	// Timeouts bound its parts: the dial, the wait for the first token,
	// and the longest gap between chunks after it.
	Timeouts *Timeouts `json:"timeouts,omitempty"`
	// IgnoreEOS asks the server to generate exactly max_tokens (vLLM, SGLang).
	IgnoreEOS bool `json:"ignore_eos"`
	// Extra is merged into every request body (temperature, top_p, ...).
	Extra map[string]any `json:"extra,omitempty"`
	// Retry, when set, retries failed requests as a client would: the
	// user-perceived latencies then run from the first attempt's send.
	Retry *Retry `json:"retry,omitempty"`
}

// Timeouts bound the parts of a request; zero leaves a part bounded only
// by the total timeout (the dial: 30 s).
type Timeouts struct {
	Connect    Duration `json:"connect,omitempty"`
	FirstToken Duration `json:"first_token,omitempty"`
	Idle       Duration `json:"idle,omitempty"`
}

// Retry is a client's retry policy.
type Retry struct {
	// On lists what is retried: "429", "5xx" (or one status such as
	// "503"), "timeout", "connect", "stream_cut".
	On []string `json:"on"`
	// MaxAttempts counts the first attempt too (default 3).
	MaxAttempts int `json:"max_attempts"`
	// Backoff spaces the attempts.
	Backoff Backoff `json:"backoff"`
	// RespectRetryAfter waits what a 429 or 503's Retry-After asks, when
	// longer than the backoff (default true).
	RespectRetryAfter *bool `json:"respect_retry_after,omitempty"`
	// Budget caps retries at this share of the requests sent so far
	// (Envoy's retry budget, gRPC's retry throttling); absent: no cap.
	// 0 is refused: it would allow no retry, which a suite says by
	// declaring none.
	Budget *float64 `json:"budget,omitempty"`
}

// Backoff is exponential: Initial, then x Multiplier each retry, at most
// Max, each wait drawn within ±Jitter (a fraction) of its value.
type Backoff struct {
	Initial    Duration `json:"initial"`
	Max        Duration `json:"max"`
	Multiplier float64  `json:"multiplier"`
	Jitter     float64  `json:"jitter"`
}

// RetryStatuses are the outcomes a retry policy may name besides a 5xx status.
var RetryOn = []string{"429", "5xx", "timeout", "connect", "stream_cut"}

// Cancel describes users who abandon a stream: Share of the requests
// close it once AfterTokens (drawn per request) output tokens came, or
// AfterMs milliseconds after the send; one of the two is given.
type Cancel struct {
	Share       float64 `json:"share"`
	AfterTokens Dist    `json:"after_tokens,omitzero"`
	AfterMs     Dist    `json:"after_ms,omitzero"`
}

// Workload describes the requests: their lengths, arrivals and prompts.
type Workload struct {
	InputTokens  Dist    `json:"input_tokens"`
	OutputTokens Dist    `json:"output_tokens"`
	Arrival      Arrival `json:"arrival"`
	Prompts      Prompts `json:"prompts"`
	// Cancel, when set, has a share of users abandon their stream part-way.
	Cancel *Cancel `json:"cancel,omitempty"`
	// Batch is the number of inputs per request (api: 'embeddings' only;
	// default 1).
	Batch *Dist `json:"batch,omitempty"`
	// Images, when set, adds images to every chat request's user message,
	// as data URLs (api: 'chat' only).
	Images *Images `json:"images,omitempty"`
	// Structured, when set, makes a share of the requests ask for a tool
	// call or a JSON answer matching a schema (api: 'chat' only); the
	// answers are checked against it.
	Structured *Structured `json:"structured,omitempty"`
	// Models, when set, sends each request to a model drawn by weight
	// (LoRA adapters on vLLM are model names); figures are kept per model
	// besides the point's, and SLOs may name one.
	Models []ModelShare `json:"models,omitempty"`
	// Seed fixes the request sequence so baseline and candidate send the same requests.
	Seed int64 `json:"seed"`
}

// Telemetry is one exporter to scrape.
type Telemetry struct {
	// Name prefixes its figures in results ("dcgm.power_mean_w").
	Name string `json:"name"`
	// URL is the metrics' full address, e.g. http://gpu-node:9400/metrics.
	URL string `json:"url"`
	// Interval between scrapes (default 1s).
	Interval Duration `json:"interval,omitempty"`
	// Gauges are further metrics to keep, as NAME_mean and NAME_peak.
	Gauges []string `json:"gauges,omitempty"`
}

// Images describes the images of multimodal chat requests.
type Images struct {
	// Count is images per request (a distribution; default fixed 1).
	Count *Dist `json:"count,omitempty"`
	// Sizes are the resolutions drawn from, with weights (default equal).
	Sizes []ImageSize `json:"sizes,omitempty"`
	// Format is "jpeg" (default) or "png" for synthesized images.
	Format string `json:"format,omitempty"`
	// Dir, instead of synthesizing, draws images from the PNG and JPEG
	// files of a directory (relative to the suite).
	Dir string `json:"dir,omitempty"`
	// Turns says which turns of a multi-turn session add images: "first"
	// (default: a document or photo asked about over several turns) or
	// "every" (an agent sending a new screenshot a turn). Later turns
	// resend the earlier turns' images in their history either way.
	Turns string `json:"turns,omitempty"`
}

// Which turns of a session add images (Images.Turns).
const (
	ImagesFirstTurn = "first"
	ImagesEveryTurn = "every"
)

// Structured describes structured requests.
type Structured struct {
	// Kind is "tool_call" (tools and a forced tool_choice) or
	// "json_schema" (response_format).
	Kind string `json:"kind"`
	// Name is the function's (or the response format's) name.
	Name string `json:"name"`
	// Schema is the JSON Schema of the arguments or the answer.
	Schema any `json:"schema"`
	// Share is the fraction of requests that carry it (default 1).
	Share float64 `json:"share,omitempty"`
}

// ImageSize is one resolution of synthesized images.
type ImageSize struct {
	Width  int     `json:"width"`
	Height int     `json:"height"`
	Weight float64 `json:"weight,omitempty"`
}

// ModelShare is one model of a mix and its share of the requests.
type ModelShare struct {
	Name   string  `json:"name"`
	Weight float64 `json:"weight"`
}

// Dist is a distribution of token counts. Which fields apply depends on Kind.
type Dist struct {
	// Kind is fixed, uniform, normal, lognormal, empirical or file.
	Kind   DistKind `json:"kind"`
	Value  float64  `json:"value,omitempty"`  // fixed
	Mean   float64  `json:"mean,omitempty"`   // normal
	Stddev float64  `json:"stddev,omitempty"` // normal
	Median float64  `json:"median,omitempty"` // lognormal
	Sigma  float64  `json:"sigma,omitempty"`  // lognormal
	// Min and Max clip samples (uniform: the range itself).
	Min float64 `json:"min,omitempty"`
	Max float64 `json:"max,omitempty"`
	// Values and Weights give an empirical distribution (a histogram when
	// weighted).
	Values  []float64 `json:"values,omitempty"`
	Weights []float64 `json:"weights,omitempty"`
	// Path and Field draw from recorded lengths: the numeric Field of every
	// line of a JSONL file (kind "file"), relative to the suite.
	Path  string `json:"path,omitempty"`
	Field string `json:"field,omitempty"`
}

// Arrival is the process that spaces open-loop requests. The sweep's rate
// is the process's mean rate (for bursts: the rate between spikes).
type Arrival struct {
	// Kind is poisson, constant, gamma, bursts or trace.
	Kind ArrivalKind `json:"kind"`
	// Burstiness is the gamma process's shape, as vLLM's --burstiness:
	// 1 is Poisson, below 1 burstier, above 1 more regular.
	Burstiness float64 `json:"burstiness,omitempty"`
	// Factor, On and Period shape bursts: Poisson arrivals whose rate is
	// multiplied by Factor during the last On of every Period.
	Factor float64  `json:"factor,omitempty"`
	On     Duration `json:"on,omitempty"`
	Period Duration `json:"period,omitempty"`
	// Path is a JSONL trace (one {"timestamp": s, "input_tokens": n,
	// "output_tokens": m} per line, in time order), relative to the suite
	// file. Its arrivals are rescaled to each point's rate; its lengths
	// replace the length distributions. See workload.ParseTrace for the
	// formats and the bounds (a week's span, 2,000,000 requests).
	Path string `json:"path,omitempty"`
	// BlockTokens is the size of the prompt blocks a trace's hash_ids
	// name (0: Mooncake's 512).
	BlockTokens int `json:"block_tokens,omitempty"`
}

// DefaultBlockTokens is a trace block's size when the suite gives none:
// the Mooncake traces'.
const DefaultBlockTokens = 512

// Prompts says how prompt text is made.
type Prompts struct {
	// Kind is synthetic (random common words; input_tokens sets the length),
	// multi_turn (sessions of synthetic turns),
	// shared_prefix (one of Prefixes system prompts of PrefixTokens tokens,
	// then a synthetic user prompt), sharegpt (a ShareGPT JSON file: first
	// human turn as prompt, first reply's length as output) or jsonl
	// ({"prompt": ..., "system": ..., "output_tokens": n} per line).
	Kind         PromptKind `json:"kind"`
	Prefixes     int        `json:"prefixes,omitempty"`
	PrefixTokens int        `json:"prefix_tokens,omitempty"`
	// Turns and ThinkTime shape multi_turn sessions: each arrival starts a
	// chat of Turns requests, each sent ThinkTime after the previous reply
	// and carrying the whole history (input_tokens and output_tokens size
	// every turn's new message and reply).
	Turns     int      `json:"turns,omitempty"`
	ThinkTime Duration `json:"think_time,omitempty"`
	// Path is the dataset file, relative to the suite.
	Path string `json:"path,omitempty"`
	// Calibrate measures, before the run, how many tokens the target counts
	// for a prompt of known words (its tokenizer and chat template), so
	// synthetic prompts hit input_tokens on that server. Default true.
	Calibrate bool `json:"calibrate,omitempty"`
	// Salt changes the prompts' text, never their lengths: "" sends the
	// same text in every run (the seed alone decides it); "run" draws a
	// fresh salt for each run, so a long-running server's prefix cache
	// cannot serve one run from the prompts of the last; any other value
	// is a fixed salt (the results record the one used, so a run can be
	// repeated). Synthetic prompts only: a dataset's text is its own.
	Salt string `json:"salt,omitempty"`
}

// SaltPerRun is the Prompts.Salt that draws a fresh salt for each run.
const SaltPerRun = "run"

// MaxSaltLen bounds a fixed prompt salt.
const MaxSaltLen = 128

// Sweep is the list of load points to run, in order.
type Sweep struct {
	// Kind is "rate" (open loop, requests/s), "concurrency" (closed loop),
	// "capacity" (a search for the highest rate meeting every SLO),
	// "auto" (GuideLLM-style: measure the synchronous and the maximum
	// throughput, then Points rates evenly between them) or "throughput"
	// (Requests sent at once).
	Kind  SweepKind `json:"kind"`
	Rates []float64 `json:"rates,omitempty"`
	// Min, Max and Precision bound a capacity search: it bisects the rate
	// (geometrically) until the passing and failing rates are within
	// Precision (relative) of each other.
	Min       float64 `json:"min,omitempty"`
	Max       float64 `json:"max,omitempty"`
	Precision float64 `json:"precision,omitempty"`
	// Points is the number of rates an auto sweep spreads (default 8);
	// its throughput probe runs at MaxConcurrency (default 256) in flight.
	Points        int   `json:"points,omitempty"`
	Concurrencies []int `json:"concurrencies,omitempty"`
	// Duration is the measured window of each point; Warmup runs before it.
	Duration Duration `json:"duration"`
	Warmup   Duration `json:"warmup"`
	// Requests, when set, ends a point after that many measured requests
	// (with Duration as well, whichever comes first).
	Requests int `json:"requests,omitempty"`
	// MaxConcurrency caps in-flight requests in open-loop runs (0: no cap).
	// Requests that wait for a slot still count their wait in the
	// schedule-based latencies.
	MaxConcurrency int `json:"max_concurrency,omitempty"`
	// Ramp, for rate sweeps, raises each point's rate from Ramp.From to
	// the point's rate over Ramp.Over from the point's start (vLLM's
	// --ramp-up-strategy, k6's ramping-arrival-rate).
	Ramp *Ramp `json:"ramp,omitempty"`
	// StopSaturated ends an open-loop point early, marked saturated, when
	// the server's queue grows without bound, instead of measuring and
	// draining it; nil is the default of the sweep's kind (see
	// StopsSaturated). A pointer, so that the default is not written into
	// the suite and its workload hash.
	StopSaturated *bool `json:"stop_saturated,omitempty"`
	// ResetPrefixCache empties the server's prefix cache before every
	// point (vLLM's POST /reset_prefix_cache, SGLang's /flush_cache), so
	// each point's hits are its own workload's, not the last point's.
	ResetPrefixCache bool `json:"reset_prefix_cache,omitempty"`
}

// StopsSaturated reports whether points stop early at saturation: as the
// suite says, else in capacity searches, whose probes above capacity are
// there to fail.
func (sw Sweep) StopsSaturated() bool {
	if sw.StopSaturated != nil {
		return *sw.StopSaturated
	}
	return sw.Kind == SweepCapacity
}

// RampKind names how a ramp rises.
type RampKind string

// Ramp kinds.
const (
	RampLinear      RampKind = "linear"
	RampExponential RampKind = "exponential"
)

// Ramp is a rise of the arrival rate at the start of a point.
type Ramp struct {
	Kind RampKind `json:"kind"`
	// From is the rate at the point's start, in requests/s (exponential
	// ramps need it above 0).
	From float64  `json:"from"`
	Over Duration `json:"over"`
}

// SLO is an assertion on a measured figure.
type SLO struct {
	// Metric is a latency (ttft, ttft_answer, tpot, itl, e2e, ttft_sched,
	// e2e_sched) or a rate (error_rate, request_throughput,
	// output_throughput, total_throughput).
	Metric string `json:"metric"`
	// Stat is p50, p90, p95, p99, p99.9, mean, max (latency metrics only).
	Stat string `json:"stat,omitempty"`
	// Op is one of < <= > >=.
	Op string `json:"op"`
	// Threshold is a duration ("500ms") for latencies, a number otherwise
	// (a fraction for error_rate, per second for throughputs).
	Threshold any `json:"threshold"`
	// AtRate / AtConcurrency restrict the SLO to one point; unset: every point.
	AtRate        float64 `json:"at_rate,omitempty"`
	AtConcurrency int     `json:"at_concurrency,omitempty"`
	// Model holds one model of workload.models to the SLO, on that model's
	// requests alone; unset: all requests.
	Model string `json:"model,omitempty"`
}

// Sanity bounds what a run may call a measurement.
type Sanity struct {
	// MaxErrorRate is the highest error rate a point may have (default 0.5).
	MaxErrorRate float64 `json:"max_error_rate,omitempty"`
	Off          bool    `json:"off,omitempty"`
}

// DefaultMaxErrorRate is the sanity gate's error-rate bound.
const DefaultMaxErrorRate = 0.5

// Cost holds the inputs to $ per million tokens.
type Cost struct {
	USDPerHour     float64 `json:"usd_per_hour"`
	GPUs           int     `json:"gpus"`
	Watts          float64 `json:"watts,omitempty"`
	USDPerKWh      float64 `json:"usd_per_kwh,omitempty"`
	OpsOverheadPct float64 `json:"ops_overhead_pct,omitempty"`
}

// DataFile is a field naming a data file, by its path in the suite.
type DataFile struct {
	Field string
	Path  *string
	// Dir marks a field naming a directory (of images).
	Dir bool
}

// DataFiles lists the fields that name data files, pointing into s so a
// loader can resolve them.
func (s *Suite) DataFiles() []DataFile {
	return []DataFile{
		{"workload.arrival.path", &s.Workload.Arrival.Path, false},
		{"workload.prompts.path", &s.Workload.Prompts.Path, false},
		{"workload.input_tokens.path", &s.Workload.InputTokens.Path, false},
		{"workload.output_tokens.path", &s.Workload.OutputTokens.Path, false},
		{"workload.images.dir", s.imagesDir(), true},
	}
}

// imagesDir points at workload.images.dir, or at a throwaway when the
// workload has no images.
func (s *Suite) imagesDir() *string {
	if s.Workload.Images == nil {
		return new(string)
	}
	return &s.Workload.Images.Dir
}

// Key is the figure the SLO asserts on.
func (s SLO) Key() metric.Key { return metric.K(s.Metric, s.Stat) }
