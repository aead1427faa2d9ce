// Package bands proposes tolerance bands from the spread of repeated runs
// of one suite with nothing changed: wide enough that the gate would pass
// any of those runs against any other, and no wider, so it neither cries
// wolf nor sleeps. Bencher's users size bands by hand this way.
package bands

import (
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"

	"github.com/benchci/benchci/framework/metric"
	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/internal/stats"
)

// Proposal is the band proposed for one gated figure.
type Proposal struct {
	// Key is the tolerance key ("ttft.p99").
	Key string
	// Spread is the largest relative difference seen between two runs at
	// one point, |b - a| / |a| over every ordered pair; At names the point.
	Spread float64
	At     string
	// Band is Spread times the margin, at least the floor, rounded up to
	// a tenth of a percent: the relative band to use.
	Band float64
}

// Propose returns a band per gated figure from runs of one suite. A run's
// value at a point is the median over its trials, as the gate takes it.
// Fractions (the error rate) keep their percentage-point bands and are
// left out. The runs must share a workload hash: otherwise their spread
// is the workload's change, not noise.
func Propose(runs []*result.File, floor, margin float64) ([]Proposal, error) {
	if len(runs) < 2 {
		return nil, fmt.Errorf("bands need at least 2 runs, got %d", len(runs))
	}
	for _, r := range runs[1:] {
		if r.Suite.WorkloadHash != runs[0].Suite.WorkloadHash {
			return nil, fmt.Errorf("runs of different workloads (%.12s, %.12s): their spread is not noise", runs[0].Suite.WorkloadHash, r.Suite.WorkloadHash)
		}
	}
	var out []Proposal
	for _, k := range metric.Gated {
		if k.Def().Kind == metric.Fraction {
			continue
		}
		p := Proposal{Key: k.String()}
		seen := false
		for _, label := range labels(runs) {
			var vs []float64
			for _, r := range runs {
				if v, ok := medianAt(r, label, k); ok {
					vs = append(vs, v)
				}
			}
			for i, a := range vs {
				for j, b := range vs {
					d, ok := stats.RelDelta(b, a) // reference: run a, every ordered pair
					if i == j || !ok {
						continue
					}
					seen = true
					if d := math.Abs(d); d > p.Spread {
						p.Spread, p.At = d, label
					}
				}
			}
		}
		if !seen {
			continue // not measured here (no cost declared, no goodput criteria)
		}
		p.Band = math.Max(floor, math.Ceil(p.Spread*margin*1000)/1000)
		out = append(out, p)
	}
	return out, nil
}

// Tolerance is the band as a tolerance value: "3.1%".
func (p Proposal) Tolerance() string {
	return strconv.FormatFloat(math.Round(p.Band*1000)/10, 'f', -1, 64) + "%"
}

func labels(runs []*result.File) []string {
	var out []string
	for _, r := range runs {
		for _, p := range r.Points {
			if !slices.Contains(out, p.Label) {
				out = append(out, p.Label)
			}
		}
	}
	sort.Strings(out)
	return out
}

func medianAt(f *result.File, label string, k metric.Key) (float64, bool) {
	var vs []float64
	for i := range f.Points {
		p := &f.Points[i]
		if p.Label != label || !p.Valid() {
			continue
		}
		if v, missing := p.Value(k); missing == "" && !math.IsNaN(v) {
			vs = append(vs, v)
		}
	}
	if len(vs) == 0 {
		return 0, false
	}
	return stats.Median(vs), true
}

// Jsonnet writes the proposals as a suite's tolerance field, for review.
func Jsonnet(w io.Writer, suite string, runs int, floor, margin float64, ps []Proposal) error {
	fmt.Fprintf(w, "// benchci bands: %d runs of %s with nothing changed. Each band is the largest\n", runs, suite)
	fmt.Fprintf(w, "// difference seen between two runs at one point, x%g, at least %g%%.\n", margin, floor*100)
	fmt.Fprintln(w, "tolerance: {")
	for _, p := range ps {
		where := "no difference seen"
		if p.At != "" {
			where = fmt.Sprintf("widest %.2f%% at %s", p.Spread*100, strconv.Quote(p.At))
		}
		fmt.Fprintf(w, "  '%s': '%s',  // %s\n", p.Key, p.Tolerance(), where)
	}
	_, err := fmt.Fprintln(w, "},")
	return err
}
