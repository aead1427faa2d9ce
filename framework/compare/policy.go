package compare

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/benchci/benchci/framework/metric"
)

// ToleranceChange is one tolerance key whose band is not the same in two
// suites' tolerances, each side resolved as the gate resolves a figure
// (its own key, then its metric, then "default"; shares have their own
// default in percentage points).
type ToleranceChange struct {
	Key string
	// Base and Cand are the bands as the gate reads them at Key, with
	// where each came from when not written at Key: "5% (default)".
	Base, Cand string
	// Looser: the candidate's band lets through some change the base's
	// would not (wider, or "off").
	Looser bool
}

// ToleranceChanges lists the keys of base and cand whose resolved band
// differs, in key order. A figure's band under either side is the band
// at the first key of its chain that either side writes, so looking at
// the union of keys covers every gated figure exactly: no figure's band
// can loosen without some listed key loosening.
func ToleranceChanges(base, cand map[string]string) ([]ToleranceChange, error) {
	bb, cb, err := parseBoth(base, cand)
	if err != nil {
		return nil, err
	}
	var out []ToleranceChange
	for _, k := range judgedKeys(base, cand) {
		b, bFrom := resolveKey(k, bb)
		c, cFrom := resolveKey(k, cb)
		if b == c {
			continue
		}
		out = append(out, ToleranceChange{Key: k, Base: bandFrom(b, k, bFrom), Cand: bandFrom(c, k, cFrom), Looser: looser(c, b)})
	}
	return out, nil
}

// StricterTolerance is the tolerance that takes, for every figure, the
// stricter of base's and cand's bands: what a change is judged by when it
// may not loosen its own gate. Where neither band contains the other (one
// wider in percent, the other in milliseconds), it takes the narrower of
// each part, stricter than both.
func StricterTolerance(base, cand map[string]string) (map[string]string, error) {
	bb, cb, err := parseBoth(base, cand)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, k := range unionKeys(base, cand) {
		b, _ := resolveKey(k, bb)
		c, _ := resolveKey(k, cb)
		switch {
		case !looser(c, b):
			out[k] = FormatBand(c)
		case !looser(b, c):
			out[k] = FormatBand(b)
		default:
			out[k] = FormatBand(metric.Band{Rel: min(b.Rel, c.Rel), Abs: min(b.Abs, c.Abs)})
		}
	}
	if b, ok := out["default"]; ok && b == metric.BandOff {
		// Neither side can write it (parseBands refuses it), so this
		// cannot happen; kept so that a future change cannot gate nothing.
		delete(out, "default")
	}
	return out, nil
}

// judgedKeys are the keys of the union of base and cand at which some
// gated figure's band is read: a key that every figure finds a closer key
// before (a "ttft" under "ttft.p50", "ttft.p90" and "ttft.p99") decides
// nothing, and must not read as a change when a suite is rewritten.
func judgedKeys(base, cand map[string]string) []string {
	union := map[string]bool{}
	for _, k := range unionKeys(base, cand) {
		union[k] = true
	}
	used := map[string]bool{}
	figures := append(append([]Metric(nil), Metrics...), metricOf(metric.K(metric.Capacity, "")))
	for _, m := range figures {
		chain := []string{m.Key}
		if m.def.Kind != metric.Fraction {
			chain = append(chain, m.base(), "default")
		}
		for _, k := range chain {
			if union[k] {
				used[k] = true
				break
			}
		}
	}
	var out []string
	for _, k := range unionKeys(base, cand) {
		if used[k] {
			out = append(out, k)
		}
	}
	return out
}

// parseBoth parses two sides' tolerances, naming the base's on error.
func parseBoth(base, cand map[string]string) (map[string]metric.Band, map[string]metric.Band, error) {
	bb, err := parseBands(base)
	if err != nil {
		return nil, nil, fmt.Errorf("base: %w", err)
	}
	cb, err := parseBands(cand)
	return bb, cb, err
}

// looser reports whether a lets through some change that b does not.
func looser(a, b metric.Band) bool {
	switch {
	case b.Off:
		return false
	case a.Off:
		return true
	}
	return a.Rel > b.Rel || a.Abs > b.Abs
}

func unionKeys(a, b map[string]string) []string {
	var keys []string
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// resolveKey is the band the gate reads at tolerance key k, and the key
// it came from: as band does for a figure whose first key is k.
func resolveKey(k string, bands map[string]metric.Band) (metric.Band, string) {
	if k != "default" {
		if key, err := metric.ParseTolerance(k); err == nil && key.Def().Kind == metric.Fraction {
			if b, ok := bands[k]; ok {
				return b, k
			}
			return metric.Band{Rel: DefaultErrorRateBand}, "the default for shares"
		}
	}
	chain := []string{k}
	if base, _, ok := strings.Cut(k, "."); ok {
		chain = append(chain, base)
	}
	if k != "default" {
		chain = append(chain, "default")
	}
	for _, c := range chain {
		if b, ok := bands[c]; ok {
			return b, c
		}
	}
	return DefaultBand, "benchci's default"
}

func bandFrom(b metric.Band, k, from string) string {
	s := FormatBand(b)
	if from != k {
		s += " (" + from + ")"
	}
	return s
}

// FormatBand writes b as a suite would: "10%", "20ms", "10%|20ms" or "off".
func FormatBand(b metric.Band) string {
	if b.Off {
		return metric.BandOff
	}
	var parts []string
	if b.Rel > 0 || b.Abs == 0 {
		// Ten digits drop the float noise of 0.07*100 without rounding a
		// band a reader would notice.
		parts = append(parts, strconv.FormatFloat(b.Rel*100, 'g', 10, 64)+"%")
	}
	if b.Abs > 0 {
		parts = append(parts, b.Abs.String())
	}
	return strings.Join(parts, "|")
}
