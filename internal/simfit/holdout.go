package simfit

import (
	"context"
	"errors"
	"math"
	"slices"

	"github.com/benchci/benchci/internal/sim"
	"github.com/benchci/benchci/internal/stats"
)

// HeldOut is one figure of one point, predicted by a fit that did not see
// the point.
type HeldOut struct {
	Point, Figure string
	// Fold is the fit that predicted it (CrossValidate's; 0 in sample).
	Fold                int
	Measured, Predicted float64
	// Error is (predicted - measured) / measured; +Inf when the twin
	// could not predict the figure (no request finished).
	Error float64
}

// Validation is a fit's held-out check.
type Validation struct {
	// Folds is how many fits it took: one per condition (leave one
	// condition out) up to MaxFolds conditions, MaxFolds folds of every
	// MaxFolds-th condition beyond. A condition's trials are held out
	// together: a fit that saw one trial of a load has all but measured
	// the others, and would flatter the twin.
	Folds int
	// Conditions is how many distinct conditions were held out (Distinct):
	// the independent points the held-out errors stand on.
	Conditions int
	Rows       []HeldOut
	// MedianAbsError is the median of |Error| over the rows: the answer
	// to how far the twin is off on a point it was not fitted to.
	MedianAbsError float64
	// Scales are each fold's fitted parameters over the base's, to show
	// how much they move with the points they are fitted to.
	Scales [][]float64
}

// MaxFolds bounds the refits of a held-out check.
const MaxFolds = 8

// ErrTooFewPoints is returned when there are too few conditions (loads
// or lengths) to hold one out and still fit the parameters.
var ErrTooFewPoints = errors.New("too few loads or lengths to hold one out")

// CrossValidate refits the base profile without each fold of conditions
// and predicts the points left out, from the base each time (not from
// the full fit, which saw them). It stops when ctx is done, as Fit does.
func CrossValidate(ctx context.Context, base sim.Profile, params []Param, pts []Point, opts Options) (*Validation, error) {
	cond := Conditions(pts)
	n := count(cond)
	if n < 2 {
		return nil, ErrTooFewPoints
	}
	k := MaxFolds
	if opts.MaxFolds > 0 {
		k = opts.MaxFolds
	}
	k = min(n, k)
	v := &Validation{Folds: k, Conditions: n}
	for f, fold := range folds(cond, k) {
		var train, test []Point
		for i, p := range pts {
			if slices.Contains(fold, i) {
				test = append(test, p)
			} else {
				train = append(train, p)
			}
		}
		fit, err := Fit(ctx, base, params, train, opts)
		if err != nil {
			return nil, err
		}
		v.Scales = append(v.Scales, fit.Scales)
		for _, r := range InSample(test, predictAll(ctx, fit.Profile, test, opts.Workers)) {
			r.Fold = f
			v.Rows = append(v.Rows, r)
		}
	}
	// Rows in the points' order, as the tables list them.
	order := map[string]int{}
	for i, p := range pts {
		order[p.Name] = i
	}
	slices.SortStableFunc(v.Rows, func(a, b HeldOut) int { return order[a.Point] - order[b.Point] })
	errs := make([]float64, len(v.Rows))
	for i, r := range v.Rows {
		errs[i] = math.Abs(r.Error)
	}
	v.MedianAbsError = Median(errs)
	return v, nil
}

// folds splits the points' indices into k folds, each of whole
// conditions (cond is Conditions' numbering, 0 to n-1): every k-th
// condition. With k at most n, no fold is empty.
func folds(cond []int, k int) [][]int {
	out := make([][]int, k)
	for i, c := range cond {
		out[c%k] = append(out[c%k], i)
	}
	return out
}

// InSample lists each figure of the points beside its prediction.
func InSample(pts []Point, preds []Prediction) []HeldOut {
	var rows []HeldOut
	for i, p := range pts {
		for _, fig := range figNames(p.Measured) {
			m := p.Measured[fig]
			row := HeldOut{Point: p.Name, Figure: fig, Measured: m, Predicted: preds[i][fig], Error: math.Inf(1)}
			if row.Predicted > 0 {
				row.Error = (row.Predicted - m) / m
			}
			rows = append(rows, row)
		}
	}
	return rows
}

// Median is the median of xs (0 for none).
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	return stats.Median(xs)
}
