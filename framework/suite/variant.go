package suite

import (
	"cmp"
	"fmt"
	"maps"
	"regexp"
	"slices"
)

// variantNameRE is stricter than a suite name: no dots, so that a variant
// is one path segment in results/<suite>/<variant>.json and one field in an
// error's path.
var variantNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]*$`)

// VariantSep joins a suite's name and a variant's in the expanded suite's
// name, which is also its results and baseline path below the directory.
const VariantSep = "/"

// RunName names a run of s in results and baselines: the suite's name,
// and "<suite>/<variant>" for a variant.
func (s *Suite) RunName() string {
	if s.Variant == "" {
		return s.Name
	}
	return s.Name + VariantSep + s.Variant
}

// Named is one variant expanded into a whole suite.
type Named struct {
	Variant string
	Suite   *Suite
}

// VariantNames lists the variants in the order they run: by name, as
// Jsonnet orders an object's fields.
func (s *Suite) VariantNames() []string {
	return slices.Sorted(maps.Keys(s.Variants))
}

// Expand returns every variant as a suite of its own (RunName
// "<suite>/<variant>"), with the variant's target, request, cost and
// simulator overrides applied; the workload, sweep, SLOs and tolerances
// are shared. A suite without variants expands to itself alone, unnamed.
func (s *Suite) Expand() []Named {
	if len(s.Variants) == 0 {
		return []Named{{Suite: s}}
	}
	var out []Named
	for _, name := range s.VariantNames() {
		v := s.Variants[name]
		c := *s
		c.Variant = name
		c.Variants, c.Order = nil, ""
		if v.Target != nil {
			c.Target = *v.Target
		}
		if v.Sim != nil {
			c.Target.Sim = mergeSim(c.Target.Sim, v.Sim)
		}
		if r := v.Request; r != nil {
			if r.Model != "" {
				c.Target.Model = r.Model
			}
			if len(r.Extra) > 0 {
				c.Request.Extra = maps.Clone(s.Request.Extra)
				if c.Request.Extra == nil {
					c.Request.Extra = map[string]any{}
				}
				maps.Copy(c.Request.Extra, r.Extra)
			}
		}
		if v.Cost != nil {
			cost := *v.Cost
			c.Cost = &cost
		}
		out = append(out, Named{Variant: name, Suite: &c})
	}
	return out
}

// mergeSim lays o over base: o's non-zero constants win.
func mergeSim(base, o *SimOverrides) *SimOverrides {
	out := SimOverrides{}
	if base != nil {
		out = *base
	}
	out.MaxNumSeqs = cmp.Or(o.MaxNumSeqs, out.MaxNumSeqs)
	out.MaxBatchedTokens = cmp.Or(o.MaxBatchedTokens, out.MaxBatchedTokens)
	out.TokensPerStep = cmp.Or(o.TokensPerStep, out.TokensPerStep)
	out.StepBase = cmp.Or(o.StepBase, out.StepBase)
	out.DecodePerSeq = cmp.Or(o.DecodePerSeq, out.DecodePerSeq)
	out.PrefillPerToken = cmp.Or(o.PrefillPerToken, out.PrefillPerToken)
	return &out
}

func validateVariants(s *Suite, known *Known) []*FieldError {
	var errs []*FieldError
	bad := func(path, format string, args ...any) {
		errs = append(errs, &FieldError{Path: path, Msg: fmt.Sprintf(format, args...)})
	}
	if s.Variant != "" && !variantNameRE.MatchString(s.Variant) {
		bad("variant", "variant name %q: use letters, digits, '_' and '-'", s.Variant)
	}
	if len(s.Variants) == 0 {
		if s.Order != "" {
			bad("order", "applies to variants, and the suite has none")
		}
		return errs
	}
	switch s.Order {
	case "":
		s.Order = OrderSequential
	case OrderSequential, OrderInterleaved:
	default:
		bad("order", "want %q or %q, got %q", OrderSequential, OrderInterleaved, s.Order)
	}
	launchedAt := map[string]string{} // host and port -> the first variant launching there
	for _, name := range s.VariantNames() {
		v := s.Variants[name]
		at := JoinPath("variants", name)
		if !variantNameRE.MatchString(name) {
			bad(at, "variant name %q: use letters, digits, '_' and '-' (it names results/%s/<variant>.json)", name, s.Name)
			continue
		}
		t := &s.Target
		if v.Target != nil {
			errs = append(errs, validateTarget(JoinPath(at, "target"), v.Target, known)...)
			t = v.Target
		} else if s.Target.Kind == "" {
			bad(JoinPath(at, "target"), "required: the suite has no target of its own")
		}
		if v.Sim != nil {
			if t.Kind != TargetSim {
				bad(JoinPath(at, "sim"), "simulator overrides need a simulated target, and this variant's is %q", t.Kind)
			}
			o := v.Sim
			if o.MaxNumSeqs < 0 || o.MaxBatchedTokens < 0 || o.TokensPerStep < 0 || o.StepBase < 0 || o.DecodePerSeq < 0 || o.PrefillPerToken < 0 {
				bad(JoinPath(at, "sim"), "overrides must not be negative")
			}
		}
		if v.Cost != nil {
			errs = append(errs, validateCost(JoinPath(at, "cost"), v.Cost)...)
		}
		if key := launchKey(t.URL); s.Order == OrderInterleaved && t.Kind == TargetLaunch && key != "" {
			if first, ok := launchedAt[key]; ok {
				bad(JoinPath(at, "target"), "interleaved variants keep their servers running side by side, and %s launches one at %s too: give each its own port (and GPU), or order: 'sequential'", first, t.URL)
			} else {
				launchedAt[key] = name
			}
		}
	}
	return errs
}
