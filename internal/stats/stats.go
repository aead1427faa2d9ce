// Package stats holds the small statistics shared by the gate, history and the
// baseline summary, so that each computes a figure the same way.
package stats

import "slices"

// Median returns the median of xs (the mean of the middle two when their
// number is even); xs must not be empty. xs is not modified.
func Median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
