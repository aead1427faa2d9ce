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
