package baseline

import (
	"math"
	"slices"

	"github.com/benchci/benchci/framework/metric"
	"github.com/benchci/benchci/internal/stats"
)

// Move is one figure an edit of a baseline moved, read from the two
// versions' summaries.
type Move struct {
	Point  string  `json:"point"`
	Figure string  `json:"figure"`
	From   float64 `json:"from"`
	To     float64 `json:"to"`
	// Gone: the figure (or its whole point) is no longer gated; Added: a
	// figure gated for the first time.
	Gone  bool `json:"gone,omitempty"`
	Added bool `json:"added,omitempty"`
	// Lenient: the edit lets through what the old baseline failed: a
	// figure where higher is better lowered, one where lower is better
	// raised, or one no longer gated at all.
	Lenient bool `json:"lenient"`
}

// Change is To relative to From, (To - From) / |From|; NaN for a figure
// gone or added, or moved from zero.
func (m Move) Change() float64 {
	if m.Gone || m.Added {
		return math.NaN()
	}
	if d, ok := stats.RelDelta(m.To, m.From); ok { // reference: the old baseline
		return d
	}
	return math.NaN()
}

// Edit is what a change of a baseline file moved.
type Edit struct {
	// WorkloadChanged: the two versions sent different requests, so
	// their figures do not compare; Moves is then empty.
	WorkloadChanged bool   `json:"workload_changed,omitempty"`
	Moves           []Move `json:"moves,omitempty"`
}

// Lenient counts the moves that make the gate more lenient.
func (e Edit) Lenient() int {
	n := 0
	for _, m := range e.Moves {
		if m.Lenient {
			n++
		}
	}
	return n
}

// Diff lists the figures that moved between two versions of a baseline,
// in the newer one's order of points and the catalogue's order of
// figures. A reviewer sees a baseline edit's effect on the gate here,
// not in a diff of histograms.
func Diff(from, to *File) Edit {
	if from.WorkloadHash != to.WorkloadHash {
		return Edit{WorkloadChanged: true}
	}
	var e Edit
	old := map[string]map[string]float64{}
	for _, s := range from.Summary {
		old[s.Point] = s.Figures
	}
	seen := map[string]bool{}
	for _, s := range to.Summary {
		seen[s.Point] = true
		before := old[s.Point]
		for _, k := range figureOrder(before, s.Figures) {
			a, hadA := before[k]
			b, hasB := s.Figures[k]
			m := Move{Point: s.Point, Figure: k, From: a, To: b}
			switch {
			case hadA && !hasB:
				m.Gone, m.Lenient = true, true
			case !hadA && hasB:
				m.Added = true
			case math.Abs(b-a) <= 1e-9*max(math.Abs(a), 1):
				continue
			default:
				m.Lenient = lenient(k, a, b)
			}
			e.Moves = append(e.Moves, m)
		}
	}
	for _, s := range from.Summary {
		if !seen[s.Point] {
			e.Moves = append(e.Moves, Move{Point: s.Point, Figure: "*", Gone: true, Lenient: true})
		}
	}
	return e
}

// lenient says whether moving figure k from a to b lets through more.
func lenient(k string, a, b float64) bool {
	key, err := metric.ParseKey(k)
	if err != nil {
		return true // a figure the catalogue does not know: flagged for review
	}
	switch key.Def().Better {
	case metric.Higher:
		return b < a
	case metric.Lower:
		return b > a
	}
	return b != a
}

// figureOrder lists the figures of both versions, in the catalogue's
// gated order, then any others sorted.
func figureOrder(a, b map[string]float64) []string {
	var out []string
	has := func(k string) bool {
		_, inA := a[k]
		_, inB := b[k]
		return inA || inB
	}
	for _, k := range metric.Gated {
		if s := k.String(); has(s) {
			out = append(out, s)
		}
	}
	if has(metric.Capacity) && !slices.Contains(out, metric.Capacity) {
		out = append(out, metric.Capacity)
	}
	var rest []string
	for _, m := range []map[string]float64{a, b} {
		for k := range m {
			if !slices.Contains(out, k) && !slices.Contains(rest, k) {
				rest = append(rest, k)
			}
		}
	}
	slices.Sort(rest)
	return append(out, rest...)
}
