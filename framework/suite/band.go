package suite

import "github.com/benchci/benchci/framework/metric"

// Band is a tolerance: a change is within it when it is at most Rel
// (relative) or at most Abs (absolute, in the metric's unit) away. It is
// the catalogue's (metric.Band), so that compare judges bands without
// importing suites.
type Band = metric.Band

// ParseBand parses "10%", "20ms" or "10%|20ms" (metric.ParseBand).
func ParseBand(s string) (Band, error) { return metric.ParseBand(s) }
