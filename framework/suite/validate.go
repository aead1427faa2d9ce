package suite

import (
	"fmt"
	"regexp"
	"slices"
	"time"

	"github.com/benchci/benchci/internal/didyoumean"
)

// Default returns a suite holding every default; decoding writes the user's
// fields over it, so an absent field keeps its default.
func Default() *Suite {
	return &Suite{
		API:     APIChat,
		Request: Request{Timeout: Duration(5 * time.Minute), IgnoreEOS: true},
		Workload: Workload{
			Arrival: Arrival{Kind: ArrivalPoisson},
			Prompts: Prompts{Kind: PromptSynthetic, Calibrate: true},
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
// Its sections run in the order their problems are listed.
func validate(s *Suite, known *Known) []*FieldError {
	var errs []*FieldError
	errs = append(errs, validateName(s)...)
	if len(s.Variants) == 0 || s.Target.Kind != "" {
		errs = append(errs, validateTarget("target", &s.Target, known)...)
	}
	errs = append(errs, validateVariants(s, known)...)
	errs = append(errs, validateAPI(s)...)
	errs = append(errs, validateImages(s)...)
	errs = append(errs, validateStructured(s)...)
	errs = append(errs, validateEmbeddings(s)...)
	errs = append(errs, validateRequest(s)...)
	errs = append(errs, validateLengths(s)...)
	errs = append(errs, validateModels(s)...)
	errs = append(errs, validatePrompts(s)...)
	errs = append(errs, validateSweep(&s.Sweep)...)
	errs = append(errs, validateSLOs(s)...)
	errs = append(errs, validateGoodput(s)...)
	errs = append(errs, validateTolerance(s)...)
	if s.Cost != nil {
		errs = append(errs, validateCost("cost", s.Cost)...)
	}
	errs = append(errs, validateTelemetry(s)...)
	errs = append(errs, validateRun(s, known)...)
	return errs
}

// fieldErrors gathers a section's field errors in the order they are found.
type fieldErrors []*FieldError

// add records a problem with the field at path.
func (p *fieldErrors) add(path, format string, args ...any) {
	*p = append(*p, &FieldError{Path: path, Msg: fmt.Sprintf(format, args...)})
}

// validateName checks the suite's name, which names its results file.
func validateName(s *Suite) []*FieldError {
	var p fieldErrors
	if s.Name == "" {
		p.add("name", "required")
	} else if !nameRE.MatchString(s.Name) {
		p.add("name", "%q: use letters, digits, '.', '_' and '-' (it names results/<name>.json)", s.Name)
	}
	return p
}

// validateRun checks the run's own settings: tokenizer, sanity, trials.
func validateRun(s *Suite, known *Known) []*FieldError {
	var p fieldErrors
	if known != nil && s.Tokenizer != "" && !slices.Contains(known.Tokenizers, s.Tokenizer) {
		p.add("tokenizer", "unknown tokenizer %q%s", s.Tokenizer, didyoumean.Hint(s.Tokenizer, known.Tokenizers))
	}
	if sn := s.Sanity; sn != nil && !(sn.MaxErrorRate >= 0 && sn.MaxErrorRate <= 1) {
		p.add("sanity.max_error_rate", "must be a fraction between 0 and 1, got %v", sn.MaxErrorRate)
	}
	switch {
	case s.Trials < 1:
		p.add("trials", "must be at least 1, got %d", s.Trials)
	case s.Trials > MaxTrials:
		p.add("trials", "%d is more than the %d trials a point may have", s.Trials, MaxTrials)
	}
	return p
}
