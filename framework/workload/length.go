// Package workload turns a suite's workload description into concrete,
// reproducible requests and arrival times.
package workload

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"sort"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/benchci/benchci/framework/suite"
)

// Length draws token counts.
type Length interface {
	// Sample returns a count of at least 1.
	Sample() int
}

// NewLength returns a sampler for d, drawing from src.
func NewLength(d suite.Dist, src rand.Source) (Length, error) {
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
		values, err := lengthsFromFile(d.Path, d.Field)
		if err != nil {
			return nil, err
		}
		draw = empirical(values, nil, rand.New(src))
	default:
		return nil, fmt.Errorf("unknown distribution %q", d.Kind)
	}
	hi := float64(suite.MaxTokens)
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
// suite.MaxTokens, so a heavy tail (a lognormal with a huge sigma) cannot
// overflow a request's max_tokens or build a gigabyte prompt. NaN (from
// an overflowing draw) clips to max.
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

// lengthsFromFile reads the numeric field of every JSONL line of path.
func lengthsFromFile(path, field string) ([]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("lengths: %w", err)
	}
	defer f.Close()
	var out []float64
	err = eachLine(f, func(b []byte) error {
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			return err
		}
		v, ok := m[field].(float64)
		if !ok || v < 1 || math.IsInf(v, 0) {
			return fmt.Errorf("%s is %v, want a length of at least 1", field, m[field])
		}
		out = append(out, v)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("lengths %w", atFile(path, err))
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("lengths %s: no lines", path)
	}
	return out, nil
}
