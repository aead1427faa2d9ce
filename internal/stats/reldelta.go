package stats

import "math"

// RelDelta is the relative change of cand against the reference ref:
// (cand - ref) / |ref|, so that ref + d*|ref| == cand and the sign says
// which way cand moved (positive: cand is larger). Every relative
// percentage the product prints or stores goes through here, so that
// none divides by the wrong side. ok is false when ref is zero (or
// either figure is not finite): no relative change exists then.
func RelDelta(cand, ref float64) (d float64, ok bool) {
	if ref == 0 || math.IsNaN(ref) || math.IsInf(ref, 0) || math.IsNaN(cand) || math.IsInf(cand, 0) {
		return 0, false
	}
	return (cand - ref) / math.Abs(ref), true
}
