package suite

import (
	"fmt"
	"math"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/benchci/benchci/framework/metric"
	"github.com/benchci/benchci/internal/didyoumean"
	"github.com/benchci/benchci/internal/structured"
)

// Default returns a suite holding every default; decoding writes the user's
// fields over it, so an absent field keeps its default.
func Default() *Suite {
	return &Suite{
		API:     "chat",
		Request: Request{Timeout: Duration(5 * time.Minute), IgnoreEOS: true},
		Workload: Workload{
			Arrival: Arrival{Kind: "poisson"},
			Prompts: Prompts{Kind: "synthetic", Calibrate: true},
			Seed:    1,
		},
		Sweep: Sweep{
			Duration: Duration(30 * time.Second),
			Warmup:   Duration(5 * time.Second),
		},
		Trials: 1,
	}
}

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// Ops are the comparisons an SLO may make.
var Ops = []string{"<", "<=", ">", ">="}

// Known lists the names a running binary provides. A suite about to run is
// checked against them; a suite read back from a results file is not, so
// renaming a simulator profile cannot break every old baseline.
type Known struct {
	SimProfiles []string
	Tokenizers  []string
	// Sim, when set, builds a sim target's profile and says which field
	// ("profile", "spec.model", ...) is wrong when it cannot.
	Sim func(t *Target) (field string, err error)
}

// validate checks a decoded suite and derives sweep.kind when absent;
// known, when not nil, adds the checks of names against the registries.
func validate(s *Suite, known *Known) []*FieldError {
	var errs []*FieldError
	bad := func(path, format string, args ...any) {
		errs = append(errs, &FieldError{Path: path, Msg: fmt.Sprintf(format, args...)})
	}
	if s.Name == "" {
		bad("name", "required")
	} else if !nameRE.MatchString(s.Name) {
		bad("name", "%q: use letters, digits, '.', '_' and '-' (it names results/<name>.json)", s.Name)
	}

	if len(s.Variants) == 0 || s.Target.Kind != "" {
		errs = append(errs, validateTarget("target", &s.Target, known)...)
	}
	errs = append(errs, validateVariants(s, known)...)

	embeddings := s.API == APIEmbeddings
	if s.API != "chat" && s.API != "completions" && !embeddings {
		bad("api", "unknown API %q (known: chat, completions, embeddings)", s.API)
	}
	if b := s.Workload.Batch; b != nil {
		if !embeddings {
			bad("workload.batch", "a batch of inputs per request is for api: 'embeddings'")
		} else {
			errs = append(errs, validateCount("workload.batch", *b, MaxBatch)...)
		}
	}
	if im := s.Workload.Images; im != nil {
		if s.API != "chat" {
			bad("workload.images", "images go in chat messages: set api: 'chat'")
		}
		if im.Count != nil {
			errs = append(errs, validateCount("workload.images.count", *im.Count, MaxImagesPerRequest)...)
		}
		if len(im.Sizes) > MaxImageSizes {
			bad("workload.images.sizes", "%d resolutions, more than the %d a workload may synthesize", len(im.Sizes), MaxImageSizes)
		}
		switch {
		case im.Dir != "" && len(im.Sizes) > 0:
			bad("workload.images.dir", "give sizes to synthesize images or a dir to read them from, not both")
		case im.Dir == "" && len(im.Sizes) == 0:
			bad("workload.images.sizes", "required: the resolutions to synthesize, e.g. [{ width: 1024, height: 768 }], or a dir of images")
		}
		for i, sz := range im.Sizes {
			at := fmt.Sprintf("workload.images.sizes[%d]", i)
			if sz.Width < 1 || sz.Width > 8192 || sz.Height < 1 || sz.Height > 8192 {
				bad(at, "resolution %dx%d: width and height must be 1 to 8192 pixels", sz.Width, sz.Height)
			} else if sz.Width*sz.Height > MaxImagePixels {
				bad(at, "resolution %dx%d: %.1f megapixels, more than the %.1f an image may have (4096x4096)", sz.Width, sz.Height, float64(sz.Width*sz.Height)/1e6, float64(MaxImagePixels)/1e6)
			}
			if !(sz.Weight >= 0) || math.IsInf(sz.Weight, 0) {
				bad(at+".weight", "must not be negative, got %v", sz.Weight)
			}
		}
		if im.Format != "" && im.Format != "jpeg" && im.Format != "png" {
			bad("workload.images.format", "want jpeg or png, got %q", im.Format)
		}
		switch im.Turns {
		case "", ImagesFirstTurn:
		case ImagesEveryTurn:
			if s.Workload.Prompts.Kind != PromptMultiTurn {
				bad("workload.images.turns", "'every' adds images to each turn of a session: set prompts: { kind: 'multi_turn' }")
			}
		default:
			bad("workload.images.turns", "want 'first' or 'every', got %q", im.Turns)
		}
	}
	if st := s.Workload.Structured; st != nil {
		if s.API != "chat" {
			bad("workload.structured", "tool calls and JSON answers are chat features: set api: 'chat'")
		}
		if !toolName.MatchString(st.Name) {
			bad("workload.structured.name", "%q: use letters, digits, '_' and '-', at most 64 (a function name)", st.Name)
		}
		if st.Share < 0 || st.Share > 1 {
			bad("workload.structured.share", "must be a fraction between 0 and 1, got %v", st.Share)
		}
		if _, err := structured.Compile(st.Kind, st.Name, st.Schema); err != nil {
			field := "workload.structured.schema"
			if st.Kind != structured.ToolCall && st.Kind != structured.JSONSchema {
				field = "workload.structured.kind"
			}
			bad(field, "%v", err)
		}
	}
	if embeddings {
		if pr := s.Workload.Prompts.Kind; pr == "multi_turn" {
			bad("workload.prompts.kind", "embeddings take no conversation: use synthetic, shared_prefix or a dataset")
		}
		for i, slo := range s.SLOs {
			if !slices.Contains(embeddingMetrics, slo.Metric) {
				bad(fmt.Sprintf("slos[%d].metric", i), "%s is not measured for embeddings, which stream no tokens (use e2e, error_rate, request_throughput, total_throughput)", slo.Metric)
			}
		}
	}
	if s.Request.Timeout <= 0 {
		bad("request.timeout", "must be positive")
	}
	if to := s.Request.Timeouts; to != nil {
		if to.Connect < 0 || to.FirstToken < 0 || to.Idle < 0 {
			bad("request.timeouts", "must not be negative")
		}
		for _, p := range []struct {
			name string
			d    Duration
		}{{"connect", to.Connect}, {"first_token", to.FirstToken}, {"idle", to.Idle}} {
			if p.d > s.Request.Timeout {
				bad(JoinPath("request.timeouts", p.name), "%v is longer than the whole request's timeout (%v): it would never fire", p.d.D(), s.Request.Timeout.D())
			}
		}
	}
	if r := s.Request.Retry; r != nil {
		errs = append(errs, validateRetry(r)...)
	}

	pr := s.Workload.Prompts
	dataset := pr.Kind == "sharegpt" || pr.Kind == "jsonl"
	// A dataset brings its prompts, and maybe its output lengths; the
	// distributions then only fill in what it lacks.
	if !dataset || s.Workload.InputTokens.Kind != "" {
		errs = append(errs, validateDist("workload.input_tokens", s.Workload.InputTokens, 1)...)
	}
	if (!dataset && !embeddings) || s.Workload.OutputTokens.Kind != "" {
		errs = append(errs, validateDist("workload.output_tokens", s.Workload.OutputTokens, 1)...)
	}
	errs = append(errs, validateArrival(s.Workload.Arrival)...)
	if c := s.Workload.Cancel; c != nil {
		if !(c.Share > 0 && c.Share <= 1) {
			errs = append(errs, &FieldError{Path: "workload.cancel.share", Msg: fmt.Sprintf("must be a fraction of requests in (0, 1], got %v", c.Share)})
		}
		switch {
		case c.AfterTokens.Kind != "" && c.AfterMs.Kind != "":
			errs = append(errs, &FieldError{Path: "workload.cancel.after_ms", Msg: "give after_tokens or after_ms, not both"})
		case c.AfterMs.Kind != "":
			errs = append(errs, validateDist("workload.cancel.after_ms", c.AfterMs, 1)...)
		default:
			errs = append(errs, validateDist("workload.cancel.after_tokens", c.AfterTokens, 1)...)
		}
	}
	if ms := s.Workload.Models; len(ms) > MaxModels {
		bad("workload.models", "%d models, more than the %d a mix may have", len(ms), MaxModels)
	} else if len(ms) > 0 {
		sum, seen := 0.0, map[string]bool{}
		for i, m := range ms {
			at := fmt.Sprintf("workload.models[%d]", i)
			switch {
			case m.Name == "":
				bad(at+".name", "required: the model (or LoRA adapter) name requests carry")
			case seen[m.Name]:
				bad(at+".name", "model %q is listed twice", m.Name)
			}
			seen[m.Name] = true
			if !validWeight(m.Weight) {
				bad(at+".weight", "must be a non-negative number, got %v", m.Weight)
			} else {
				sum += m.Weight
			}
		}
		// A sum may overflow (two weights of 1e308): the generator
		// divides by the largest first, so only all zero is refused.
		if sum <= 0 {
			bad("workload.models", "the weights sum to zero: give at least one model a positive weight")
		}
	}
	for i, slo := range s.SLOs {
		if slo.Model != "" && !slices.ContainsFunc(s.Workload.Models, func(m ModelShare) bool { return m.Name == slo.Model }) {
			var names []string
			for _, m := range s.Workload.Models {
				if !slices.Contains(names, m.Name) {
					names = append(names, m.Name)
				}
			}
			if len(names) == 0 {
				bad(fmt.Sprintf("slos[%d].model", i), "an SLO names a model of workload.models, and the workload has none")
			} else {
				bad(fmt.Sprintf("slos[%d].model", i), "not a model of workload.models: %q%s", slo.Model, didyoumean.Hint(slo.Model, names))
			}
		}
	}
	switch pr.Kind {
	case "synthetic":
	case "shared_prefix":
		switch {
		case pr.Prefixes < 1:
			bad("workload.prompts.prefixes", "must be at least 1, got %d", pr.Prefixes)
		case pr.Prefixes > MaxPrefixes:
			bad("workload.prompts.prefixes", "%d is more than the %d a workload may have", pr.Prefixes, MaxPrefixes)
		}
		switch {
		case pr.PrefixTokens < 1:
			bad("workload.prompts.prefix_tokens", "must be at least 1, got %d", pr.PrefixTokens)
		case pr.Prefixes >= 1 && pr.Prefixes <= MaxPrefixes && pr.PrefixTokens > MaxTokens/pr.Prefixes:
			bad("workload.prompts.prefix_tokens", "%d prefixes of %d tokens are more than the %d tokens they may hold in all", pr.Prefixes, pr.PrefixTokens, MaxTokens)
		}
	case "multi_turn":
		switch {
		case pr.Turns < 2:
			bad("workload.prompts.turns", "must be at least 2, got %d", pr.Turns)
		case pr.Turns > MaxTurns:
			bad("workload.prompts.turns", "%d is more than the %d turns a session may have", pr.Turns, MaxTurns)
		}
		if pr.ThinkTime < 0 {
			bad("workload.prompts.think_time", "must not be negative")
		}
	case "sharegpt", "jsonl":
		if pr.Path == "" {
			bad("workload.prompts.path", "required: the dataset file")
		}
	default:
		bad("workload.prompts.kind", "unknown prompt source %q (known: synthetic, shared_prefix, multi_turn, sharegpt, jsonl)", pr.Kind)
	}

	errs = append(errs, validateSweep(&s.Sweep)...)

	for i, slo := range s.SLOs {
		errs = append(errs, validateSLO(fmt.Sprintf("slos[%d]", i), slo, &s.Sweep)...)
		if (slo.Metric == metric.TTFTUser || slo.Metric == metric.E2EUser || slo.Metric == metric.RetryAmplification) && s.Request.Retry == nil {
			bad(fmt.Sprintf("slos[%d].metric", i), "%s is measured when requests are retried: request: { retry: b.retry(...) }", slo.Metric)
		}
		if slo.Metric == metric.Goodput && len(s.Goodput) == 0 {
			bad(fmt.Sprintf("slos[%d].metric", i), "goodput needs per-request SLOs: goodput: { ttft: '500ms', tpot: '50ms' }")
		}
	}
	if s.Sweep.Kind == "capacity" && len(s.SLOs) == 0 {
		bad("slos", "a capacity search needs SLOs: capacity is the highest rate at which all of them hold")
	}
	perRequest := metric.Names(func(d metric.Def) bool { return d.Goodput })
	for k, d := range s.Goodput {
		if !slices.Contains(perRequest, k) {
			bad(JoinPath("goodput", k), "unknown per-request metric%s", didyoumean.Hint(k, perRequest))
		} else if d <= 0 {
			bad(JoinPath("goodput", k), "must be positive")
		}
	}
	for k, v := range s.Tolerance {
		if _, err := metric.ParseTolerance(k); err != nil {
			bad(JoinPath("tolerance", k), "%v", err)
		} else if _, err := ParseBand(v); err != nil {
			bad(JoinPath("tolerance", k), "%v", err)
		}
	}
	if s.Cost != nil {
		errs = append(errs, validateCost("cost", s.Cost)...)
	}
	names := map[string]bool{}
	for i, t := range s.Telemetry {
		at := fmt.Sprintf("telemetry[%d]", i)
		switch {
		case !telemetryName.MatchString(t.Name):
			bad(at+".name", "%q: use lower-case letters, digits and '_' (it prefixes the figures, e.g. dcgm.power_mean_w)", t.Name)
		case names[t.Name]:
			bad(at+".name", "%q is used twice", t.Name)
		}
		names[t.Name] = true
		if u, err := url.Parse(t.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad(at+".url", "want the metrics' full http(s) address, e.g. http://127.0.0.1:9400/metrics, got %q", t.URL)
		}
		if t.Interval != 0 && t.Interval < Duration(100*time.Millisecond) {
			bad(at+".interval", "must be at least 100ms, got %s", t.Interval.D())
		}
	}
	if known != nil && s.Tokenizer != "" && !slices.Contains(known.Tokenizers, s.Tokenizer) {
		bad("tokenizer", "unknown tokenizer %q%s", s.Tokenizer, didyoumean.Hint(s.Tokenizer, known.Tokenizers))
	}
	if sn := s.Sanity; sn != nil && !(sn.MaxErrorRate >= 0 && sn.MaxErrorRate <= 1) {
		bad("sanity.max_error_rate", "must be a fraction between 0 and 1, got %v", sn.MaxErrorRate)
	}
	switch {
	case s.Trials < 1:
		bad("trials", "must be at least 1, got %d", s.Trials)
	case s.Trials > MaxTrials:
		bad("trials", "%d is more than the %d trials a point may have", s.Trials, MaxTrials)
	}
	return errs
}

// embeddingMetrics are what an embeddings answer, which streams nothing,
// is measured by.
var embeddingMetrics = metric.Names(func(d metric.Def) bool { return d.APIs.Has(string(APIEmbeddings)) })

var toolName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

var telemetryName = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// validateTarget checks a target written at path ("target", or a
// variant's).
func validateTarget(path string, t *Target, known *Known) []*FieldError {
	var errs []*FieldError
	bad := func(at, format string, args ...any) {
		errs = append(errs, &FieldError{Path: at, Msg: fmt.Sprintf(format, args...)})
	}
	switch t.Kind {
	case "sim":
		if t.Proxy != nil {
			bad(JoinPath(path, "proxy"), "the fault proxy goes in front of a real server; the simulator has faults of its own (faults={...})")
		}
		switch {
		case t.Profile == "" && t.Spec == nil:
			bad(JoinPath(path, "profile"), "required: the simulator profile, or a spec of model and GPU cards")
		case t.Profile != "" && t.Spec != nil:
			bad(JoinPath(path, "spec"), "a sim target takes a profile or a spec, not both")
		case known != nil && known.Sim != nil:
			if field, err := known.Sim(t); err != nil {
				bad(JoinPath(path, field), "%s", err)
			}
		case known != nil && t.Profile != "" && !slices.Contains(known.SimProfiles, t.Profile):
			bad(JoinPath(path, "profile"), "unknown simulator profile %q%s", t.Profile, didyoumean.Hint(t.Profile, known.SimProfiles))
		}
		if f := t.Faults; f != nil {
			sum := f.ErrorRate + f.ResetRate + f.StallRate + f.MalformedRate + f.WrongUsageRate
			if f.ErrorRate < 0 || f.ResetRate < 0 || f.StallRate < 0 || f.MalformedRate < 0 || f.WrongUsageRate < 0 || sum > 1 {
				bad(JoinPath(path, "faults"), "rates must be between 0 and 1 and add up to at most 1, got %v in all", sum)
			}
			if !(f.WrongStructuredRate >= 0 && f.WrongStructuredRate <= 1) {
				bad(JoinPath(path, "faults.wrong_structured_rate"), "must be a fraction between 0 and 1, got %v", f.WrongStructuredRate)
			}
			if f.StallRate > 0 && f.Stall <= 0 {
				bad(JoinPath(path, "faults.stall"), "a stall_rate needs a stall duration")
			}
		}
		if o := t.Sim; o != nil && (o.MaxNumSeqs < 0 || o.MaxBatchedTokens < 0 || o.TokensPerStep < 0 || o.StepBase < 0 || o.DecodePerSeq < 0 || o.PrefillPerToken < 0) {
			bad(JoinPath(path, "sim"), "overrides must not be negative")
		}
	case "url", "launch":
		if f := t.Proxy; f != nil {
			sum := f.Rate429 + f.Rate503 + f.ResetRate + f.StallRate
			if f.Rate429 < 0 || f.Rate503 < 0 || f.ResetRate < 0 || f.StallRate < 0 || sum > 1 {
				bad(JoinPath(path, "proxy"), "rates must be between 0 and 1 and add up to at most 1, got %v in all", sum)
			}
			if f.Latency < 0 || f.RetryAfter < 0 || f.Stall < 0 || f.SlowFirstByte < 0 || f.Seed < 0 {
				bad(JoinPath(path, "proxy"), "durations and the seed must not be negative")
			}
			if f.StallRate > 0 && f.Stall <= 0 {
				bad(JoinPath(path, "proxy.stall"), "a stall_rate needs a stall duration")
			}
		}
		u, err := url.Parse(t.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad(JoinPath(path, "url"), "want an http(s) base URL such as http://127.0.0.1:8000, got %q", t.URL)
		}
		if t.Kind == "launch" {
			l := t.Launch
			switch {
			case l == nil || len(l.Command) == 0 || l.Command[0] == "":
				bad(JoinPath(path, "launch.command"), "required: the argv that starts the server")
			default:
				if l.Health == "" {
					l.Health = "/v1/models"
				}
				if !strings.HasPrefix(l.Health, "/") {
					bad(JoinPath(path, "launch.health"), "want a path such as /health, got %q", l.Health)
				}
				if l.StartTimeout == 0 {
					l.StartTimeout = Duration(10 * time.Minute)
				}
				if l.StopGrace == 0 {
					l.StopGrace = Duration(30 * time.Second)
				}
				if l.StartTimeout < 0 || l.StopGrace < 0 || l.WarmupRequests < 0 {
					bad(JoinPath(path, "launch"), "timeouts and warmup_requests must not be negative")
				}
				if l.WarmupRequests > MaxWarmupRequests {
					bad(JoinPath(path, "launch.warmup_requests"), "%d is more than the %d a launch may send", l.WarmupRequests, MaxWarmupRequests)
				}
				if l.Per == "" {
					l.Per = "suite"
				}
				if l.Per != "suite" && l.Per != "point" {
					bad(JoinPath(path, "launch.per"), "want \"suite\" or \"point\", got %q", l.Per)
				}
			}
		}
	case "":
		bad(path, "required: b.target.sim('llama3-8b-h100'), b.target.url('http://127.0.0.1:8000') or b.target.launch([...], url=...)")
	default:
		bad(JoinPath(path, "kind"), "unknown target kind %q (known: sim, url, launch)", t.Kind)
	}
	return errs
}

// validateRetry checks a retry policy and fills in its defaults.
func validateRetry(r *Retry) []*FieldError {
	var errs []*FieldError
	bad := func(field, format string, args ...any) {
		errs = append(errs, &FieldError{Path: JoinPath("request.retry", field), Msg: fmt.Sprintf(format, args...)})
	}
	if len(r.On) == 0 {
		bad("on", "required: what to retry, e.g. ['429', '5xx', 'timeout']")
	}
	for i, on := range r.On {
		code, err := strconv.Atoi(on)
		switch {
		case slices.Contains(RetryOn, on):
		case err == nil && code >= 500 && code <= 599:
		case err == nil && code >= 400 && code <= 499:
			bad(fmt.Sprintf("on[%d]", i), "%d is never retried: a 4xx other than 429 says the request itself is wrong, and sending it again cannot help", code)
		default:
			bad(fmt.Sprintf("on[%d]", i), "unknown outcome %q (known: %s, or a 5xx status)", on, strings.Join(RetryOn, ", "))
		}
	}
	if r.MaxAttempts == 0 {
		r.MaxAttempts = 3
	}
	if r.MaxAttempts < 2 || r.MaxAttempts > 20 {
		bad("max_attempts", "must be 2 to 20 (it counts the first attempt), got %d", r.MaxAttempts)
	}
	b := &r.Backoff
	if b.Initial == 0 {
		b.Initial = Duration(100 * time.Millisecond)
	}
	if b.Max == 0 {
		b.Max = max(Duration(10*time.Second), b.Initial)
	}
	if b.Multiplier == 0 {
		b.Multiplier = 2
	}
	switch {
	case b.Initial < 0 || b.Max < 0:
		bad("backoff", "waits must not be negative")
	case b.Max < b.Initial:
		bad("backoff.max", "must be at least initial (%v), got %v", b.Initial, b.Max)
	}
	if b.Multiplier < 1 {
		bad("backoff.multiplier", "must be at least 1, got %v", b.Multiplier)
	}
	if b.Jitter < 0 || b.Jitter > 1 {
		bad("backoff.jitter", "must be a fraction between 0 and 1, got %v", b.Jitter)
	}
	if r.RespectRetryAfter == nil {
		yes := true
		r.RespectRetryAfter = &yes
	}
	if b := r.Budget; b != nil && (*b <= 0 || *b > 1) {
		bad("budget", "must be a share of the requests above 0 and at most 1 (100%%), got %v; leave it out for no cap", *b)
	}
	return errs
}

func validateCost(path string, c *Cost) []*FieldError {
	var errs []*FieldError
	if c.USDPerHour < 0 || c.Watts < 0 || c.USDPerKWh < 0 || c.OpsOverheadPct < 0 {
		errs = append(errs, &FieldError{Path: path, Msg: "costs must not be negative"})
	}
	if c.GPUs < 1 {
		errs = append(errs, &FieldError{Path: JoinPath(path, "gpus"), Msg: fmt.Sprintf("must be at least 1, got %d", c.GPUs)})
	}
	return errs
}

// MaxTokens bounds every length a suite can ask for, in tokens: above the
// longest context any model serves (a few million), and far below what
// overflows a request's max_tokens or exhausts memory building a prompt.
const MaxTokens = 4_000_000

func validateDist(path string, d Dist, atLeast float64) []*FieldError {
	var errs []*FieldError
	bad := func(field, format string, args ...any) {
		errs = append(errs, &FieldError{Path: JoinPath(path, field), Msg: fmt.Sprintf(format, args...)})
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"value", d.Value}, {"mean", d.Mean}, {"median", d.Median}, {"min", d.Min}, {"max", d.Max}} {
		if f.v > MaxTokens || math.IsNaN(f.v) {
			bad(f.name, "%v tokens is beyond any model's context (at most %d)", f.v, MaxTokens)
		}
	}
	for i, v := range d.Values {
		if v > MaxTokens || math.IsNaN(v) {
			bad(fmt.Sprintf("values[%d]", i), "%v tokens is beyond any model's context (at most %d)", v, MaxTokens)
		}
	}
	if d.Kind == DistLognormal && d.Sigma > 5 {
		bad("sigma", "%v: a lognormal this wide spans %.0f orders of magnitude between P1 and P99; real lengths do not (sigma 0.3-1.5 is usual)", d.Sigma, 2*2.33*d.Sigma/math.Ln10)
	}
	positive := func(field string, v float64) {
		if !(v > 0) || math.IsInf(v, 0) {
			bad(field, "must be positive, got %v", v)
		}
	}
	switch d.Kind {
	case "":
		return []*FieldError{{Path: path, Msg: "required: state the real traffic's lengths, e.g. b.dist.lognormal(median=512, sigma=0.5)"}}
	case "fixed":
		if d.Value < atLeast {
			bad("value", "must be at least %v, got %v", atLeast, d.Value)
		}
	case "uniform":
		if d.Min < atLeast {
			bad("min", "must be at least %v, got %v", atLeast, d.Min)
		}
		if d.Max < d.Min {
			bad("max", "must be at least min (%v), got %v", d.Min, d.Max)
		}
	case "normal":
		positive("mean", d.Mean)
		if d.Stddev < 0 {
			bad("stddev", "must not be negative, got %v", d.Stddev)
		}
	case "lognormal":
		positive("median", d.Median)
		if d.Sigma < 0 {
			bad("sigma", "must not be negative, got %v", d.Sigma)
		}
	case "empirical":
		if len(d.Values) == 0 {
			bad("values", "required: at least one value")
		}
		if len(d.Values) > MaxEmpiricalValues {
			bad("values", "%d values, more than the %d a distribution may list (recorded lengths go in a file: b.dist.file)", len(d.Values), MaxEmpiricalValues)
		}
		for i, v := range d.Values {
			if v < atLeast {
				bad(fmt.Sprintf("values[%d]", i), "must be at least %v, got %v", atLeast, v)
			}
		}
		if len(d.Weights) != 0 && len(d.Weights) != len(d.Values) {
			bad("weights", "has %d entries, values has %d", len(d.Weights), len(d.Values))
		}
		sum := 0.0
		for i, w := range d.Weights {
			if !(w >= 0) || math.IsInf(w, 0) {
				bad(fmt.Sprintf("weights[%d]", i), "must be a non-negative number, got %v", w)
			}
			sum += w
		}
		if len(d.Weights) != 0 && sum == 0 {
			bad("weights", "must not all be zero")
		}
	case "file":
		if d.Path == "" {
			bad("path", "required: a JSONL file of recorded lengths")
		}
		if d.Field == "" {
			bad("field", "required: the field holding the length, e.g. \"input_tokens\"")
		}
	default:
		bad("kind", "unknown distribution %q (known: fixed, uniform, normal, lognormal, empirical, file)", d.Kind)
	}
	if d.Kind != "uniform" {
		if d.Min < 0 {
			bad("min", "must not be negative, got %v", d.Min)
		}
		if d.Max != 0 && d.Max < max(d.Min, atLeast) {
			bad("max", "must be at least %v, got %v", max(d.Min, atLeast), d.Max)
		}
	}
	return errs
}

func validateArrival(a Arrival) []*FieldError {
	var errs []*FieldError
	bad := func(field, format string, args ...any) {
		errs = append(errs, &FieldError{Path: JoinPath("workload.arrival", field), Msg: fmt.Sprintf(format, args...)})
	}
	switch a.Kind {
	case "poisson", "constant":
	case "gamma":
		if !(a.Burstiness > 0) || math.IsInf(a.Burstiness, 0) {
			bad("burstiness", "must be positive (1: Poisson, <1: burstier), got %v", a.Burstiness)
		}
	case "bursts":
		if a.Factor < 1 || math.IsInf(a.Factor, 0) {
			bad("factor", "must be at least 1, got %v", a.Factor)
		}
		if a.On <= 0 {
			bad("on", "must be positive")
		}
		if a.Period <= a.On {
			bad("period", "must be longer than on (%v), got %v", a.On.D(), a.Period.D())
		}
	case "trace":
		if a.Path == "" {
			bad("path", "required: a JSONL trace file")
		}
		if a.BlockTokens < 0 || a.BlockTokens > MaxBlockTokens {
			bad("block_tokens", "must be between 1 and %d tokens, got %d", MaxBlockTokens, a.BlockTokens)
		}
	default:
		bad("kind", "unknown arrival process %q (known: poisson, constant, gamma, bursts, trace)", a.Kind)
	}
	if a.BlockTokens != 0 && a.Kind != "trace" {
		bad("block_tokens", "sizes a trace's hash_ids blocks: only for a trace")
	}
	return errs
}

// MaxBlockTokens bounds a trace's prefix block.
const MaxBlockTokens = 65536

// Bounds on a point's plan: one machine sends at most MaxRate requests/s
// (benchci's client holds about 8,000 on 2 cores), a point lasts at most
// MaxPointDuration, and plans at most MaxPlannedRequests (its timeline is
// 8 bytes a request).
const (
	MaxRate            = 100_000
	MaxPointDuration   = Duration(24 * time.Hour)
	MaxPlannedRequests = 10_000_000
)

func validateSweep(sw *Sweep) []*FieldError {
	var errs []*FieldError
	bad := func(field, format string, args ...any) {
		errs = append(errs, &FieldError{Path: JoinPath("sweep", field), Msg: fmt.Sprintf(format, args...)})
	}
	if sw.Kind == "" {
		switch {
		case len(sw.Rates) > 0 && len(sw.Concurrencies) > 0:
			bad("", "give rates or concurrencies, not both")
		case len(sw.Rates) > 0:
			sw.Kind = "rate"
		case len(sw.Concurrencies) > 0:
			sw.Kind = "concurrency"
		}
	}
	switch sw.Kind {
	case "rate":
		if len(sw.Rates) == 0 {
			bad("rates", "required: at least one request rate")
		}
		for i, r := range sw.Rates {
			if !(r > 0) || math.IsInf(r, 0) {
				bad(fmt.Sprintf("rates[%d]", i), "a rate must be a positive number of requests/s, got %v", r)
			}
		}
	case "concurrency":
		if len(sw.Concurrencies) == 0 {
			bad("concurrencies", "required: at least one concurrency level")
		}
		for i, c := range sw.Concurrencies {
			if c < 1 {
				bad(fmt.Sprintf("concurrencies[%d]", i), "must be at least 1, got %d", c)
			} else if c > MaxConcurrency {
				bad(fmt.Sprintf("concurrencies[%d]", i), "%d requests in flight is beyond what one client machine holds (at most %d; use shards)", c, MaxConcurrency)
			}
		}
	case "capacity":
		if !(sw.Min > 0) || math.IsInf(sw.Min, 0) {
			bad("min", "must be a positive rate, got %v", sw.Min)
		}
		if !(sw.Max > sw.Min) || math.IsInf(sw.Max, 0) {
			bad("max", "must be above min (%v), got %v", sw.Min, sw.Max)
		}
		if !(sw.Precision > 0 && sw.Precision < 1) {
			bad("precision", "must be a fraction between 0 and 1 (0.05 for 5%%), got %v", sw.Precision)
		}
	case "throughput":
		if sw.Requests <= 0 {
			bad("requests", "required: a throughput sweep sends this many requests at once")
		} else if sw.Requests > MaxPlannedRequests {
			bad("requests", "%d is more than a point may plan (%v)", sw.Requests, MaxPlannedRequests)
		}
		if sw.Duration != 0 || sw.Warmup != 0 {
			bad("duration", "a throughput sweep runs until its requests end: drop duration and warmup")
		}
	case "auto":
		if sw.Points == 0 {
			sw.Points = 8
		}
		if sw.Points < 2 {
			bad("points", "must be at least 2, got %d", sw.Points)
		} else if sw.Points > MaxPoints {
			bad("points", "%d is more than the %d points a sweep may have", sw.Points, MaxPoints)
		}
	case "":
		if len(errs) == 0 {
			errs = append(errs, &FieldError{Path: "sweep", Msg: "required: b.sweep.rates([...]), b.sweep.concurrency([...]), b.sweep.capacity(min, max), b.sweep.auto() or b.sweep.throughput(requests)"})
		}
	default:
		bad("kind", "unknown sweep kind %q (known: rate, concurrency, capacity, auto, throughput)", sw.Kind)
	}
	if n := len(sw.Rates) + len(sw.Concurrencies); n > MaxPoints {
		field := "rates"
		if len(sw.Concurrencies) > len(sw.Rates) {
			field = "concurrencies"
		}
		bad(field, "%d points, more than the %d a sweep may have", n, MaxPoints)
	}
	if sw.Duration < 0 {
		bad("duration", "must not be negative")
	}
	// A plan no machine can send is refused before its timeline is drawn
	// (a rate of 1e9, or a duration of centuries, held gigabytes).
	if sw.Duration > MaxPointDuration {
		bad("duration", "%v is longer than a point may be (%v)", sw.Duration.D(), time.Duration(MaxPointDuration))
	}
	for i, r := range sw.Rates {
		if r > MaxRate {
			bad(fmt.Sprintf("rates[%d]", i), "%v req/s is beyond what one client machine sends (at most %v; use shards)", r, MaxRate)
		} else if n := r * (sw.Duration + sw.Warmup).D().Seconds(); n > MaxPlannedRequests {
			bad(fmt.Sprintf("rates[%d]", i), "%v req/s for %v plans %.3g requests in one point, more than %v", r, (sw.Duration + sw.Warmup).D(), n, MaxPlannedRequests)
		}
	}
	if sw.Max > MaxRate {
		bad("max", "%v req/s is beyond what one client machine sends (at most %v)", sw.Max, MaxRate)
	}
	if sw.Duration == 0 && sw.Requests == 0 {
		bad("duration", "a point needs a duration or a request count")
	}
	if sw.Warmup < 0 {
		bad("warmup", "must not be negative")
	}
	if sw.Requests < 0 {
		bad("requests", "must not be negative, got %d", sw.Requests)
	}
	if sw.MaxConcurrency < 0 {
		bad("max_concurrency", "must not be negative, got %d", sw.MaxConcurrency)
	} else if sw.MaxConcurrency > MaxConcurrency {
		bad("max_concurrency", "%d requests in flight is beyond what one client machine holds (at most %d)", sw.MaxConcurrency, MaxConcurrency)
	}
	if r := sw.Ramp; r != nil {
		switch {
		case sw.Kind != SweepRate:
			bad("ramp", "only a rate sweep ramps its points, not a %s sweep", sw.Kind)
		case r.Kind != RampLinear && r.Kind != RampExponential:
			bad("ramp.kind", "unknown ramp %q (known: linear, exponential)", r.Kind)
		case !(r.From >= 0) || math.IsInf(r.From, 0):
			bad("ramp.from", "must be a rate of 0 or more, got %v", r.From)
		case r.Kind == RampExponential && r.From == 0:
			bad("ramp.from", "an exponential ramp cannot start from 0; give a small rate such as 0.5")
		case r.Over <= 0:
			bad("ramp.over", "must be a positive duration")
		case sw.Duration > 0 && r.Over > sw.Warmup+sw.Duration:
			bad("ramp.over", "%v is longer than the point (%v of warm-up and duration)", r.Over.D(), (sw.Warmup + sw.Duration).D())
		}
	}
	if st := sw.StopSaturated; st != nil && *st && (sw.Kind == SweepConcurrency || sw.Kind == SweepThroughput) {
		bad("stop_saturated", "applies to open-loop rates: a %s sweep's queue is bounded by its own concurrency", sw.Kind)
	}
	return errs
}

func validateSLO(path string, slo SLO, sw *Sweep) []*FieldError {
	var errs []*FieldError
	bad := func(field, format string, args ...any) {
		errs = append(errs, &FieldError{Path: JoinPath(path, field), Msg: fmt.Sprintf(format, args...)})
	}
	asserted := metric.Names(func(d metric.Def) bool { return d.SLO })
	if !slices.Contains(asserted, slo.Metric) {
		bad("metric", "unknown metric %q%s", slo.Metric, didyoumean.Hint(slo.Metric, asserted))
	} else if err := metric.K(slo.Metric, slo.Stat).Check(); err != nil {
		bad("stat", "%v", err)
	} else if _, err := ParseThreshold(slo); err != nil {
		bad("threshold", "%v", err)
	}
	if !slices.Contains(Ops, slo.Op) {
		bad("op", "unknown operator %q (known: %s)", slo.Op, strings.Join(Ops, " "))
	}
	if slo.AtRate != 0 && sw.Kind == "throughput" {
		bad("at_rate", "a throughput sweep sends everything at once (rate=inf): drop at_rate, its one point is judged")
	} else if slo.AtRate != 0 && (sw.Kind == "capacity" || sw.Kind == "auto") {
		bad("at_rate", "a %s sweep chooses its own rates; drop at_rate", sw.Kind)
	} else if slo.AtRate != 0 && !slices.Contains(sw.Rates, slo.AtRate) {
		bad("at_rate", "%v is not one of the sweep's rates %v", slo.AtRate, sw.Rates)
	}
	if slo.AtConcurrency != 0 && !slices.Contains(sw.Concurrencies, slo.AtConcurrency) {
		bad("at_concurrency", "%d is not one of the sweep's concurrencies %v", slo.AtConcurrency, sw.Concurrencies)
	}
	return errs
}

// ParseThreshold returns an SLO's threshold in the unit its metric is
// measured in: milliseconds for latencies, the plain number otherwise.
func ParseThreshold(slo SLO) (float64, error) {
	if d, ok := metric.Lookup(slo.Metric); ok && d.Kind == metric.Latency {
		s, ok := slo.Threshold.(string)
		if !ok {
			return 0, fmt.Errorf("want a duration string such as \"500ms\", got %v", slo.Threshold)
		}
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			return 0, fmt.Errorf("want a positive duration such as \"500ms\", got %q", s)
		}
		return float64(d) / float64(time.Millisecond), nil
	}
	switch v := slo.Threshold.(type) {
	case float64:
		return v, nil
	case string:
		if strings.HasSuffix(v, "%") && slo.Metric == metric.ErrorRate {
			f, err := strconv.ParseFloat(strings.TrimSuffix(v, "%"), 64)
			if err == nil {
				return f / 100, nil
			}
		}
	}
	return 0, fmt.Errorf("want a number, got %v", slo.Threshold)
}
