// Package workload turns a suite's workload description into concrete,
// reproducible requests and arrival times.
package workload

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"sort"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/benchci/benchci/framework/suite"
	"github.com/benchci/benchci/internal/inputfile"
)

// Length draws token counts.
type Length interface {
	// Sample returns a count of at least 1.
	Sample() int
}

// NewLength returns a sampler for d, drawing from src: token counts of
// 1 to suite.MaxTokens.
func NewLength(d suite.Dist, src rand.Source) (Length, error) {
	return newLength(d, src, suite.MaxTokens, false)
}

// newLength returns a sampler for d whose draws are clipped to [1,
// limit]. With check, a file of lengths is read through as a run reads
// it, kept nowhere, and the sampler returned only stands in for it.
func newLength(d suite.Dist, src rand.Source, limit int, check bool) (Length, error) {
	var draw func() float64
	switch d.Kind {
	case suite.DistFixed:
		v := d.Value
		draw = func() float64 { return v }
	case suite.DistUniform:
		// Integer uniform on [min, max], both ends included.
		lo, hi := math.Ceil(d.Min), math.Floor(d.Max)
		r := rand.New(src)
		draw = func() float64 { return lo + float64(r.IntN(int(hi-lo)+1)) }
	case suite.DistNormal:
		n := distuv.Normal{Mu: d.Mean, Sigma: d.Stddev, Src: src}
		draw = n.Rand
	case suite.DistLognormal:
		// Parameterized by the median, which is what people know of their
		// traffic: median = exp(mu).
		n := distuv.LogNormal{Mu: math.Log(d.Median), Sigma: d.Sigma, Src: src}
		draw = n.Rand
	case suite.DistEmpirical:
		draw = empirical(d.Values, d.Weights, rand.New(src))
	case suite.DistFile:
		if check {
			if err := scanLengths(d.Path, d.Field, func(uint32) {}); err != nil {
				return nil, err
			}
			draw = func() float64 { return 1 }
			break
		}
		var values []uint32
		if err := scanLengths(d.Path, d.Field, func(v uint32) { values = append(values, v) }); err != nil {
			return nil, err
		}
		r := rand.New(src)
		draw = func() float64 { return float64(values[r.IntN(len(values))]) }
	default:
		return nil, fmt.Errorf("unknown distribution %q", d.Kind)
	}
	hi := float64(limit)
	if d.Max > 0 {
		hi = min(d.Max, hi)
	}
	return &clipped{draw: draw, min: max(1, d.Min), max: hi}, nil
}

type clipped struct {
	draw     func() float64
	min, max float64
}

// Sample clips every draw to [min, max]; max is never above
// suite.MaxTokens (for counts, their own bound), so a heavy tail (a
// lognormal with a huge sigma) cannot overflow a request's max_tokens or
// build a gigabyte prompt. NaN (from an overflowing draw) clips to max.
func (c *clipped) Sample() int {
	v := math.Round(c.draw())
	switch {
	case v < c.min:
		v = c.min
	case !(v <= c.max):
		v = c.max
	}
	return int(v)
}

func empirical(values, weights []float64, r *rand.Rand) func() float64 {
	if len(weights) == 0 {
		return func() float64 { return values[r.IntN(len(values))] }
	}
	cum := make([]float64, len(weights))
	total := 0.0
	for i, w := range weights {
		total += w
		cum[i] = total
	}
	return func() float64 {
		x := r.Float64() * total
		i := sort.SearchFloat64s(cum, x)
		if i >= len(values) {
			i = len(values) - 1
		}
		return values[i]
	}
}

// MaxLengthValues bounds the lengths a file of them (kind 'file') may
// hold: 16,000,000, 4 bytes each as held.
const MaxLengthValues = 16_000_000

// maxLengthLine bounds a line of a file of lengths (a gateway log's line).
const maxLengthLine = 1 << 20

// scanLengths reads the numeric field of every JSONL line of path (a
// regular file of at most suite.MaxDataFile bytes), calling f with each,
// rounded as a draw is: a length of 1 to suite.MaxTokens, else an error
// naming the line. Past MaxLengthValues lines the file is refused.
func scanLengths(path, field string, f func(uint32)) error {
	file, err := inputfile.Open(path, suite.MaxDataFile)
	if err != nil {
		return fmt.Errorf("lengths: %w", err)
	}
	defer file.Close()
	if err := parseLengths(file, field, f); err != nil {
		return fmt.Errorf("lengths %w", atFile(path, err))
	}
	return nil
}

// parseLengths is scanLengths' reading of a stream, its errors naming
// lines.
func parseLengths(r io.Reader, field string, f func(uint32)) error {
	n := 0
	err := eachLine(r, maxLengthLine, func(b []byte) error {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(b, &m); err != nil {
			return err
		}
		var v float64
		if raw, ok := m[field]; !ok || json.Unmarshal(raw, &v) != nil || !(v >= 1) {
			return fmt.Errorf("%s is %s, want a length of at least 1", field, shown(m[field]))
		}
		if v > suite.MaxTokens {
			return fmt.Errorf("%s is %v tokens, beyond any model's context (at most %d)", field, v, suite.MaxTokens)
		}
		if n == MaxLengthValues {
			return stop{fmt.Errorf("more than the %d lengths a file may hold", MaxLengthValues)}
		}
		n++
		f(uint32(math.Round(v)))
		return nil
	})
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf(" no lines")
	}
	return nil
}

// shown writes a field's JSON for an error, cut short.
func shown(raw json.RawMessage) string {
	if raw == nil {
		return "<nil>"
	}
	if len(raw) > 40 {
		return string(raw[:40]) + "..."
	}
	return string(raw)
}
