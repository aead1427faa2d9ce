package suite

import (
	"fmt"
	"math"
	"regexp"
	"slices"

	"github.com/benchci/benchci/framework/metric"
	"github.com/benchci/benchci/internal/didyoumean"
	"github.com/benchci/benchci/internal/structured"
)

// validateAPI checks the API and the batch of inputs only embeddings take.
func validateAPI(s *Suite) []*FieldError {
	var p fieldErrors
	embeddings := s.API == APIEmbeddings
	if s.API != APIChat && s.API != APICompletions && !embeddings {
		p.add("api", "unknown API %q (known: chat, completions, embeddings)", s.API)
	}
	if b := s.Workload.Batch; b != nil {
		if !embeddings {
			p.add("workload.batch", "a batch of inputs per request is for api: 'embeddings'")
		} else {
			p = append(p, validateCount("workload.batch", *b, MaxBatch)...)
		}
	}
	return p
}

// validateImages checks workload.images, which chat requests carry.
func validateImages(s *Suite) []*FieldError {
	var p fieldErrors
	if im := s.Workload.Images; im != nil {
		if s.API != APIChat {
			p.add("workload.images", "images go in chat messages: set api: 'chat'")
		}
		if im.Count != nil {
			p = append(p, validateCount("workload.images.count", *im.Count, MaxImagesPerRequest)...)
		}
		if len(im.Sizes) > MaxImageSizes {
			p.add("workload.images.sizes", "%d resolutions, more than the %d a workload may synthesize", len(im.Sizes), MaxImageSizes)
		}
		switch {
		case im.Dir != "" && len(im.Sizes) > 0:
			p.add("workload.images.dir", "give sizes to synthesize images or a dir to read them from, not both")
		case im.Dir == "" && len(im.Sizes) == 0:
			p.add("workload.images.sizes", "required: the resolutions to synthesize, e.g. [{ width: 1024, height: 768 }], or a dir of images")
		}
		for i, sz := range im.Sizes {
			at := fmt.Sprintf("workload.images.sizes[%d]", i)
			if sz.Width < 1 || sz.Width > 8192 || sz.Height < 1 || sz.Height > 8192 {
				p.add(at, "resolution %dx%d: width and height must be 1 to 8192 pixels", sz.Width, sz.Height)
			} else if sz.Width*sz.Height > MaxImagePixels {
				p.add(at, "resolution %dx%d: %.1f megapixels, more than the %.1f an image may have (4096x4096)", sz.Width, sz.Height, float64(sz.Width*sz.Height)/1e6, float64(MaxImagePixels)/1e6)
			}
			if !(sz.Weight >= 0) || math.IsInf(sz.Weight, 0) {
				p.add(at+".weight", "must not be negative, got %v", sz.Weight)
			}
		}
		if im.Format != "" && im.Format != "jpeg" && im.Format != "png" {
			p.add("workload.images.format", "want jpeg or png, got %q", im.Format)
		}
		switch im.Turns {
		case "", ImagesFirstTurn:
		case ImagesEveryTurn:
			if s.Workload.Prompts.Kind != PromptMultiTurn {
				p.add("workload.images.turns", "'every' adds images to each turn of a session: set prompts: { kind: 'multi_turn' }")
			}
		default:
			p.add("workload.images.turns", "want 'first' or 'every', got %q", im.Turns)
		}
	}
	return p
}

// validateStructured checks workload.structured: tool calls or JSON
// answers, and the schema they are checked against.
func validateStructured(s *Suite) []*FieldError {
	var p fieldErrors
	if st := s.Workload.Structured; st != nil {
		if s.API != APIChat {
			p.add("workload.structured", "tool calls and JSON answers are chat features: set api: 'chat'")
		}
		if !toolName.MatchString(st.Name) {
			p.add("workload.structured.name", "%q: use letters, digits, '_' and '-', at most 64 (a function name)", st.Name)
		}
		if st.Share < 0 || st.Share > 1 {
			p.add("workload.structured.share", "must be a fraction between 0 and 1, got %v", st.Share)
		}
		if _, err := structured.Compile(st.Kind, st.Name, st.Schema); err != nil {
			field := "workload.structured.schema"
			if st.Kind != structured.ToolCall && st.Kind != structured.JSONSchema {
				field = "workload.structured.kind"
			}
			p.add(field, "%v", err)
		}
	}
	return p
}

// validateEmbeddings checks what embeddings, which stream no tokens,
// cannot take: a conversation, or SLOs on token timings.
func validateEmbeddings(s *Suite) []*FieldError {
	var p fieldErrors
	if s.API == APIEmbeddings {
		if pr := s.Workload.Prompts.Kind; pr == PromptMultiTurn {
			p.add("workload.prompts.kind", "embeddings take no conversation: use synthetic, shared_prefix or a dataset")
		}
		for i, slo := range s.SLOs {
			if !slices.Contains(embeddingMetrics, slo.Metric) {
				p.add(fmt.Sprintf("slos[%d].metric", i), "%s is not measured for embeddings, which stream no tokens (use e2e, error_rate, request_throughput, total_throughput)", slo.Metric)
			}
		}
	}
	return p
}

// validateLengths checks the token lengths, the arrival process and the
// cancellations.
func validateLengths(s *Suite) []*FieldError {
	var p fieldErrors
	embeddings := s.API == APIEmbeddings
	pr := s.Workload.Prompts
	dataset := pr.Kind.Dataset()
	// A dataset brings its prompts, and maybe its output lengths; the
	// distributions then only fill in what it lacks.
	if !dataset || s.Workload.InputTokens.Kind != "" {
		p = append(p, validateDist("workload.input_tokens", s.Workload.InputTokens, 1)...)
	}
	if (!dataset && !embeddings) || s.Workload.OutputTokens.Kind != "" {
		p = append(p, validateDist("workload.output_tokens", s.Workload.OutputTokens, 1)...)
	}
	p = append(p, validateArrival(s.Workload.Arrival)...)
	if c := s.Workload.Cancel; c != nil {
		if !(c.Share > 0 && c.Share <= 1) {
			p = append(p, &FieldError{Path: "workload.cancel.share", Msg: fmt.Sprintf("must be a fraction of requests in (0, 1], got %v", c.Share)})
		}
		switch {
		case c.AfterTokens.Kind != "" && c.AfterMs.Kind != "":
			p = append(p, &FieldError{Path: "workload.cancel.after_ms", Msg: "give after_tokens or after_ms, not both"})
		case c.AfterMs.Kind != "":
			p = append(p, validateDist("workload.cancel.after_ms", c.AfterMs, 1)...)
		default:
			p = append(p, validateDist("workload.cancel.after_tokens", c.AfterTokens, 1)...)
		}
	}
	return p
}

// validateModels checks a mix of models, and the SLOs that name one.
func validateModels(s *Suite) []*FieldError {
	var p fieldErrors
	if ms := s.Workload.Models; len(ms) > MaxModels {
		p.add("workload.models", "%d models, more than the %d a mix may have", len(ms), MaxModels)
	} else if len(ms) > 0 {
		sum, seen := 0.0, map[string]bool{}
		for i, m := range ms {
			at := fmt.Sprintf("workload.models[%d]", i)
			switch {
			case m.Name == "":
				p.add(at+".name", "required: the model (or LoRA adapter) name requests carry")
			case seen[m.Name]:
				p.add(at+".name", "model %q is listed twice", m.Name)
			}
			seen[m.Name] = true
			if !validWeight(m.Weight) {
				p.add(at+".weight", "must be a non-negative number, got %v", m.Weight)
			} else {
				sum += m.Weight
			}
		}
		// A sum may overflow (two weights of 1e308): the generator
		// divides by the largest first, so only all zero is refused.
		if sum <= 0 {
			p.add("workload.models", "the weights sum to zero: give at least one model a positive weight")
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
				p.add(fmt.Sprintf("slos[%d].model", i), "an SLO names a model of workload.models, and the workload has none")
			} else {
				p.add(fmt.Sprintf("slos[%d].model", i), "not a model of workload.models: %q%s", slo.Model, didyoumean.Hint(slo.Model, names))
			}
		}
	}
	return p
}

// validatePrompts checks the prompt source's own fields.
func validatePrompts(s *Suite) []*FieldError {
	var p fieldErrors
	pr := s.Workload.Prompts
	switch pr.Kind {
	case PromptSynthetic:
	case PromptSharedPrefix:
		switch {
		case pr.Prefixes < 1:
			p.add("workload.prompts.prefixes", "must be at least 1, got %d", pr.Prefixes)
		case pr.Prefixes > MaxPrefixes:
			p.add("workload.prompts.prefixes", "%d is more than the %d a workload may have", pr.Prefixes, MaxPrefixes)
		}
		switch {
		case pr.PrefixTokens < 1:
			p.add("workload.prompts.prefix_tokens", "must be at least 1, got %d", pr.PrefixTokens)
		case pr.Prefixes >= 1 && pr.Prefixes <= MaxPrefixes && pr.PrefixTokens > MaxTokens/pr.Prefixes:
			p.add("workload.prompts.prefix_tokens", "%d prefixes of %d tokens are more than the %d tokens they may hold in all", pr.Prefixes, pr.PrefixTokens, MaxTokens)
		}
	case PromptMultiTurn:
		switch {
		case pr.Turns < 2:
			p.add("workload.prompts.turns", "must be at least 2, got %d", pr.Turns)
		case pr.Turns > MaxTurns:
			p.add("workload.prompts.turns", "%d is more than the %d turns a session may have", pr.Turns, MaxTurns)
		}
		if pr.ThinkTime < 0 || pr.ThinkTime > MaxWait {
			p.add("workload.prompts.think_time", "must be 0 to %v, got %v", MaxWait.D(), pr.ThinkTime.D())
		}
	case PromptShareGPT, PromptJSONL:
		if pr.Path == "" {
			p.add("workload.prompts.path", "required: the dataset file")
		}
	default:
		p.add("workload.prompts.kind", "unknown prompt source %q (known: synthetic, shared_prefix, multi_turn, sharegpt, jsonl)", pr.Kind)
	}
	switch {
	case pr.Salt == "":
	case pr.Kind.Dataset():
		p.add("workload.prompts.salt", "a %s dataset's text is its own and cannot be salted without changing its lengths: use synthetic prompts, or reset the server's cache (sweep: { reset_prefix_cache: true })", pr.Kind)
	case len(pr.Salt) > MaxSaltLen:
		p.add("workload.prompts.salt", "%d bytes is longer than the %d a salt may have", len(pr.Salt), MaxSaltLen)
	}
	return p
}

// embeddingMetrics are what an embeddings answer, which streams nothing,
// is measured by.
var embeddingMetrics = metric.Names(func(d metric.Def) bool { return d.APIs.Has(string(APIEmbeddings)) })

var toolName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

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
	case DistFixed:
		if d.Value < atLeast {
			bad("value", "must be at least %v, got %v", atLeast, d.Value)
		}
	case DistUniform:
		if d.Min < atLeast {
			bad("min", "must be at least %v, got %v", atLeast, d.Min)
		}
		if d.Max < d.Min {
			bad("max", "must be at least min (%v), got %v", d.Min, d.Max)
		}
	case DistNormal:
		positive("mean", d.Mean)
		if d.Stddev < 0 {
			bad("stddev", "must not be negative, got %v", d.Stddev)
		}
	case DistLognormal:
		positive("median", d.Median)
		if d.Sigma < 0 {
			bad("sigma", "must not be negative, got %v", d.Sigma)
		}
	case DistEmpirical:
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
	case DistFile:
		if d.Path == "" {
			bad("path", "required: a JSONL file of recorded lengths")
		}
		if d.Field == "" {
			bad("field", "required: the field holding the length, e.g. \"input_tokens\"")
		}
	default:
		bad("kind", "unknown distribution %q (known: fixed, uniform, normal, lognormal, empirical, file)", d.Kind)
	}
	if d.Kind != DistUniform {
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
	case ArrivalPoisson, ArrivalConstant:
	case ArrivalGamma:
		if !(a.Burstiness > 0) || math.IsInf(a.Burstiness, 0) {
			bad("burstiness", "must be positive (1: Poisson, <1: burstier), got %v", a.Burstiness)
		}
	case ArrivalBursts:
		if a.Factor < 1 || math.IsInf(a.Factor, 0) {
			bad("factor", "must be at least 1, got %v", a.Factor)
		}
		if a.On <= 0 {
			bad("on", "must be positive")
		}
		if a.Period <= a.On {
			bad("period", "must be longer than on (%v), got %v", a.On.D(), a.Period.D())
		}
	case ArrivalTrace:
		if a.Path == "" {
			bad("path", "required: a JSONL trace file")
		}
		if a.BlockTokens < 0 || a.BlockTokens > MaxBlockTokens {
			bad("block_tokens", "must be between 1 and %d tokens, got %d", MaxBlockTokens, a.BlockTokens)
		}
	default:
		bad("kind", "unknown arrival process %q (known: poisson, constant, gamma, bursts, trace)", a.Kind)
	}
	if a.BlockTokens != 0 && a.Kind != ArrivalTrace {
		bad("block_tokens", "sizes a trace's hash_ids blocks: only for a trace")
	}
	return errs
}

// MaxBlockTokens bounds a trace's prefix block.
const MaxBlockTokens = 65536
