package stats

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// PoissonRatesP is the two-sided p-value of "n1 events in w1 and n2 in w2
// come from one rate": given n1+n2, n1 is Binomial(n1+n2, w1/(w1+w2)),
// the conditional test of two Poisson rates. 1 when there are no events
// or a window is empty. Counts may be fractional (a minimum-effect test
// weighs a window), and are then taken as they are by the binomial.
func PoissonRatesP(n1, w1, n2, w2 float64) float64 {
	n := n1 + n2
	if n == 0 || w1 <= 0 || w2 <= 0 {
		return 1
	}
	b := distuv.Binomial{N: n, P: w1 / (w1 + w2)}
	return math.Min(1, 2*math.Min(b.CDF(n1), 1-b.CDF(n1-1)))
}

// TwoProportionsP is the two-sided p-value that k1/n1 and k2/n2 come from
// one proportion (the pooled z test; 1 when a side is empty, or when the
// pooled share is 0 or 1, where the two shares are equal).
func TwoProportionsP(k1, n1, k2, n2 float64) float64 {
	if n1 == 0 || n2 == 0 {
		return 1
	}
	pool := (k1 + k2) / (n1 + n2)
	se := math.Sqrt(pool * (1 - pool) * (1/n1 + 1/n2))
	if se == 0 {
		return 1
	}
	z := math.Abs(k1/n1-k2/n2) / se
	return math.Min(1, 2*distuv.UnitNormal.CDF(-z))
}

// LogShiftP is the one-sided p-value of a minimum-effect test between two
// groups of positive values (the versions either side of a change): the
// null is that the larger geometric mean is 1+shift times the smaller
// (a rise of shift, or a fall to 1/(1+shift)), the alternative that they
// differ by more. It is
// Student's two-sample t-test with a pooled variance on the values' logs,
// so a group of one borrows the other's spread; n1+n2-2 degrees of
// freedom. Where neither group varies, the difference is taken as exact.
// 1 when a group is empty, there are fewer than three values, or a value
// is not positive.
func LogShiftP(xs, ys []float64, shift float64) float64 {
	n1, n2 := float64(len(xs)), float64(len(ys))
	if n1 == 0 || n2 == 0 || n1+n2 < 3 {
		return 1
	}
	m1, v1, ok1 := logMoments(xs)
	m2, v2, ok2 := logMoments(ys)
	if !ok1 || !ok2 {
		return 1
	}
	gap := math.Abs(m2-m1) - math.Log1p(shift)
	df := n1 + n2 - 2
	se := math.Sqrt((v1 + v2) / df * (1/n1 + 1/n2))
	if se == 0 {
		if gap > 0 {
			return 0
		}
		return 1
	}
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Survival(gap / se)
}

// logMoments returns the mean of the logs of xs and the sum of their
// squared deviations from it; false when a value is not positive.
func logMoments(xs []float64) (mean, ss float64, ok bool) {
	for _, x := range xs {
		if !(x > 0) || math.IsInf(x, 0) {
			return 0, 0, false
		}
		mean += math.Log(x)
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		d := math.Log(x) - mean
		ss += d * d
	}
	return mean, ss, true
}
