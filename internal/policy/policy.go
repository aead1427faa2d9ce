// Package policy is what decides a suite's verdict, apart from what it
// measures: tolerances, SLOs, trials, point lengths, the rates judged,
// goodput criteria and sanity. A pull request is judged by its base's
// policy; Diff says where the change under review loosens it, and Stricter
// is the policy it is then judged by.
package policy

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/benchci/benchci/framework/compare"
	"github.com/benchci/benchci/framework/suite"
	"github.com/benchci/benchci/internal/slo"
)

// Change is one difference in policy, base → candidate.
type Change struct {
	// Field names the rule as a suite writes it: "tolerance.default",
	// "slos: ttft p99 < 500ms", "trials", "sweep.duration".
	Field string `json:"field"`
	// Base and Cand are the rule on each side, as written; "(none)" where
	// a side has no such rule.
	Base string `json:"base"`
	Cand string `json:"cand"`
	// Looser: the candidate's rule lets through something the base's
	// would have failed, or measures less to decide.
	Looser bool `json:"looser"`
}

func (c Change) String() string {
	return fmt.Sprintf("%s: %s → %s", c.Field, c.Base, c.Cand)
}

const none = "(none)"

// Diff lists every policy difference between base and cand, looser ones
// flagged. An error means a side's tolerances do not parse (a suite that
// validated cannot have that).
func Diff(base, cand *suite.Suite) ([]Change, error) {
	tc, err := compare.ToleranceChanges(base.Tolerance, cand.Tolerance)
	if err != nil {
		return nil, err
	}
	var out []Change
	for _, t := range tc {
		out = append(out, Change{Field: "tolerance." + t.Key, Base: t.Base, Cand: t.Cand, Looser: t.Looser})
	}
	out = append(out, sloChanges(base.SLOs, cand.SLOs)...)
	out = append(out, sweepChanges(base, cand)...)
	out = append(out, goodputChanges(base.Goodput, cand.Goodput)...)
	out = append(out, sanityChanges(base.Sanity, cand.Sanity)...)
	return out, nil
}

// Looser returns the changes that loosen the policy.
func Looser(cs []Change) []Change {
	return slices.DeleteFunc(slices.Clone(cs), func(c Change) bool { return !c.Looser })
}

// Stricter returns cand with base's rules wherever base's are stricter:
// tolerances per figure, each SLO's threshold, SLOs cand dropped, goodput
// criteria and sanity. What cannot be applied after the run (trials,
// durations, rates) is cand's, and Diff has flagged it.
func Stricter(base, cand *suite.Suite) (*suite.Suite, error) {
	out := *cand
	tol, err := compare.StricterTolerance(base.Tolerance, cand.Tolerance)
	if err != nil {
		return nil, err
	}
	out.Tolerance = tol
	out.SLOs = stricterSLOs(base.SLOs, cand.SLOs)
	out.Goodput = maps.Clone(cand.Goodput)
	for k, b := range base.Goodput {
		if c, ok := out.Goodput[k]; !ok || b < c {
			if out.Goodput == nil {
				out.Goodput = map[string]suite.Duration{}
			}
			out.Goodput[k] = b
		}
	}
	out.Sanity = stricterSanity(base.Sanity, cand.Sanity)
	return &out, nil
}

// sloID is what makes two SLOs the same rule, whatever their thresholds.
func sloID(s suite.SLO) string { return sloLabel(s) + " " + direction(s.Op) }

// sloLabel names an SLO without its comparison: "ttft p99 @ rate=8".
func sloLabel(s suite.SLO) string {
	n := s.Metric
	if s.Stat != "" {
		n += " " + s.Stat
	}
	if s.Model != "" {
		n += " for " + s.Model
	}
	return n + slo.At(s)
}

// direction groups < with <= and > with >=: an upper or a lower bound.
func direction(op string) string {
	if strings.HasPrefix(op, "<") {
		return "upper"
	}
	return "lower"
}

func sloRule(s suite.SLO) string {
	return fmt.Sprintf("%s %s", s.Op, threshold(s))
}

func threshold(s suite.SLO) string {
	switch t := s.Threshold.(type) {
	case string:
		return t
	case fmt.Stringer:
		return t.String()
	}
	return fmt.Sprint(s.Threshold)
}

// looserSLO reports whether c accepts a figure b fails.
func looserSLO(b, c suite.SLO) bool {
	bl, err1 := suite.ParseThreshold(b)
	cl, err2 := suite.ParseThreshold(c)
	if err1 != nil || err2 != nil {
		return threshold(b) != threshold(c)
	}
	upper := direction(b.Op) == "upper"
	switch {
	case cl != bl:
		return (cl > bl) == upper
	default:
		// Same limit: only the strictness of the comparison differs.
		return len(c.Op) > len(b.Op)
	}
}

// sameSLO reports whether two SLOs of one rule hold the same bound,
// however written ("500ms" and "0.5s").
func sameSLO(b, c suite.SLO) bool {
	if b.Op != c.Op {
		return false
	}
	bl, err1 := suite.ParseThreshold(b)
	cl, err2 := suite.ParseThreshold(c)
	if err1 != nil || err2 != nil {
		return threshold(b) == threshold(c)
	}
	return bl == cl
}

func sloChanges(base, cand []suite.SLO) []Change {
	// Of several SLOs of one rule, the strictest is the one that judges.
	byID := map[string]suite.SLO{}
	for _, s := range cand {
		if prev, ok := byID[sloID(s)]; !ok || looserSLO(s, prev) {
			byID[sloID(s)] = s
		}
	}
	var out []Change
	seen := map[string]bool{}
	for _, b := range base {
		id := sloID(b)
		seen[id] = true
		c, ok := byID[id]
		switch {
		case !ok:
			out = append(out, Change{Field: "slos: " + sloLabel(b), Base: sloRule(b), Cand: none + ": the SLO was removed", Looser: true})
		case !sameSLO(b, c):
			out = append(out, Change{Field: "slos: " + sloLabel(b), Base: sloRule(b), Cand: sloRule(c), Looser: looserSLO(b, c)})
		}
	}
	for _, c := range cand {
		if !seen[sloID(c)] {
			out = append(out, Change{Field: "slos: " + sloLabel(c), Base: none, Cand: sloRule(c) + " (added)"})
		}
	}
	return out
}

func stricterSLOs(base, cand []suite.SLO) []suite.SLO {
	out := slices.Clone(cand)
	index := map[string]int{}
	for i, s := range out {
		index[sloID(s)] = i
	}
	for _, b := range base {
		i, ok := index[sloID(b)]
		switch {
		case !ok:
			out = append(out, b)
			index[sloID(b)] = len(out) - 1
		case looserSLO(b, out[i]):
			out[i] = b
		}
	}
	return out
}

func sweepChanges(base, cand *suite.Suite) []Change {
	var out []Change
	add := func(field, b, c string, looser bool) {
		if b != c {
			out = append(out, Change{Field: field, Base: b, Cand: c, Looser: looser})
		}
	}
	bs, cs := base.Sweep, cand.Sweep
	add("trials", strconv.Itoa(base.Trials), strconv.Itoa(cand.Trials), cand.Trials < base.Trials)
	add("sweep.kind", string(bs.Kind), string(cs.Kind), bs.Kind != cs.Kind)
	add("sweep.duration", dur(bs.Duration), dur(cs.Duration), cs.Duration < bs.Duration)
	// A longer warm-up leaves more of the run out of the figures: the
	// cold start a change may have slowed is no longer measured.
	add("sweep.warmup", dur(bs.Warmup), dur(cs.Warmup), cs.Warmup > bs.Warmup)
	add("sweep.requests", count(bs.Requests), count(cs.Requests), bs.Requests == 0 && cs.Requests > 0 || cs.Requests > 0 && cs.Requests < bs.Requests)
	if dropped := missing(bs.Rates, cs.Rates); len(dropped) > 0 || !slices.Equal(bs.Rates, cs.Rates) {
		add("sweep.rates", floats(bs.Rates), floats(cs.Rates)+dropNote(dropped), len(dropped) > 0)
	}
	if dropped := missing(bs.Concurrencies, cs.Concurrencies); len(dropped) > 0 || !slices.Equal(bs.Concurrencies, cs.Concurrencies) {
		add("sweep.concurrencies", ints(bs.Concurrencies), ints(cs.Concurrencies)+dropNote(dropped), len(dropped) > 0)
	}
	if bs.Kind == suite.SweepCapacity && cs.Kind == suite.SweepCapacity {
		// A coarser search, or a lower ceiling, can no longer tell the
		// base's capacity from a lower one.
		add("sweep.precision", fmt.Sprint(bs.Precision), fmt.Sprint(cs.Precision), cs.Precision > bs.Precision)
		add("sweep.max", fmt.Sprint(bs.Max), fmt.Sprint(cs.Max), cs.Max < bs.Max)
	}
	return out
}

func goodputChanges(base, cand map[string]suite.Duration) []Change {
	var out []Change
	keys := slices.Sorted(maps.Keys(base))
	for _, k := range slices.Sorted(maps.Keys(cand)) {
		if _, ok := base[k]; !ok {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		b, bok := base[k]
		c, cok := cand[k]
		switch {
		case bok && !cok:
			out = append(out, Change{Field: "goodput." + k, Base: dur(b), Cand: none, Looser: true})
		case !bok && cok:
			out = append(out, Change{Field: "goodput." + k, Base: none, Cand: dur(c)})
		case b != c:
			out = append(out, Change{Field: "goodput." + k, Base: dur(b), Cand: dur(c), Looser: c > b})
		}
	}
	return out
}

func sanityOf(s *suite.Sanity) (off bool, maxErr float64) {
	maxErr = suite.DefaultMaxErrorRate
	if s == nil {
		return false, maxErr
	}
	if s.MaxErrorRate > 0 {
		maxErr = s.MaxErrorRate
	}
	return s.Off, maxErr
}

func sanityChanges(base, cand *suite.Sanity) []Change {
	bOff, bMax := sanityOf(base)
	cOff, cMax := sanityOf(cand)
	var out []Change
	if bOff != cOff {
		out = append(out, Change{Field: "sanity.off", Base: strconv.FormatBool(bOff), Cand: strconv.FormatBool(cOff), Looser: cOff})
	}
	if bMax != cMax {
		out = append(out, Change{Field: "sanity.max_error_rate", Base: fmt.Sprint(bMax), Cand: fmt.Sprint(cMax), Looser: cMax > bMax})
	}
	return out
}

func stricterSanity(base, cand *suite.Sanity) *suite.Sanity {
	bOff, bMax := sanityOf(base)
	cOff, cMax := sanityOf(cand)
	if base == nil && cand == nil {
		return nil
	}
	return &suite.Sanity{Off: bOff && cOff, MaxErrorRate: min(bMax, cMax)}
}

func dur(d suite.Duration) string {
	if d == 0 {
		return "0s"
	}
	return time.Duration(d).String()
}

func count(n int) string {
	if n == 0 {
		return none
	}
	return strconv.Itoa(n)
}

func floats(v []float64) string {
	s := make([]string, len(v))
	for i, f := range v {
		s[i] = strconv.FormatFloat(f, 'g', -1, 64)
	}
	return "[" + strings.Join(s, ", ") + "]"
}

func ints(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return "[" + strings.Join(s, ", ") + "]"
}

// missing is what base has and cand does not.
func missing[T comparable](base, cand []T) []T {
	var out []T
	for _, b := range base {
		if !slices.Contains(cand, b) {
			out = append(out, b)
		}
	}
	return out
}

func dropNote[T any](dropped []T) string {
	if len(dropped) == 0 {
		return ""
	}
	return fmt.Sprintf(" (%v no longer judged)", dropped)
}
